//! One owner for what is derived from a loaded trace: each analysis is computed once, on first
//! use, and kept, so a command, a tool call or a panel that needs the links, the steps or the
//! findings asks here instead of building them again.
//!
//! Each getter takes what it depends on from the same store (the findings read its links, steps,
//! idle time and FLOPs; their savings its critical-path graph). The analyses that run long have a
//! sliced form too (`*_sliced`, pausing as a [`Slicer`] says, for the page, which draws frames
//! between the slices); the one-go getter runs the same builder without pauses, so both fill the
//! same cell and there is one code path per analysis. Results that depend on options (idle
//! time's mode and gap count) are kept per option value.
//!
//! The store is `Sync` when its trace is: a server answering several questions about one trace
//! shares it between threads. A thread asking a one-go getter of a single result (the links, the
//! steps, the forest, the FLOPs, the graphs, the critical path) for one being computed waits for
//! it, so `report` can lay its analyses out on two threads without building any twice. The
//! sliced getters and the results kept per option value do not wait: two threads asking at once
//! may both compute one, and the first one kept is the one every later call gets.

use super::compiled::{self, Compiled};
use super::critical::savings::{self, Assessed};
use super::critical::slack::SliceTimes;
use super::critical::whatif::Edit;
use super::critical::{Analysis, PathOptions, PathReport};
use super::digest::{Analyses, Digest};
use super::flops::Flops;
use super::graphs::{Attribution, Capture, GraphReport};
use super::idle::{self, IdleOptions, IdleReport};
use super::links::Links;
use super::memory::Memory;
use super::slicing::{block_on, Slicer};
use super::steps::{self, StepsReport};
use super::tables::{self as tables, Forest, KernelTable, ModuleTable, OpTable};
use super::{findings, summary};
use crate::model::Trace;
use std::borrow::Borrow;
use std::sync::{Arc, Mutex, OnceLock};

/// The findings of a trace with their savings: what costs time, then the notes on how it was
/// recorded (`findings` and `recording` of `sightline report --json`).
#[derive(serde::Serialize)]
pub struct Judged {
    pub findings: Vec<Assessed>,
    pub recording: Vec<Assessed>,
}

/// A trace and everything computed from it so far. `T` holds the trace: owned (`Trace`, as the
/// CLI and the Python package keep it), lent (`&Trace`) or shared (`Rc<Trace>`).
pub struct Derived<T = Trace> {
    trace: T,
    links: OnceLock<Links>,
    steps: OnceLock<StepsReport>,
    forest: OnceLock<Forest>,
    flops: OnceLock<Flops>,
    graphs: OnceLock<GraphReport>,
    /// The capture of the graphs it replays, once given ([`Derived::set_capture`]).
    capture: OnceLock<Attribution>,
    compiled: OnceLock<Compiled>,
    memory: OnceLock<Memory>,
    /// The memory curves alone, while the full memory (allocations paired) is not needed.
    curves: OnceLock<Memory>,
    /// The critical-path graph and the steps' windows for the default path options (the
    /// findings' savings and `--path` columns); `Err` says why there is none.
    critical: OnceLock<Result<Analysis, String>>,
    slice_times: OnceLock<Result<SliceTimes, String>>,
    idle: Keyed<IdleKey, IdleReport>,
    found: Keyed<IdleKey, findings::Found>,
    judged: Keyed<IdleKey, Judged>,
}

/// The idle options as a key: the gap count and the mode.
type IdleKey = (bool, usize);

fn idle_key(opts: &IdleOptions) -> IdleKey {
    (opts.mode == idle::Mode::Hta, opts.max_gaps)
}

impl<T: Borrow<Trace>> Derived<T> {
    pub fn new(trace: T) -> Derived<T> {
        Derived {
            trace,
            links: OnceLock::new(),
            steps: OnceLock::new(),
            forest: OnceLock::new(),
            flops: OnceLock::new(),
            graphs: OnceLock::new(),
            capture: OnceLock::new(),
            compiled: OnceLock::new(),
            memory: OnceLock::new(),
            curves: OnceLock::new(),
            critical: OnceLock::new(),
            slice_times: OnceLock::new(),
            idle: Keyed::default(),
            found: Keyed::default(),
            judged: Keyed::default(),
        }
    }

