//! `sightline._sightline`: the core's parser and analyses for Python, as thin as the CLI. Every
//! answer is a `sightline::query` request's, the one the CLI asks; results cross over
//! as JSON text (reports) or Arrow buffers (tables, see `columns.rs`). Parsing and analysing run
//! with the GIL released. The Python package (`python/python/sightline/`) wraps this module.
//!
//! `python/` is a Cargo package of its own (`sightline-python`, a cdylib `_sightline`, PyO3 with
//! `abi3-py39`) that depends on the core by path without its `cloud` feature; it is not a
//! workspace member, so the core's `cargo test`, clippy and wasm32 builds never compile PyO3
//! (`scripts/test-python` lints, builds and tests it). Maturin builds the wheel from
//! `python/pyproject.toml` (or the root `pyproject.toml`, which points at the same crate).
//!
//! Files:
//! - this module: `open_path` reads a file through `sightline::native` as the CLI does; `Parser`
//!   feeds chunks from bytes or a file object; a `Trace` holds the model in a `Derived` store, as
//!   the CLI's commands and `sightline mcp` do, and each method asks it the `sightline::query`
//!   request a CLI command asks, returning the answer as JSON text or as a table.
//! - `compare.rs`: across traces, as the CLI: `ranks_json` finds and digests the files through
//!   `native::trace_files` and `native::job`; `diff_json` digests BASE (a `Trace`, a trace's bytes
//!   or file, or a digest's JSON: `query::across::digest_of_bytes`, `native::digest_of`), drops
//!   it, then NEW, and answers `query::Diff`; both return the CLI's `--json` object as text.
//!   `ranks_of_digests_json` compares digests a caller kept (`Trace.digest_json`, the rows of
//!   `sightline.ray`) as `ranks` does, with each rank against the median rank's
//!   (`analysis::ranks::versus_median`).
//! - `snapshot.rs`: `Snapshot`, a memory snapshot (`torch.cuda.memory._dump_snapshot`) read by
//!   the core, its methods the `sightline snapshot` command's JSON.
//! - `columns.rs`: a table's rows (serialized as for `--json`, fields in declared order through
//!   serde_json's `preserve_order`, enabled in this crate only) become Arrow buffers written
//!   straight into Python `bytes` (int64, float64, bool, utf8 with int32 offsets, validity
//!   bitmaps), which `pyarrow.Array.from_buffers` wraps without a copy; nested columns go over as
//!   JSON with their declared type. No arrow crate is compiled.
//! - `python/python/sightline/`: `__init__.py` (the API: `open`, `Trace`, `ranks`, `diff`,
//!   `rows`, exceptions, `show`, `serve`), `_tables.py` (buffers to a `pyarrow.Table`, the rest of
//!   the JSON object in the schema metadata), `_html.py` (`_repr_html_`, escaped; `show()`: the
//!   page's `dist/` files, shipped in `sightline/web/`, served with the trace from a 127.0.0.1
//!   server in the process), `ray.py` (digests as a Ray Dataset, cross-rank and run-over-run
//!   aggregation), `_serve.py` (`serve()`: the CLI's `sightline serve` as a child process with the
//!   package's page, since HTTP stays out of the core the package binds; a run's traces, each
//!   worker's latest span), `_web.py` (where the page's files are, for both), `_sightline.pyi`.
//! - `python/tests/` (pytest): every table, summary and report equals the CLI's JSON on every
//!   fixture; `ranks` and `diff` equal the CLI's (`test_across.py`); the truth files through
//!   Python; errors; the HTML; `show()`'s served files; Ray on a local cluster (a killed worker,
//!   a bad file).

mod columns;
mod compare;
mod snapshot;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde::Serialize;
use serde_json::Value;
use sightline::analysis::columns::{Column, Table};
use sightline::analysis::critical::whatif::Edit;
use sightline::analysis::critical::PathReport;
use sightline::analysis::derived::Derived;
use sightline::analysis::graphs::Capture;
use sightline::model::Trace as Model;
use sightline::native;
use sightline::parse::{ParseError, Parser as CoreParser};
use sightline::query::{self, Opened, Question};
use std::time::Instant;

