//! `sightline.Snapshot`: a memory snapshot read by the core (`sightline::snapshot`), as thin as
//! `sightline snapshot`: `open_snapshot_path` reads through `native::read_snapshot` as the CLI
//! does, `SnapshotReader` takes chunks from bytes or a file object, and each method returns what
//! the CLI's `--json` prints, computed by the same `sightline::snapshot::analysis` functions with
//! the GIL released.

use crate::{json_err, os_error, SightlineError};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sightline::native;
use sightline::snapshot::analysis::{self, Folded};
use sightline::snapshot::{Reader, Snapshot, SnapshotError};
use std::time::Instant;

create_exception!(
    _sightline,
    NotASnapshot,
    SightlineError,
    "The input is not a memory snapshot, or is a pickle that names code and is refused; the \
     message says which."
);

fn not_a_snapshot(source: &str, e: &SnapshotError) -> PyErr {
    NotASnapshot::new_err(format!("{source}: {e}"))
}

/// A read snapshot.
#[pyclass(frozen, module = "sightline._sightline", name = "Snapshot")]
pub(crate) struct PySnapshot {
    snap: Snapshot,
    source: String,
    read_seconds: f64,
}

#[pymethods]
impl PySnapshot {
    /// The path it was read from, or a description of the bytes or file object.
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// Seconds spent reading.
    #[getter]
    fn read_seconds(&self) -> f64 {
        self.read_seconds
    }

    /// `sightline snapshot FILE --json --top N`.
    fn report_json(&self, py: Python<'_>, top: usize) -> PyResult<String> {
        let r = py.allow_threads(|| analysis::report(&self.snap, top));
        serde_json::to_string(&r).map_err(json_err)
    }

    /// `sightline snapshot FILE NEW --json --top N`, this snapshot the base.
    fn diff_json(
        &self,
        py: Python<'_>,
        new: PyRef<'_, PySnapshot>,
        top: usize,
    ) -> PyResult<String> {
        let new = &new.snap;
        let d = py.allow_threads(|| analysis::diff(&self.snap, new, top));
        serde_json::to_string(&d).map_err(json_err)
    }

    /// The folded stacks `_memory_viz.segments` (`by="segments"`) or `memory` (`by="memory"`)
    /// hand to `format_flamegraph`.
    fn folded(&self, py: Python<'_>, by: &str) -> PyResult<String> {
        let by = match by {
            "segments" => Folded::Segments,
            "memory" => Folded::Memory,
            other => {
                return Err(PyValueError::new_err(format!(
                    "by takes 'segments' or 'memory', not '{other}'"
                )))
            }
        };
        Ok(py.allow_threads(|| analysis::folded(&self.snap, by)))
    }

    /// The live bytes of a device before its first trace entry and after each.
    fn live_bytes(&self, py: Python<'_>, device: usize) -> PyResult<Vec<u64>> {
        if device >= self.snap.devices.len() {
            return Err(PyValueError::new_err(format!(
                "device {device} has no trace (the snapshot has {})",
                self.snap.devices.len()
            )));
        }
        Ok(py.allow_threads(|| analysis::live_bytes(&self.snap, device)))
    }
}

/// A push reader for file objects and buffers: `feed` chunks, then `finish`.
#[pyclass(module = "sightline._sightline")]
pub(crate) struct SnapshotReader {
    inner: Option<Reader>,
    seconds: f64,
}

#[pymethods]
impl SnapshotReader {
    #[new]
    fn new() -> Self {
        SnapshotReader {
            inner: Some(Reader::new()),
            seconds: 0.0,
        }
    }

    /// Reads the next chunk (any size; gzip is detected from the first bytes).
    fn feed(&mut self, py: Python<'_>, chunk: &[u8]) -> PyResult<()> {
        let started = Instant::now();
        let r = self
            .inner
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("this reader has finished"))?;
        py.allow_threads(|| r.feed(chunk));
        self.seconds += started.elapsed().as_secs_f64();
        Ok(())
    }

    /// The snapshot, or `NotASnapshot` with the reader's message prefixed by `source`.
    fn finish(&mut self, py: Python<'_>, source: String) -> PyResult<PySnapshot> {
        let r = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("this reader has finished"))?;
        let started = Instant::now();
        let snap = py
            .allow_threads(|| r.finish())
            .map_err(|e| not_a_snapshot(&source, &e))?;
        Ok(PySnapshot {
            snap,
            source,
            read_seconds: self.seconds + started.elapsed().as_secs_f64(),
        })
    }
}

/// Reads a snapshot file as the CLI does, in 1 MiB reads.
#[pyfunction]
pub(crate) fn open_snapshot_path(py: Python<'_>, path: String) -> PyResult<PySnapshot> {
    let start = Instant::now();
    let read = py.allow_threads(|| native::read_snapshot(std::path::Path::new(&path)));
    let snap = read
        .map_err(|e| os_error(py, e, &path))?
        .map_err(|e| not_a_snapshot(&path, &e))?;
    Ok(PySnapshot {
        snap,
        source: path,
        read_seconds: start.elapsed().as_secs_f64(),
    })
}