    pub fn trace(&self) -> &Trace {
        self.trace.borrow()
    }

    pub fn summary(&self) -> summary::Summary {
        summary::summarize(self.trace())
    }

    pub fn links(&self) -> &Links {
        self.links
            .get_or_init(|| block_on(Links::build_sliced(self.trace(), &mut Slicer::never())))
    }

    pub async fn links_sliced(&self, y: &mut Slicer) -> &Links {
        if let Some(v) = self.links.get() {
            return v;
        }
        let v = Links::build_sliced(self.trace(), y).await;
        self.links.get_or_init(|| v)
    }

    pub fn steps(&self) -> &StepsReport {
        self.steps.get_or_init(|| {
            block_on(steps::analyze_sliced(
                self.trace(),
                self.links(),
                &mut Slicer::never(),
            ))
        })
    }

    pub async fn steps_sliced(&self, y: &mut Slicer) -> &StepsReport {
        if let Some(v) = self.steps.get() {
            return v;
        }
        let links = self.links_sliced(y).await;
        let v = steps::analyze_sliced(self.trace(), links, y).await;
        self.steps.get_or_init(|| v)
    }

    /// The operator trees every table reads.
    pub fn forest(&self) -> &Forest {
        self.forest
            .get_or_init(|| block_on(Forest::build_sliced(self.trace(), &mut Slicer::never())))
    }

    pub async fn forest_sliced(&self, y: &mut Slicer) -> &Forest {
        if let Some(v) = self.forest.get() {
            return v;
        }
        let v = Forest::build_sliced(self.trace(), y).await;
        self.forest.get_or_init(|| v)
    }

    pub fn flops(&self) -> &Flops {
        self.flops.get_or_init(|| {
            block_on(Flops::build_sliced(
                self.trace(),
                self.links(),
                &mut Slicer::never(),
            ))
        })
    }

    pub async fn flops_sliced(&self, y: &mut Slicer) -> &Flops {
        if let Some(v) = self.flops.get() {
            return v;
        }
        let links = self.links_sliced(y).await;
        let v = Flops::build_sliced(self.trace(), links, y).await;
        self.flops.get_or_init(|| v)
    }

    /// The CUDA/HIP graph replays: graphs, launches, replayed device ops.
    pub fn graphs(&self) -> &GraphReport {
        self.graphs
            .get_or_init(|| GraphReport::build(self.trace(), self.links()))
    }

    /// Applies the trace recorded while this trace's CUDA/HIP graphs were captured: from now on
    /// the operator and kernel tables charge each replayed op it names to the operator that
    /// issued it. One capture per trace: a second is refused (the tables already read the first).
    pub fn set_capture(&self, capture: Capture) -> Result<&Attribution, String> {
        if self.capture.get().is_some() {
            return Err("this trace has a capture already".to_string());
        }
        let a = Attribution::new(self.trace(), self.graphs(), capture);
        Ok(self.capture.get_or_init(|| a))
    }

    /// The capture given with [`Derived::set_capture`], paired with this trace's replays.
    pub fn attribution(&self) -> Option<&Attribution> {
        self.capture.get()
    }

    /// The operator table (`group_by_input_shape` when `by_shape`), with the captured operators
    /// charged where a capture is given; unsorted.
    pub fn op_table(&self, by_shape: bool) -> OpTable {
        let charges = self
            .attribution()
            .map(|a| a.charges(self.trace(), self.graphs(), by_shape));
        tables::op_table_charged(self.trace(), self.forest(), by_shape, charges.as_ref())
    }

    /// The kernel table, replayed kernels launched by their captured operators where a capture
    /// is given; without FLOPs (`flops::kernels::annotate` adds them).
    pub fn kernel_table(&self) -> KernelTable {
        tables::kernel_table_attributed(self.trace(), self.forest(), self.attribution())
    }

