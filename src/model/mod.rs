//! Timeline model (in progress).