create_exception!(
    _sightline,
    SightlineError,
    PyException,
    "Base class of the errors Sightline raises."
);
create_exception!(
    _sightline,
    NotATrace,
    SightlineError,
    "The input is not a PyTorch profiler trace; the message says what it is instead."
);

pub(crate) fn not_a_trace(source: &str, e: &ParseError) -> PyErr {
    NotATrace::new_err(format!("{source}: {e}"))
}

pub(crate) fn json_err(e: serde_json::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A parsed trace and what has been derived from it: each analysis computed on first use and
/// kept (`sightline::analysis::derived`), as the CLI's commands and `sightline mcp` keep them.
#[pyclass(frozen, module = "sightline._sightline", name = "Trace")]
pub(crate) struct PyTrace {
    pub(crate) derived: Derived,
    source: String,
    parse_seconds: f64,
}

impl PyTrace {
    fn new(model: Model, source: String, parse_seconds: f64) -> Self {
        PyTrace {
            derived: Derived::new(model),
            source,
            parse_seconds,
        }
    }

    pub(crate) fn model(&self) -> &Model {
        self.derived.trace()
    }

    /// The trace as the questions of `sightline::query` take it.
    fn opened(&self) -> Opened<'_> {
        Opened {
            derived: &self.derived,
            file: &self.source,
            parse_seconds: self.parse_seconds,
        }
    }

    /// The answer to `q`, asked with the GIL released; its error as `ValueError`.
    fn ask<'a, Q: Question<'a> + Sync>(&'a self, py: Python<'_>, q: &Q) -> PyResult<Q::Answer>
    where
        Q::Answer: Send,
    {
        py.allow_threads(|| q.answer(&self.opened()))
            .map_err(PyValueError::new_err)
    }
}

/// Whether `compat` (`None` or `'hta'`) asks for HTA's counting.
fn hta(compat: Option<&str>) -> PyResult<bool> {
    match compat {
        None => Ok(false),
        Some("hta") => Ok(true),
        Some(other) => Err(PyValueError::new_err(format!(
            "compat takes 'hta' or None, not '{other}'"
        ))),
    }
}

/// `(rows, columns, meta)` of a table whose rows declare their columns
/// (`query::tables::DECLARED`, by the command's name): the array under its `rows` member in
/// `value` as the declared columns and types, whatever the rows hold; the rest as JSON.
fn declared_table<'py, T: Serialize>(
    py: Python<'py>,
    value: &T,
    name: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    declared_rows(
        py,
        value,
        query::tables::declared(name).expect("a declared table"),
    )
}

/// [`declared_table`] of the table `t`, one of a command's several (`idle`'s gaps, `report`'s
/// findings and recording notes).
fn declared_rows<'py, T: Serialize>(
    py: Python<'py>,
    value: &T,
    t: &Table,
) -> PyResult<Bound<'py, PyTuple>> {
    // A column whose values are the rows of another of the command's tables (a compiled graph's
    // `kernels`, declared as JSON since its rows' members vary) goes over as a list of that
    // table's columns, each member absent from a row taken as null.
    let nested = |c: &Column| {
        query::tables::tables_of(t.name)
            .find(|n| {
                n.rows
                    .strip_prefix(t.rows)
                    .and_then(|r| r.strip_prefix("[]."))
                    == Some(c.key)
            })
            .map(|n| n.columns)
    };
    split(py, value, t.rows, |py, list| {
        columns::declared(py, list, t.shown(&[]), nested)
    })
}

