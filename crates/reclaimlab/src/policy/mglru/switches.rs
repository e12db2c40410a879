//! The switch names of policy strings (`mglru:7.1+restructure-reclaim-loop`, `--with`,
//! `--without`) are behaviour names: a switch is any row of the behaviour table
//! ([`crate::behaviour`]), which holds the 2026 series (one row per patch), the experimental
//! MGLRU-FG promotion, the MGLRU changes beside the series in Debian's 7.2.13, and every
//! earlier difference between the modelled kernels.

pub use crate::behaviour::{Behaviour as Switch, Behaviours as Switches};
