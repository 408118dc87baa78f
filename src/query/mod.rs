//! The questions a user can ask of a trace, each a request type answered from the trace's
//! [`Derived`] store as a serde structure: the layer every front end calls. The CLI maps its flags
//! onto a request and prints the answer (as text, or as JSON for `--json`); `sightline mcp` takes
//! the request itself as a tool's parameters (its JSON Schema, with the `schema` feature, is the
//! tool's input schema); the Python package fills a request from its arguments and returns the
//! answer; the page's worker asks the same questions of its session's store. A front end reads
//! files and keeps traces; it decides nothing that an answer holds.
//!
//! Requests deserialize from JSON with every field optional (absent is the CLI's default), and
//! take the texts the CLI takes where a field is an expression (`what_if` edits, `fail_if`
//! conditions, a `sort` column). Answers are whole: a front end that shows a page of rows (the
//! CLI's `--top`, MCP's `top` and `offset`) cuts the list itself.
//!
//! Adding a question is a request type with its [`Question`] impl here, and a line in each front
//! end that offers it. [`Step`] was added that way: one step's span, breakdown and what bounds
//! it, from the steps and the critical path the store keeps.
//!
//! Files: [`trace`] (one trace's questions: summary, steps, idle, memory, compiled, digest and
//! one step), [`tables`] (the tables: operators, kernels, labels, modules, FLOPs, graphs; and
//! every table that declares its columns, those of other commands too),
//! [`report`] (everything at once), [`path`] (the critical path and what-if, one trace or the
//! ranks of a job) and [`across`] (two traces compared, the ranks of a job: from digests).

pub mod across;
pub mod path;
pub mod report;
pub mod tables;
pub mod trace;

pub use across::{Diff, DiffAnswer, Ranks};
pub use path::Path;
pub use report::{Report, ReportAnswer};
pub use tables::{Compiled, Flops, Graphs, Kernels, Labels, Modules, Ops};
pub use trace::{Digest, Idle, Memory, MemoryAnswer, Step, StepAnswer, Steps, Summary};

use crate::analysis::derived::Derived;
use serde::Deserialize;

/// A trace as a front end opened it: its store, the file's name as the user gave it (reports
/// quote it) and how long reading it took (the front end's clock: the core has none).
#[derive(Clone, Copy)]
pub struct Opened<'a> {
    pub derived: &'a Derived,
    pub file: &'a str,
    pub parse_seconds: f64,
}

impl<'a> Opened<'a> {
    /// A store asked about without a file (the page's session, a test).
    pub fn of(derived: &'a Derived) -> Opened<'a> {
        Opened {
            derived,
            file: "",
            parse_seconds: 0.0,
        }
    }
}

/// A question about one trace and how it is answered. `'a` is the store's lifetime: an answer may
/// lend what the store keeps.
pub trait Question<'a> {
    type Answer: serde::Serialize + 'a;
    /// The answer; `Err` with the message a user reads (an edit that matches nothing, a step that
    /// is not there).
    fn answer(&self, t: &Opened<'a>) -> Result<Self::Answer, String>;
}

/// A value the CLI takes as text (`--what-if`, `--fail-if`, `--sort`, `--align`), taken as the
/// same text in a request.
pub trait FromText: Sized {
    fn from_text(text: &str) -> Result<Self, String>;
}

impl FromText for crate::analysis::critical::whatif::Edit {
    fn from_text(text: &str) -> Result<Self, String> {
        Self::parse(text)
    }
}

impl FromText for crate::analysis::diff::gate::Condition {
    fn from_text(text: &str) -> Result<Self, String> {
        Self::parse(text)
    }
}

impl FromText for crate::analysis::tables::OpColumn {
    fn from_text(text: &str) -> Result<Self, String> {
        Self::parse(text).ok_or_else(|| {
            let names: Vec<&str> = Self::names().collect();
            format!("unknown column '{text}'; one of: {}", names.join(", "))
        })
    }
}

/// Deserializes an optional text through [`FromText`].
fn text_opt<'de, D: serde::Deserializer<'de>, T: FromText>(d: D) -> Result<Option<T>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|t| T::from_text(&t).map_err(serde::de::Error::custom))
        .transpose()
}

/// Deserializes a list of texts through [`FromText`]; `null` is none.
fn text_list<'de, D: serde::Deserializer<'de>, T: FromText>(d: D) -> Result<Vec<T>, D::Error> {
    Option::<Vec<String>>::deserialize(d)?
        .unwrap_or_default()
        .iter()
        .map(|t| T::from_text(t).map_err(serde::de::Error::custom))
        .collect()
}

/// `null` read as `false`, as an absent field is.
fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_takes_the_clis_texts_and_defaults_what_is_absent() {
        let p: Path = serde_json::from_str(r#"{"what_if": ["kernels*0.5"], "hta": null}"#).unwrap();
        assert_eq!(p.what_if.len(), 1);
        assert!(!p.hta);
        let o: Ops = serde_json::from_str(r#"{"sort": "self_cpu_time_total"}"#).unwrap();
        assert!(o.sort.is_some() && !o.by_shape);
        let e = serde_json::from_str::<Ops>(r#"{"sort": "nope"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown column 'nope'"), "{e}");
        let d: Diff = serde_json::from_str("{}").unwrap();
        assert!(!d.total && d.fail_if.is_empty());
    }
}
