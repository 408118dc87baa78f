//! Browser glue (in progress).
