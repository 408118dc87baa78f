//! Across traces: `sightline ranks` (many ranks of one job) and `sightline diff` (two runs), as the
//! CLI computes them (`src/cli/ranks.rs`, `src/cli/diff.rs`): the same core functions, the files
//! read here at the edge, results as the CLI's `--json` text.

use crate::{not_a_trace, os_error, NotATrace, PyTrace};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sightline::analysis::diff::gate::Condition;
use sightline::analysis::digest::Digest;
use sightline::analysis::ranks::{self, Align};
use sightline::native;
use sightline::query::{self, across::digest_of_bytes};
use std::path::Path;

/// `sightline ranks PATH... --json [--align ALIGN]`. Files that are not traces are listed in
/// `unreadable_files`; `NotATrace` when none is a trace.
#[pyfunction]
#[pyo3(signature = (paths, align, whole_trace = false))]
pub fn ranks_json(
    py: Python<'_>,
    paths: Vec<String>,
    align: &str,
    whole_trace: bool,
) -> PyResult<String> {
    let q = ranks_query(align, whole_trace)?;
    if paths.is_empty() {
        return Err(PyValueError::new_err("no paths (trace files or folders)"));
    }
    let mut files = Vec::new();
    for p in &paths {
        native::trace_files(Path::new(p), &mut files)
            .map_err(|(at, e)| os_error(py, e, &at.display().to_string()))?;
    }
    let report = py
        .allow_threads(|| native::job(files, q.align(), q.scope()))
        .map_err(NotATrace::new_err)?;
    serde_json::to_string(&report).map_err(crate::json_err)
}

/// `sightline ranks --json` of digests already made (`Trace.digest_json`'s), each named by the
/// same entry of `files` in the report (in place of the name it holds), as
/// `{"ranks": report, "versus_median": [...]}`: the report and each of its ranks' step and idle
/// time against the median rank's, in the report's rank order.
#[pyfunction]
#[pyo3(signature = (digests, files, align = "auto", whole_trace = false))]
pub fn ranks_of_digests_json(
    py: Python<'_>,
    digests: Vec<String>,
    files: Vec<String>,
    align: &str,
    whole_trace: bool,
) -> PyResult<String> {
    let q = ranks_query(align, whole_trace)?;
    if digests.len() != files.len() {
        return Err(PyValueError::new_err("one file name per digest"));
    }
    let out = py.allow_threads(|| {
        let mut all = Vec::with_capacity(digests.len());
        for (text, file) in digests.iter().zip(files) {
            let mut d: Digest = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
            d.distributed.file = file;
            all.push(d);
        }
        let report = ranks::analyze_with(&all, q.align(), q.scope());
        let versus = ranks::versus_median(&report.ranks);
        serde_json::to_string(&serde_json::json!({ "ranks": report, "versus_median": versus }))
            .map_err(|e| e.to_string())
    });
    out.map_err(PyValueError::new_err)
}

/// The ranks question both entry points ask, from Python's arguments.
fn ranks_query(align: &str, whole_trace: bool) -> PyResult<query::Ranks> {
    let align = Align::parse(align).ok_or_else(|| {
        PyValueError::new_err(format!(
            "align takes 'auto', 'none' or 'collectives', not '{align}'"
        ))
    })?;
    Ok(query::Ranks {
        align: Some(align),
        whole_trace,
    })
}

/// The digest of a `Trace`, of a trace's bytes or file, or one that `sightline digest` wrote (as
/// bytes or a file), as `sightline diff` reads BASE and NEW.
fn digest_of(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Digest> {
    if let Ok(t) = source.downcast::<PyTrace>() {
        let t = t.get();
        return Ok(py.allow_threads(|| t.derived.digest("")));
    }
    if let Ok(b) = source.downcast::<PyBytes>() {
        let data = b.as_bytes();
        return py
            .allow_threads(|| digest_of_bytes(data))
            .map_err(|e| not_a_trace("<bytes>", &e));
    }
    let path: String = source.extract()?;
    py.allow_threads(|| native::digest_of(Path::new(&path)))
        .map_err(|e| os_error(py, e, &path))?
        .map_err(|e| not_a_trace(&path, &e))
}

/// `sightline diff BASE NEW --json [--total] [--by-shape] [--top N] [--fail-if EXPR]...`, with
/// `base_file` and `new_file` as the names it shows. BASE is digested (and its trace dropped)
/// before NEW is read.
#[pyfunction]
#[pyo3(signature = (base, new, total, by_shape, top, fail_if, base_file, new_file))]
#[allow(clippy::too_many_arguments)]
pub fn diff_json(
    py: Python<'_>,
    base: &Bound<'_, PyAny>,
    new: &Bound<'_, PyAny>,
    total: bool,
    by_shape: bool,
    top: Option<usize>,
    fail_if: Vec<String>,
    base_file: String,
    new_file: String,
) -> PyResult<String> {
    let q = query::Diff {
        total,
        by_shape,
        fail_if: fail_if
            .iter()
            .map(|c| Condition::parse(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(PyValueError::new_err)?,
    };
    let base = digest_of(py, base)?;
    let new = digest_of(py, new)?;
    let mut out = py
        .allow_threads(|| q.answer(&base, &new, &base_file, &new_file))
        .map_err(PyValueError::new_err)?;
    if let Some(n) = top {
        out.keep_top(n);
    }
    serde_json::to_string(&out).map_err(crate::json_err)
}
