//! Access-pattern generators.
