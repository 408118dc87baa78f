//! Streaming parser (in progress).