    /// The module table, replayed ops charged to the module paths their capture names where a
    /// capture is given.
    pub fn module_table(&self) -> ModuleTable {
        tables::module_table_attributed(self.trace(), self.forest(), self.attribution())
    }

    /// What `torch.compile` ran: frames, graphs, Inductor kernels, compile work, graph breaks.
    pub fn compiled(&self) -> &Compiled {
        block_on(self.compiled_sliced(&mut Slicer::never()))
    }

    pub async fn compiled_sliced(&self, y: &mut Slicer) -> &Compiled {
        if let Some(v) = self.compiled.get() {
            return v;
        }
        let links = self.links_sliced(y).await;
        let steps = self.steps_sliced(y).await;
        let v = compiled::analyze_sliced(self.trace(), links, steps, y).await;
        self.compiled.get_or_init(|| v)
    }

    /// Every device's memory curve, allocations paired and their sites found.
    pub fn memory(&self) -> &Memory {
        self.memory
            .get_or_init(|| Memory::build(self.trace(), self.links()))
    }

    /// Every device's memory curve: the full [`Derived::memory`] once it is kept, else the
    /// curves alone (one pass over the memory events, no links).
    pub fn memory_curves(&self) -> &Memory {
        match self.memory.get() {
            Some(m) => m,
            None => self.curves.get_or_init(|| Memory::series(self.trace())),
        }
    }