fn split<'py, T: Serialize>(
    py: Python<'py>,
    value: &T,
    rows: &str,
    cut: impl FnOnce(Python<'py>, &[Value]) -> PyResult<Bound<'py, pyo3::types::PyList>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut v = serde_json::to_value(value).map_err(json_err)?;
    let list = match v.as_object_mut().and_then(|o| o.shift_remove(rows)) {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let cols = cut(py, &list)?;
    let meta = serde_json::to_string(&v).map_err(json_err)?;
    (list.len(), cols, meta).into_pyobject(py)
}

#[pymethods]
impl PyTrace {
    /// The path it was read from, or a description of the bytes or file object.
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// Seconds spent reading and parsing.
    #[getter]
    fn parse_seconds(&self) -> f64 {
        self.parse_seconds
    }

    /// `sightline summary --json`.
    fn summary_json(&self, py: Python<'_>) -> PyResult<String> {
        serde_json::to_string(&self.ask(py, &query::Summary {})?).map_err(json_err)
    }

    /// `sightline digest`'s JSON: the digest `diff` and `ranks` read. `file` names the trace in
    /// it (the rank is read from that name when the trace has none); by default its source.
    #[pyo3(signature = (file = None))]
    fn digest_json(&self, py: Python<'_>, file: Option<String>) -> PyResult<String> {
        let file = file.unwrap_or_else(|| self.source.clone());
        let opened = Opened {
            file: &file,
            ..self.opened()
        };
        let digest = py
            .allow_threads(|| query::Digest {}.answer(&opened))
            .map_err(PyValueError::new_err)?;
        serde_json::to_string(&digest).map_err(json_err)
    }

    /// `sightline ops --json [--by-shape]`.
    fn ops<'py>(&self, py: Python<'py>, by_shape: bool) -> PyResult<Bound<'py, PyTuple>> {
        let q = query::Ops {
            by_shape,
            ..query::Ops::default()
        };
        declared_table(py, &self.ask(py, &q)?, "ops")
    }

    /// `sightline kernels --json`.
    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        declared_table(py, &self.ask(py, &query::Kernels::default())?, "kernels")
    }

    /// `sightline labels --json`.
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        declared_table(py, &self.ask(py, &query::Labels {})?, "labels")
    }

    /// `sightline modules --json`.
    fn modules<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        declared_table(py, &self.ask(py, &query::Modules {})?, "modules")
    }

    /// `sightline graphs --json` (with the capture `use_capture` gave, if any, its captured
    /// operators in the metadata), its `graphs` as the table.
    fn graphs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        declared_table(py, &self.ask(py, &query::Graphs::default())?, "graphs")
    }

    /// Applies `capture`, the trace recorded while this trace's CUDA/HIP graphs were captured
    /// (`--capture FILE`): `ops`, `kernels` and `graphs` then name the operator that issued each
    /// replayed op. Returns how it paired, as `graphs --json`'s `capture`. `ValueError` when it
    /// recorded no capture, names none of the replayed ops, or this trace has one already.
    fn use_capture(&self, py: Python<'_>, capture: &PyTrace) -> PyResult<String> {
        py.allow_threads(|| {
            let c = Capture::read(capture.model(), capture.derived.links());
            if c.captures.is_empty() {
                return Err(format!(
                    "{}: no graph capture in this trace (no StreamBeginCapture and \
                     StreamEndCapture calls)",
                    capture.source
                ));
            }
            let a = self.derived.set_capture(c)?;
            if a.matched.attributed_ops == 0 {
                return Err(format!(
                    "{}: the capture names none of the replayed ops",
                    capture.source
                ));
            }
            serde_json::to_string(&a.matched).map_err(|e| e.to_string())
        })
        .map_err(PyValueError::new_err)
    }

    /// `sightline compiled --json`, its `graphs` as the table.
    fn compiled<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        declared_table(py, self.ask(py, &query::Compiled {})?, "compiled")
    }

    /// `sightline steps --json`, its `steps` as the table.
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        declared_table(py, self.ask(py, &query::Steps {})?, "steps")
    }

    /// `sightline idle --json [--compat hta] [--top TOP]`, the table under `rows` (`idle`: HTA's
    /// per-stream breakdown, or `gaps`).
    #[pyo3(signature = (compat, top, rows))]
    fn idle<'py>(
        &self,
        py: Python<'py>,
        compat: Option<&str>,
        top: Option<usize>,
        rows: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let q = query::Idle {
            hta: hta(compat)?,
            top,
        };
        let report = self.ask(py, &q)?;
        let t = query::tables::declared_at("idle", rows)
            .ok_or_else(|| PyValueError::new_err(format!("idle has no table `{rows}`")))?;
        declared_rows(py, &*report, t)
    }

    /// The findings of `sightline report` (exact idle, as the CLI's default), with what each fix
    /// saves and in that order: `recording` false for those that cost time, true for the notes
    /// on how the trace was recorded (`report --json`'s `findings` and `recording`).
    fn findings<'py>(&self, py: Python<'py>, recording: bool) -> PyResult<Bound<'py, PyTuple>> {
        let io = query::Idle::default().options();
        let judged = py.allow_threads(|| self.derived.findings(&io));
        let rows = if recording { "recording" } else { "findings" };
        let t = query::tables::declared_at("report", rows).expect("the findings' declared tables");
        declared_rows(py, &*judged, t)
    }

    /// `sightline path FILE --json [--step S] [--annotation A --instance K] [--compat hta]
    /// [--what-if E]...`.
    #[pyo3(signature = (step, annotation, instance, edits, compat))]
    fn path_json(
        &self,
        py: Python<'_>,
        step: Option<String>,
        annotation: Option<String>,
        instance: usize,
        edits: Vec<String>,
        compat: Option<String>,
    ) -> PyResult<String> {
        let q = query::Path {
            instance: annotation.is_some().then_some(instance),
            step,
            annotation,
            hta: hta(compat.as_deref())?,
            what_if: parse_edits(&edits)?,
        };
        path_report_json(py.allow_threads(|| q.answer(&self.opened())))
    }

    /// `sightline report --json [--compat hta] [--top N]`.
    #[pyo3(signature = (compat, top))]
    fn report_json(
        &self,
        py: Python<'_>,
        compat: Option<&str>,
        top: Option<usize>,
    ) -> PyResult<String> {
        let q = query::Report {
            hta: hta(compat)?,
            top,
        };
        let t = Instant::now();
        let mut report = self.ask(py, &q)?;
        report.analysis_seconds = t.elapsed().as_secs_f64();
        report.top_operators.rows.truncate(q.operators());
        serde_json::to_string(&report).map_err(json_err)
    }
}

