//! Analyses: everything computed from a [`crate::model::Trace`] for the tables, charts and findings.
//!
//! Each analysis is a pure function of the model returning a serde-serializable structure; the CLI
//! prints it and the viewer renders the same structure, so the numbers on the page and in the
//! terminal are one computation.

pub mod backend;
pub mod compiled;
pub mod critical;
pub mod derived;
pub mod diff;
pub mod digest;
pub mod findings;
pub mod flops;
pub mod idle;
pub mod launch;
pub mod links;
pub mod memory;
pub mod ranks;
pub mod slicing;
pub mod steps;
pub mod summary;
pub mod tables;
