//! Trace readers and writers.