/// A push parser for file objects and buffers: `feed` chunks, then `finish`.
#[pyclass(module = "sightline._sightline")]
struct Parser {
    inner: Option<CoreParser>,
    started: Option<Instant>,
    seconds: f64,
}

#[pymethods]
impl Parser {
    #[new]
    fn new() -> Self {
        Parser {
            inner: Some(CoreParser::new()),
            started: None,
            seconds: 0.0,
        }
    }

    /// Parses the next chunk of the file (any size; gzip is detected from the first bytes).
    fn feed(&mut self, py: Python<'_>, chunk: &[u8]) -> PyResult<()> {
        let started = Instant::now();
        let p = self
            .inner
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("this parser has finished"))?;
        py.allow_threads(|| p.feed(chunk));
        self.seconds += started.elapsed().as_secs_f64();
        self.started.get_or_insert(started);
        Ok(())
    }

    /// The trace, or `NotATrace` with the parser's message prefixed by `source`.
    fn finish(&mut self, py: Python<'_>, source: String) -> PyResult<PyTrace> {
        let p = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("this parser has finished"))?;
        let started = Instant::now();
        let model = py
            .allow_threads(|| p.finish())
            .map_err(|e| not_a_trace(&source, &e))?;
        let seconds = self.seconds + started.elapsed().as_secs_f64();
        Ok(PyTrace::new(model, source, seconds))
    }
}

fn parse_edits(edits: &[String]) -> PyResult<Vec<Edit>> {
    edits
        .iter()
        .map(|e| Edit::parse(e))
        .collect::<Result<Vec<_>, _>>()
        .map_err(PyValueError::new_err)
}

