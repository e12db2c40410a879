//! reclaimlab: a faithful user-space model of Linux page reclaim.
//!
//! Layout: [`machine`] (memory, page tables, page cache, swap, devices, memcgs, reclaim core),
//! [`policy`] (the reclaim policies behind one interface), [`workload`] (scenarios and access
//! generators), [`trace`] (trace readers and writers), [`textbook`] (reference caches with
//! libCacheSim semantics), [`metrics`] (the result schema), [`sim`] (the discrete-event engine), [`sched`] (the CPUs
//! the engine's tasks and kernel threads share).

pub mod access;
pub mod agents;
pub mod behaviour;
pub mod bisect;
pub mod consts;
pub mod event_queue;
pub mod fuzzing;
pub mod hash;
pub mod host;
pub mod machine;
pub mod metrics;
pub mod mrc;
pub mod options;
pub mod policy;
pub mod sched;
pub mod sim;
pub mod stats;
pub mod textbook;
pub mod timeseries;
pub mod trace;
pub mod workload;
