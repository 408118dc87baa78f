//! One owner for what is derived from a loaded trace: each analysis is computed once, on first
//! use, and kept, so a command, a tool call or a panel that needs the links, the steps or the
//! findings asks here instead of building them again.
//!
//! The getters are the analyses' one-go forms; each takes what it depends on from the same store
//! (the findings read its links, steps, idle time and FLOPs; their savings its critical-path
//! graph). Results that depend on options (idle time's mode and gap count, memory's curve) are
//! kept per option value. The store is `Sync`: a server answering several questions about one
//! trace shares it between threads.

use super::critical::savings::{self, Assessed};
use super::critical::slack::SliceTimes;
use super::critical::whatif::Edit;
use super::critical::{Analysis, PathOptions, PathReport};
use super::digest::{Analyses, Digest};
use super::findings::Finding;
use super::flops::Flops;
use super::idle::{self, IdleOptions, IdleReport};
use super::links::Links;
use super::memory::Memory;
use super::steps::{self, StepsReport};
use super::tables::Forest;
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
    memory: OnceLock<Memory>,
    /// The critical-path graph and the steps' windows for the default path options (the
    /// findings' savings and `--path` columns); `Err` says why there is none.
    critical: OnceLock<Result<Analysis, String>>,
    slice_times: OnceLock<Result<SliceTimes, String>>,
    idle: Keyed<IdleKey, IdleReport>,
    found: Keyed<IdleKey, Vec<Finding>>,
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
            memory: OnceLock::new(),
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
        self.links.get_or_init(|| Links::build(self.trace()))
    }

    pub fn steps(&self) -> &StepsReport {
        self.steps
            .get_or_init(|| steps::analyze_with(self.trace(), self.links()))
    }

    /// The operator trees every table reads.
    pub fn forest(&self) -> &Forest {
        self.forest.get_or_init(|| Forest::build(self.trace()))
    }

    pub fn flops(&self) -> &Flops {
        self.flops
            .get_or_init(|| Flops::build(self.trace(), self.links()))
    }

    pub fn memory(&self) -> &Memory {
        self.memory
            .get_or_init(|| Memory::build(self.trace(), self.links()))
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

    /// The critical path of each step and, with `edits`, each step's predicted time: on the kept
    /// graph for the default options (every step, Sightline's graph), on one built for the call
    /// otherwise.
    pub fn path(&self, opts: &PathOptions, edits: &[Edit]) -> Result<PathReport, String> {
        if *opts == PathOptions::default() {
            let a = self.critical()?;
            return Ok(PathReport::of_analysis(
                self.trace(),
                self.links(),
                a,
                edits,
            ));
        }
        PathReport::of(self.trace(), self.links(), self.steps(), opts, edits)
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
        self.idle.get(idle_key(opts), || {
            idle::analyze_with(self.trace(), self.links(), opts)
        })
    }

    /// The findings as the rules give them, the most severe first (their evidence from idle time
    /// counted as `opts` says).
    pub fn found(&self, opts: &IdleOptions) -> Arc<Vec<Finding>> {
        self.found.get(idle_key(opts), || {
            findings::analyze_with_flops(
                self.trace(),
                self.links(),
                self.steps(),
                &self.idle(opts),
                self.flops(),
            )
        })
    }

    /// The findings, each with what its fix saves, costs first, and apart from them the notes on
    /// how the trace was recorded.
    pub fn findings(&self, opts: &IdleOptions) -> Arc<Judged> {
        self.judged.get(idle_key(opts), || {
            let found = (*self.found(opts)).clone();
            // The graph is built only when a finding has a what-if to price.
            let analysis = found
                .iter()
                .any(|f| !f.whatif.is_empty())
                .then(|| self.critical().ok())
                .flatten();
            let (findings, recording) =
                savings::split(savings::assess_with(self.trace(), analysis, found));
            Judged {
                findings,
                recording,
            }
        })
    }

    /// The digest `sightline diff`, `ranks` and the Python package compare; `file` is the file's
    /// name (no folder), the rank when the trace does not say it.
    pub fn digest(&self, file: &str) -> Digest {
        // Gaps one by one are not part of a digest: only their sums are.
        let opts = IdleOptions {
            max_gaps: 0,
            ..IdleOptions::default()
        };
        let analyses = Analyses {
            links: self.links(),
            forest: self.forest(),
            steps: self.steps(),
            idle: &self.idle(&opts),
            findings: &self.found(&opts),
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
    /// The value kept for `key`, or `make`'s, kept. `make` runs without the lock held (it may
    /// ask this store for other values); two threads asking at once may both compute it, and the
    /// first kept wins.
    fn get(&self, key: K, make: impl FnOnce() -> V) -> Arc<V> {
        let lock = || self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, v)) = lock().iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        let made = Arc::new(make());
        let mut kept = lock();
        if let Some((_, v)) = kept.iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        kept.push((key, made.clone()));
        made
    }
}