/// `sightline path FILE... --json [--step S] [--what-if E]...` for the ranks of one job: their
/// graphs joined at matched collectives.
#[pyfunction]
#[pyo3(signature = (traces, step, edits))]
fn job_path_json(
    py: Python<'_>,
    traces: Vec<PyRef<'_, PyTrace>>,
    step: Option<String>,
    edits: Vec<String>,
) -> PyResult<String> {
    let q = query::Path {
        step,
        what_if: parse_edits(&edits)?,
        ..query::Path::default()
    };
    let opened: Vec<Opened<'_>> = traces.iter().map(|t| t.opened()).collect();
    path_report_json(py.allow_threads(|| q.answer_all(&opened)))
}

/// A path report as JSON; its error (an edit that matched nothing among them) as `ValueError`.
fn path_report_json(report: Result<PathReport, String>) -> PyResult<String> {
    let report = report.map_err(PyValueError::new_err)?;
    serde_json::to_string(&report).map_err(json_err)
}

/// Reads a file as the CLI does: 1 MiB reads, one thread per core (up to 8) for a large plain-JSON
/// file, the file never held whole.
#[pyfunction]
fn open_path(py: Python<'_>, path: String) -> PyResult<PyTrace> {
    let start = Instant::now();
    let parsed = py
        .allow_threads(|| native::read_trace(std::path::Path::new(&path), native::parse_threads()));
    let model = parsed
        .map_err(|e| os_error(py, e, &path))?
        .map_err(|e| not_a_trace(&path, &e))?;
    Ok(PyTrace::new(model, path, start.elapsed().as_secs_f64()))
}

/// The traces a run folder stands for, by the rule `sightline serve` lists runs by
/// (`analysis::ranks::runs::run_order`): of `names` (the folder's files), the indices of each
/// worker's latest span, by rank, workers without one last. The rank is read from the name
/// (`rank3`, `worker3`; no file is read here); names that are not `*.json[.gz]` are skipped.
#[pyfunction]
fn run_latest(names: Vec<String>) -> Vec<usize> {
    use sightline::analysis::ranks::{digest::rank_in_file_name, runs};
    let traces: Vec<usize> = (0..names.len())
        .filter(|&k| runs::is_trace_file_name(&names[k]))
        .collect();
    let files: Vec<runs::RunFile> = traces
        .iter()
        .map(|&k| runs::RunFile {
            file: &names[k],
            rank: rank_in_file_name(&names[k]),
        })
        .collect();
    let order = runs::run_order(&files);
    order.latest.iter().map(|&k| traces[k]).collect()
}

/// An `OSError` of the class `open` would raise, with errno, message and path as it gives them.
pub(crate) fn os_error(py: Python<'_>, e: std::io::Error, path: &str) -> PyErr {
    let errno = e.raw_os_error();
    let err = PyErr::from(e);
    let Some(n) = errno else { return err };
    let built = py
        .import("os")
        .and_then(|os| os.call_method1("strerror", (n,)))
        .and_then(|msg| err.get_type(py).call1((n, msg, path)));
    match built {
        Ok(e) => PyErr::from_value(e),
        Err(_) => err,
    }
}

#[pymodule]
fn _sightline(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SightlineError", m.py().get_type::<SightlineError>())?;
    m.add("NotATrace", m.py().get_type::<NotATrace>())?;
    m.add("NotASnapshot", m.py().get_type::<snapshot::NotASnapshot>())?;
    m.add_class::<PyTrace>()?;
    m.add_class::<snapshot::PySnapshot>()?;
    m.add_class::<snapshot::SnapshotReader>()?;
    m.add_function(wrap_pyfunction!(snapshot::open_snapshot_path, m)?)?;
    m.add_class::<Parser>()?;
    m.add_function(wrap_pyfunction!(open_path, m)?)?;
    m.add_function(wrap_pyfunction!(job_path_json, m)?)?;
    m.add_function(wrap_pyfunction!(compare::ranks_json, m)?)?;
    m.add_function(wrap_pyfunction!(compare::ranks_of_digests_json, m)?)?;
    m.add_function(wrap_pyfunction!(compare::diff_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_latest, m)?)?;
    Ok(())
}
