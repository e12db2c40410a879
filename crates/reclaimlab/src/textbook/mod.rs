//! Textbook reference caches (LRU, CLOCK, FIFO) with libCacheSim semantics.