    /// The critical-path graph with the steps' windows, default path options.
    pub fn critical(&self) -> Result<&Analysis, String> {
        self.critical
            .get_or_init(|| {
                Analysis::build(
                    self.trace(),
                    self.links(),
                    self.steps(),
                    &PathOptions::default(),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    pub async fn critical_sliced(&self, y: &mut Slicer) -> Result<&Analysis, String> {
        if self.critical.get().is_none() {
            let links = self.links_sliced(y).await;
            let steps = self.steps_sliced(y).await;
            let v = Analysis::build_sliced(self.trace(), links, steps, &PathOptions::default(), y)
                .await;
            // Another thread may have built it meanwhile: the first kept is the one used.
            let _ = self.critical.set(v);
        }
        self.critical()
    }

    /// The critical path of each step and, with `edits`, each step's predicted time: on the kept
    /// graph for the default options (every step, Sightline's graph), on one built for the call
    /// otherwise.
    /// A replayed device op's segment names the operator that issued it where a capture is
    /// given.
    pub fn path(&self, opts: &PathOptions, edits: &[Edit]) -> Result<PathReport, String> {
        let mut report = if *opts == PathOptions::default() {
            let a = self.critical()?;
            PathReport::of_analysis(self.trace(), self.links(), a, edits)
        } else {
            PathReport::of(self.trace(), self.links(), self.steps(), opts, edits)?
        };
        if let Some(c) = self.attribution() {
            for seg in report.paths.iter_mut().flat_map(|p| &mut p.segments) {
                seg.captured_by = c.captured_by(seg.slice);
            }
        }
        Ok(report)
    }

    /// Each slice's time on its step's critical path and its slack (`ops --path`).
    pub fn slice_times(&self) -> Result<&SliceTimes, String> {
        self.slice_times
            .get_or_init(|| {
                let a = self.critical()?;
                let paths = a.paths(self.trace(), self.links());
                Ok(SliceTimes::of(self.trace(), a, &paths))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Device idle time counted as `opts` says.
    pub fn idle(&self, opts: &IdleOptions) -> Arc<IdleReport> {
        block_on(self.idle_sliced(opts, &mut Slicer::never()))
    }

    pub async fn idle_sliced(&self, opts: &IdleOptions, y: &mut Slicer) -> Arc<IdleReport> {
        let key = idle_key(opts);
        if let Some(v) = self.idle.find(&key) {
            return v;
        }
        let links = self.links_sliced(y).await;
        let v = idle::analyze_sliced(self.trace(), links, opts, y).await;
        self.idle.keep(key, v)
    }

    /// The findings as the rules give them, the most severe first (their evidence from idle time
    /// counted as `opts` says), and what the rules measured against their thresholds.
    pub fn found(&self, opts: &IdleOptions) -> Arc<findings::Found> {
        block_on(self.found_sliced(opts, &mut Slicer::never()))
    }

    pub async fn found_sliced(&self, opts: &IdleOptions, y: &mut Slicer) -> Arc<findings::Found> {
        let key = idle_key(opts);
        if let Some(v) = self.found.find(&key) {
            return v;
        }
        let links = self.links_sliced(y).await;
        let steps = self.steps_sliced(y).await;
        let idle = self.idle_sliced(opts, y).await;
        let flops = self.flops_sliced(y).await;
        let graphs = self.graphs();
        let compiled = self.compiled_sliced(y).await;
        let inputs = findings::Inputs {
            links,
            steps,
            idle: &idle,
            flops,
            graphs,
            compiled,
            memory: self.memory_curves(),
        };
        let v = findings::analyze_sliced(self.trace(), inputs, y).await;
        self.found.keep(key, v)
    }

    /// The findings, each with what its fix saves, costs first, and apart from them the notes on
    /// how the trace was recorded.
    pub fn findings(&self, opts: &IdleOptions) -> Arc<Judged> {
        block_on(self.findings_sliced(opts, &mut Slicer::never()))
    }

    /// [`Derived::findings`] in slices: the rules, then the critical-path graph (built only when
    /// a finding has a what-if) and the savings' what-if replays.
    pub async fn findings_sliced(&self, opts: &IdleOptions, y: &mut Slicer) -> Arc<Judged> {
        let key = idle_key(opts);
        if let Some(v) = self.judged.find(&key) {
            return v;
        }
        let found = self.found_sliced(opts, y).await.findings.clone();
        // Always the graph: besides the findings' what-ifs, the hotspots are read off its paths.
        let analysis = self.critical_sliced(y).await.ok();
        let links = self.links_sliced(y).await;
        let (findings, recording) = savings::split(
            savings::assess_with_sliced(self.trace(), links, analysis, found, y).await,
        );
        self.judged.keep(
            key,
            Judged {
                findings,
                recording,
            },
        )
    }

    /// The digest `sightline diff`, `ranks` and the Python package compare; `file` is the file's
    /// name (no folder), the rank when the trace does not say it.
    pub fn digest(&self, file: &str) -> Digest {
        // Gaps one by one are not part of a digest: only their sums are.
        let opts = IdleOptions {
            max_gaps: 0,
            ..IdleOptions::default()
        };
        self.digest_with(file, &opts)
    }

    /// [`Derived::digest`] from the idle time and findings kept for `opts` (the page's, which
    /// attributes its gaps one by one): a digest holds the gaps' sums and the findings' words,
    /// which the gap count does not change, so no analysis runs twice.
    pub fn digest_with(&self, file: &str, opts: &IdleOptions) -> Digest {
        let analyses = Analyses {
            links: self.links(),
            forest: self.forest(),
            steps: self.steps(),
            idle: &self.idle(opts),
            found: &self.found(opts),
            critical: self.critical().ok(),
        };
        Digest::from_analyses(self.trace(), &analyses, file)
    }
}

/// Results kept per option value; the few values a session asks for are searched in order.
struct Keyed<K, V> {
    kept: Mutex<Vec<(K, Arc<V>)>>,
}

impl<K, V> Default for Keyed<K, V> {
    fn default() -> Self {
        Keyed {
            kept: Mutex::new(Vec::new()),
        }
    }
}

impl<K: PartialEq, V> Keyed<K, V> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(K, Arc<V>)>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value kept for `key`, if any. The lock is not held while a value is computed (the
    /// computation asks this store for other values).
    fn find(&self, key: &K) -> Option<Arc<V>> {
        self.lock()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// Keeps `value` for `key`, unless another was kept meanwhile: returns the one kept.
    fn keep(&self, key: K, value: V) -> Arc<V> {
        let mut kept = self.lock();
        if let Some((_, v)) = kept.iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        let value = Arc::new(value);
        kept.push((key, value.clone()));
        value
    }
}
