//! Workloads: scenario descriptions and access generators.

pub mod pattern;
