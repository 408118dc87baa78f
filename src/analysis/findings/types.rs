//! What a finding is: the leaf every rule (here, in `flops::rules` and `memory::growth`) and every
//! reader of findings imports, so that none of them imports the rules back.

use crate::model::SliceRef;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Finding {
    pub id: &'static str,
    pub severity: Severity,
    pub title: String,
    /// A sentence with the numbers.
    pub detail: String,
    pub advice: String,
    pub evidence: Evidence,
    /// What-if edits ([`crate::analysis::critical::whatif`]'s grammar) that stand for the advice at
    /// its best case: what `critical::savings` replays to price the fix, and what the page's
    /// "what if" button applies. Empty when the fix names no duration to change.
    #[serde(skip)]
    pub whatif: Vec<String>,
}

/// A rule declared once: the id and severity its findings carry, the thresholds its function
/// compares against, and what the findings reference (`docs/findings.md`, written from every
/// declaration by the `reference` module beside this one) says of it. Each stands beside its
/// function, named as its id in capitals; a threshold is a constant there that both the function
/// and the declaration name, so each number is written once.
#[derive(Debug)]
pub struct Rule {
    /// Stable: CI gates read it.
    pub id: &'static str,
    pub theme: Theme,
    /// The severity its findings are raised at (`fires` says where it raises another).
    pub severity: Severity,
    /// A note on how the trace was recorded (activities, shapes, stacks, memory profiling, the
    /// schedule's active steps): a fact of the recording, not a cost. Reports list these apart
    /// ("How this trace was recorded", `recording` beside `findings`), after every cost.
    pub recording: bool,
    /// What a finding of it says, in a line.
    pub meaning: &'static str,
    /// When it fires; `{name}` stands for the threshold of that name, written in its unit.
    pub fires: &'static str,
    /// The what-if edits that price its fix, as the reference tells them (`-`: none).
    pub whatif: &'static str,
    /// What the what-if's saving stands for: the words of its finding's sentence and
    /// `saving.bound`.
    pub pricing: Pricing,
    pub thresholds: &'static [Threshold],
}

/// What a rule's what-if stands for, and so what its saving means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pricing {
    /// No what-if: its findings are not priced.
    None,
    /// The fix at its best case: "Fixing this saves about ...".
    Fix,
    /// The work made free: a bound on what any fix saves (a hotspot, or the host work the
    /// device waited for), since removing it outright is no fix.
    Bound,
    /// An estimate no after-run can check (launches batched as a CUDA/HIP graph would batch
    /// them).
    Estimate,
}

impl Pricing {
    /// The reference's words for it.
    pub fn words(self) -> &'static str {
        match self {
            Pricing::None => "-",
            Pricing::Fix => "the fix at its best case",
            Pricing::Bound => "a bound: the work made free",
            Pricing::Estimate => "an estimate",
        }
    }
}

/// What a rule is about: the reference's sections, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Theme {
    Damage,
    Recording,
    Steps,
    Input,
    Copies,
    Cpu,
    Device,
    Memory,
    Graphs,
    Compiled,
    Roofline,
    Path,
    Ranks,
}

impl Theme {
    /// The reference's heading for it.
    pub fn title(self) -> &'static str {
        match self {
            Theme::Damage => "A damaged trace",
            Theme::Recording => "How the trace was recorded",
            Theme::Steps => "The steps",
            Theme::Input => "Feeding the steps",
            Theme::Copies => "Copies and dtypes",
            Theme::Cpu => "Where the CPU time goes",
            Theme::Device => "The device",
            Theme::Memory => "Memory",
            Theme::Graphs => "CUDA/HIP graphs",
            Theme::Compiled => "torch.compile",
            Theme::Roofline => "The roofline",
            Theme::Path => "The critical path's hotspots",
            Theme::Ranks => "Across ranks",
        }
    }
}

/// A number a rule compares against, named as its rule's `fires` names it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    pub name: &'static str,
    pub value: Value,
}

impl Threshold {
    pub const fn new(name: &'static str, value: Value) -> Threshold {
        Threshold { name, value }
    }
}

/// What a rule measured against one of its thresholds, kept whether it fired or not, so that a
/// comparison of two runs can tell a finding that crossed its threshold (13.6% of the steps, then
/// 16.2% against 15%) from one whose cause appeared. Only rules with one primary figure measure
/// it (a share of the steps, a ratio, a count), and only where the thing measured is there: a
/// trace with no optimizer step has no optimizer share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measure {
    pub rule: &'static str,
    pub threshold: Threshold,
    /// In the threshold's unit (the same [`Value`] variant).
    pub value: Value,
}

impl Measure {
    /// What `rule` measured against its threshold `name`, in the threshold's unit.
    pub fn of(rule: &Rule, name: &str, value: Value) -> Option<Measure> {
        let Some(&threshold) = rule.thresholds.iter().find(|t| t.name == name) else {
            debug_assert!(false, "{} has no threshold {name}", rule.id);
            return None;
        };
        debug_assert_eq!(threshold.value.unit(), value.unit());
        Some(Measure {
            rule: rule.id,
            threshold,
            value,
        })
    }
}

/// A threshold's value in its unit, as the reference writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A fraction: 0.05 is 5%.
    Share(f64),
    /// Percent: 5.0 is 5%.
    Pct(f64),
    /// A ratio: 1.5 is 1.5x.
    Times(f64),
    Count(usize),
    Ns(i64),
    Bytes(i64),
}

impl Value {
    /// The unit's word, as digests write it beside the number.
    pub fn unit(self) -> &'static str {
        match self {
            Value::Share(_) => "share",
            Value::Pct(_) => "pct",
            Value::Times(_) => "times",
            Value::Count(_) => "count",
            Value::Ns(_) => "ns",
            Value::Bytes(_) => "bytes",
        }
    }

    /// The number in its unit (a share as a fraction).
    pub fn number(self) -> f64 {
        match self {
            Value::Share(x) | Value::Pct(x) | Value::Times(x) => x,
            Value::Count(n) => n as f64,
            Value::Ns(n) | Value::Bytes(n) => n as f64,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Value::Share(x) => write!(f, "{}%", decimal(x * 100.0)),
            Value::Pct(x) => write!(f, "{}%", decimal(x)),
            Value::Times(x) => write!(f, "{}x", decimal(x)),
            Value::Count(n) => write!(f, "{n}"),
            Value::Ns(ns) if ns >= 1_000_000 => write!(f, "{} ms", decimal(ns as f64 / 1e6)),
            Value::Ns(ns) if ns >= 1_000 => write!(f, "{} µs", decimal(ns as f64 / 1e3)),
            Value::Ns(ns) => write!(f, "{ns} ns"),
            Value::Bytes(b) if b >= 1 << 20 => {
                write!(f, "{} MiB", decimal(b as f64 / f64::from(1 << 20)))
            }
            Value::Bytes(b) => write!(f, "{b} bytes"),
        }
    }
}

/// `x` to six decimals at most, without trailing zeros: `0.15 * 100.0` is `15`, not
/// `15.000000000000002`.
fn decimal(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What the viewer can jump to.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Evidence {
    pub slices: Vec<SliceRef>,
    pub ranges: Vec<TimeRange>,
}

#[derive(Debug, Clone, Copy, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimeRange {
    pub start_ns: i64,
    pub end_ns: i64,
}
