//! Memory over time, per device, from the `[memory]` events of `profile_memory=True`.
//!
//! What it computes (the TensorBoard plugin's memory view, from the same events):
//! - The curve: each event's own `Total Allocated` and `Total Reserved`, a step function of time,
//!   per device (`cpu`, `cuda:0`, ...; PyTorch's `Device Type` and `Device Id`).
//!   [`DeviceSeries::columns`] reduces any time range to min/max per pixel column, so a spike
//!   narrower than a column is kept.
//! - The peak: the first event with the largest `Total Allocated` (and, apart, the largest
//!   `Total Reserved`).
//! - Live allocations at the peak or after any event: allocations paired with their frees by address
//!   ([`allocations`]), grouped by the innermost operator on the allocating thread and by Python
//!   frame. Bytes that were allocated before the trace began and not freed inside it are invisible
//!   but counted in `Total Allocated`; they are the holder `(allocated before the trace)`, so the
//!   holders at the peak add up to the peak.
//! - Per `ProfilerStep#N`, the allocated floor (the least `Total Allocated` during the step's CPU
//!   span, counting the value carried in): [`growth`] raises `memory_growth` when it rises step
//!   over step.
//!
//! Files: this module (per-device series, the trace's own totals or, before PyTorch 1.10, a running
//! sum of `Bytes`; the peak; live allocations at any event; per-step floors; min/max per column),
//! [`allocations`] (frees paired with allocations by address; the operator and frame around an
//! event), [`growth`] (`memory_growth`) and [`recorded`] (what the events can show, in words).
//! The curves alone need one pass over the memory events;
//! the allocations need the links (`Derived::memory_curves` and `Derived::memory`).

pub mod allocations;
pub mod growth;
pub mod recorded;

pub use self::allocations::NO_EVENT;
use self::allocations::{name_of, pair, site_of, Allocation, Site};
use super::links::Links;
use super::steps::Step;
use crate::analysis::columns::{Column, Row, Sort, Unit, SLICE_REF};
use crate::model::{SliceRef, StrId, Trace};
use serde::Serialize;
use std::collections::HashMap;

/// Holder name for bytes allocated before the trace and live at the peak.
pub const BEFORE_TRACE: &str = "(allocated before the trace)";
/// Holder name for an allocation outside any operator (or frame).
pub const NO_OP: &str = "(no operator)";

/// PyTorch's name of a device type (`c10::DeviceType`), as in `cuda:0`.
pub fn device_type_name(t: i8) -> &'static str {
    match t {
        0 => "cpu",
        1 => "cuda",
        2 => "mkldnn",
        3 => "opengl",
        4 => "opencl",
        5 => "ideep",
        6 => "hip",
        7 => "fpga",
        8 => "maia",
        9 => "xla",
        10 => "vulkan",
        11 => "metal",
        12 => "xpu",
        13 => "mps",
        14 => "meta",
        15 => "hpu",
        16 => "ve",
        17 => "lazy",
        18 => "ipu",
        19 => "mtia",
        20 => "privateuseone",
        _ => "unknown",
    }
}

/// A device's name as PyTorch prints it: `cpu` (the CPU's id is -1 or 0), else `cuda:0`, `xpu:1`.
pub fn device_name(device_type: i8, device_id: i64) -> String {
    if device_type == 0 {
        "cpu".into()
    } else {
        format!("{}:{}", device_type_name(device_type), device_id)
    }
}

/// One device's events and allocations.
pub struct DeviceSeries {
    pub device_type: i8,
    pub device_id: i64,
    /// Indices into [`Trace::memory`], in time order.
    pub events: Vec<u32>,
    /// Per event: allocated and reserved bytes after it. The trace's own `Total Allocated` and
    /// `Total Reserved` where it wrote them; PyTorch before 1.10 wrote neither, and then allocated
    /// is the running sum of `Bytes` from the trace start (a change, not a level) and reserved 0.
    pub allocated: Vec<i64>,
    pub reserved: Vec<i64>,
    /// False when the trace wrote no `Total Allocated`/`Total Reserved` for this device.
    pub totals_recorded: bool,
    /// False when the trace wrote no `Addr`: allocations cannot be paired with frees.
    pub addresses_recorded: bool,
    pub allocations: Vec<Allocation>,
    /// Per allocation: who allocated it (default for a block from before the trace).
    pub alloc_sites: Vec<Site>,
    /// Per allocation: who freed it (default when not freed inside the trace).
    pub free_sites: Vec<Site>,
}

/// The memory of every device in a trace. Build once with [`Memory::build`].
pub struct Memory {
    pub devices: Vec<DeviceSeries>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemoryReport {
    pub devices: Vec<DeviceMemory>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeviceMemory {
    /// As PyTorch names it: `cpu`, `cuda:0`.
    pub device: String,
    pub events: usize,
    /// `totalGlobalMem` from `deviceProperties`, for a GPU listed there.
    pub capacity_bytes: Option<u64>,
    /// False for PyTorch before 1.10: the curve is then the running sum of `Bytes` from the
    /// trace start, and reserved bytes are unknown (0).
    pub totals_recorded: bool,
    /// False when the trace has no `Addr`: no allocation table, no holders.
    pub addresses_recorded: bool,
    pub peak_allocated_bytes: i64,
    pub peak_reserved_bytes: i64,
    /// Time of the allocated peak, µs from the trace start.
    pub peak_at_us: f64,
    pub peak_at_ns: i64,
    pub peak_reserved_at_us: f64,
    /// Live bytes at the peak by allocating operator, largest first; they sum to the peak.
    pub holders: Vec<Holder>,
    /// Live bytes at the peak by Python frame (empty without `with_stack`).
    pub frames: Vec<Holder>,
    /// The largest allocations live at the peak.
    pub live_at_peak: Vec<LiveAllocation>,
    /// Allocations seen (allocated inside the trace).
    pub allocations: usize,
    pub never_freed: usize,
    pub never_freed_bytes: i64,
    /// Frees of blocks allocated before the trace.
    pub freed_from_before: usize,
    pub step_floors: Vec<StepFloor>,
    /// The curve reduced to at most the requested number of points (min/max per time bucket).
    pub curve: Vec<CurvePoint>,
    /// What was live at the time asked for ([`MemoryOptions::at_ns`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub at: Option<LiveAt>,
    /// Every allocation ([`MemoryOptions::table`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub allocation_table: Option<Vec<AllocationRow>>,
}

/// The live allocations after the last event at or before a time.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiveAt {
    pub at_us: f64,
    pub allocated_bytes: i64,
    pub reserved_bytes: i64,
    pub holders: Vec<Holder>,
    pub frames: Vec<Holder>,
    pub live: Vec<LiveAllocation>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Holder {
    pub op: String,
    pub bytes: i64,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiveAllocation {
    pub addr: i64,
    pub bytes: i64,
    pub op: String,
    pub frame: Option<String>,
    /// The allocating operator's slice, for a viewer to jump to.
    pub slice: Option<SliceRef>,
    pub allocated_at_us: Option<f64>,
    pub age_us: Option<f64>,
    /// The step it was allocated in, when that step had ended at the time asked about.
    pub held_since_step: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepFloor {
    pub step: i64,
    pub floor_bytes: i64,
    pub peak_bytes: i64,
}

/// Allocated and reserved bytes over one time bucket (pixel column).
#[derive(Debug, Clone, Copy, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CurvePoint {
    /// Index of the bucket in the range asked for.
    pub column: u32,
    /// Start of the bucket, µs from the trace start.
    pub t_us: f64,
    pub allocated_min_bytes: i64,
    pub allocated_max_bytes: i64,
    pub reserved_max_bytes: i64,
}

/// One row of the allocation table.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AllocationRow {
    pub addr: i64,
    pub bytes: i64,
    pub allocated_at_us: Option<f64>,
    pub allocated_by: String,
    pub frame: Option<String>,
    pub freed_at_us: Option<f64>,
    pub freed_by: Option<String>,
    pub lifetime_us: Option<f64>,
    pub never_freed: bool,
    pub slice: Option<SliceRef>,
}

impl Row for Holder {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "op",
            "Held by",
            Unit::Text,
            "The allocating operator (in `frames`, the Python frame) of the live blocks",
        ),
        Column::new(
            "bytes",
            "Bytes",
            Unit::Bytes,
            "Live bytes it allocated; a device's holders sum to the peak",
        ),
        Column::new("count", "Blocks", Unit::Count, "Live blocks it allocated"),
    ];
    const SORT: Sort = Sort::Largest("bytes");
}

impl Row for StepFloor {
    const COLUMNS: &'static [Column] = &[
        Column::new("step", "Step", Unit::Count, "The `ProfilerStep#N` number"),
        Column::new(
            "floor_bytes",
            "Least allocated",
            Unit::Bytes,
            "The least `Total Allocated` during the step's CPU span: what stays between steps",
        ),
        Column::new(
            "peak_bytes",
            "Most allocated",
            Unit::Bytes,
            "The largest `Total Allocated` during the step's CPU span",
        ),
    ];
    const SORT: Sort = Sort::Smallest("step");
}

impl Row for AllocationRow {
    const COLUMNS: &'static [Column] = &[
        Column::new("addr", "Addr", Unit::Count, "The block's address (`Addr`)"),
        Column::new("bytes", "Bytes", Unit::Bytes, "The block's size"),
        Column::new(
            "allocated_at_us",
            "Allocated at",
            Unit::Us,
            "µs from the trace start; null for a block allocated before the trace",
        ),
        Column::new(
            "allocated_by",
            "By",
            Unit::Text,
            "The operator that allocated it, or what stands for none",
        ),
        Column::new(
            "frame",
            "Frame",
            Unit::Text,
            "The innermost Python frame around the allocation (with `with_stack`)",
        ),
        Column::new(
            "freed_at_us",
            "Freed at",
            Unit::Us,
            "µs from the trace start; null when never freed",
        ),
        Column::new(
            "freed_by",
            "Freed by",
            Unit::Text,
            "The operator that freed it; null when never freed",
        ),
        Column::new(
            "lifetime_us",
            "Lifetime",
            Unit::Us,
            "Freed at less allocated at; null when either is outside the trace",
        ),
        Column::new(
            "never_freed",
            "Never freed",
            Unit::Flag,
            "Still allocated when the trace ends",
        ),
        Column::new(
            "slice",
            "Slice",
            Unit::Data,
            "The allocating operator's slice, for a viewer to jump to",
        )
        .typed(SLICE_REF),
    ];
    const SORT: Sort = Sort::Ranked("the order they were allocated in");
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

impl Memory {
    /// Every device's series, allocations paired and their sites found.
    pub fn build(trace: &Trace, links: &Links) -> Memory {
        let mut memory = Memory::series(trace);
        for d in &mut memory.devices {
            if !d.addresses_recorded {
                continue;
            }
            d.allocations = pair(trace, &d.events);
            let site = |e: u32| {
                if e == NO_EVENT {
                    Site::default()
                } else {
                    site_of(trace, links, e)
                }
            };
            d.alloc_sites = d.allocations.iter().map(|a| site(a.alloc_event)).collect();
            d.free_sites = d.allocations.iter().map(|a| site(a.free_event)).collect();
        }
        memory
    }

    /// Every device's curve only (no allocation table): what the floors and the peak need.
    pub fn series(trace: &Trace) -> Memory {
        let m = &trace.memory;
        let mut by_device: HashMap<(i8, i64), usize> = HashMap::new();
        let mut devices: Vec<DeviceSeries> = Vec::new();
        for i in 0..m.len() {
            let t = m.device_type[i];
            let id = if t == 0 {
                -1
            } else {
                i64::from(m.device_id[i])
            };
            let d = *by_device.entry((t, id)).or_insert_with(|| {
                devices.push(DeviceSeries {
                    device_type: t,
                    device_id: id,
                    events: Vec::new(),
                    allocated: Vec::new(),
                    reserved: Vec::new(),
                    totals_recorded: false,
                    addresses_recorded: false,
                    allocations: Vec::new(),
                    alloc_sites: Vec::new(),
                    free_sites: Vec::new(),
                });
                devices.len() - 1
            });
            devices[d].events.push(i as u32);
        }
        for d in &mut devices {
            let at = |e: &u32| *e as usize;
            d.totals_recorded = d
                .events
                .iter()
                .any(|e| m.total_allocated[at(e)] != 0 || m.total_reserved[at(e)] != 0);
            d.addresses_recorded = d.events.iter().any(|e| m.addr[at(e)] != 0);
            if d.totals_recorded {
                d.allocated = d.events.iter().map(|e| m.total_allocated[at(e)]).collect();
                d.reserved = d.events.iter().map(|e| m.total_reserved[at(e)]).collect();
            } else {
                let mut sum = 0i64;
                d.allocated = d
                    .events
                    .iter()
                    .map(|e| {
                        sum = sum.saturating_add(m.bytes[at(e)]);
                        sum
                    })
                    .collect();
                d.reserved = vec![0; d.events.len()];
            }
        }
        // CPU first, then devices by type and index, as PyTorch lists them.
        devices.sort_by_key(|d| (d.device_type, d.device_id));
        Memory { devices }
    }

    /// The device's series by its name (`cuda:0`).
    pub fn device(&self, name: &str) -> Option<&DeviceSeries> {
        self.devices
            .iter()
            .find(|d| device_name(d.device_type, d.device_id) == name)
    }
}

impl DeviceSeries {
    pub fn name(&self) -> String {
        device_name(self.device_type, self.device_id)
    }

    /// Position in `events` of the largest allocated value (the first of equals).
    pub fn peak(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (p, &a) in self.allocated.iter().enumerate() {
            if best.is_none_or(|b| a > self.allocated[b]) {
                best = Some(p);
            }
        }
        best
    }

    /// Position in `events` of the largest reserved value (the first of equals).
    pub fn peak_reserved(&self) -> Option<usize> {
        (0..self.events.len()).max_by_key(|&p| (self.reserved[p], std::cmp::Reverse(p)))
    }

    /// The device's memory from `deviceProperties` (GPUs only: the CPU has none recorded).
    pub fn capacity_bytes(&self, trace: &Trace) -> Option<u64> {
        if self.device_type != 1 {
            return None;
        }
        let props = &trace.meta.device_properties;
        props
            .iter()
            .find(|p| p.id == self.device_id)
            .and_then(|p| p.total_global_mem)
    }

    /// Position of the last event of this device at or before `t_ns` (none before its first).
    pub fn position_at(&self, trace: &Trace, t_ns: i64) -> Option<usize> {
        let ts = &trace.memory.ts_ns;
        let n = self.events.partition_point(|&e| ts[e as usize] <= t_ns);
        n.checked_sub(1)
    }

    /// Allocations live just after memory event `e` (its own change included), as indices into
    /// `allocations`.
    pub fn live_after(&self, e: u32) -> Vec<usize> {
        self.allocations
            .iter()
            .enumerate()
            .filter(|(_, a)| {
                (a.alloc_event == NO_EVENT || a.alloc_event <= e)
                    && (a.free_event == NO_EVENT || a.free_event > e)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The curve over `[t0_ns, t1_ns)` cut into `columns` equal buckets: per bucket, the least and
    /// largest `Total Allocated` and the largest `Total Reserved` held in it (the value carried in
    /// from the last earlier event included). Buckets before the first event are left out.
    pub fn columns(&self, trace: &Trace, t0_ns: i64, t1_ns: i64, columns: u32) -> Vec<CurvePoint> {
        let m = &trace.memory;
        let mut out = Vec::new();
        if columns == 0 || t1_ns <= t0_ns || self.events.is_empty() {
            return out;
        }
        let ts = |p: usize| m.ts_ns[self.events[p] as usize];
        let width = (t1_ns - t0_ns) as f64 / f64::from(columns);
        // Position of the first event at or after t0; the one before it is carried in.
        let mut p = self
            .events
            .partition_point(|&e| m.ts_ns[e as usize] < t0_ns);
        for c in 0..columns {
            let c0 = t0_ns + (f64::from(c) * width) as i64;
            let c1 = if c + 1 == columns {
                t1_ns
            } else {
                t0_ns + (f64::from(c + 1) * width) as i64
            };
            let mut point: Option<CurvePoint> = p.checked_sub(1).map(|q| CurvePoint {
                column: c,
                t_us: us(c0),
                allocated_min_bytes: self.allocated[q],
                allocated_max_bytes: self.allocated[q],
                reserved_max_bytes: self.reserved[q],
            });
            while p < self.events.len() && ts(p) < c1 {
                let (a, r) = (self.allocated[p], self.reserved[p]);
                let pt = point.get_or_insert(CurvePoint {
                    column: c,
                    t_us: us(c0),
                    allocated_min_bytes: a,
                    allocated_max_bytes: a,
                    reserved_max_bytes: r,
                });
                pt.allocated_min_bytes = pt.allocated_min_bytes.min(a);
                pt.allocated_max_bytes = pt.allocated_max_bytes.max(a);
                pt.reserved_max_bytes = pt.reserved_max_bytes.max(r);
                p += 1;
            }
            out.extend(point);
        }
        out
    }

    /// Live allocations after the event at position `p`, grouped by operator and by frame, and
    /// the largest ones (all empty without addresses).
    pub fn live_report(
        &self,
        trace: &Trace,
        steps: &[Step],
        p: usize,
        top: usize,
    ) -> (Vec<Holder>, Vec<Holder>, Vec<LiveAllocation>) {
        if !self.addresses_recorded || !self.totals_recorded {
            return Default::default();
        }
        let m = &trace.memory;
        let e = self.events[p];
        let live = self.live_after(e);
        let at_ns = m.ts_ns[e as usize];
        let mut by_op: HashMap<StrId, (i64, usize)> = HashMap::new();
        let mut by_frame: HashMap<StrId, (i64, usize)> = HashMap::new();
        let mut before = 0i64;
        let mut seen = 0i64;
        let mut frames_seen = false;
        for &i in &live {
            let a = &self.allocations[i];
            if a.alloc_event == NO_EVENT {
                continue;
            }
            seen += a.bytes;
            let site = &self.alloc_sites[i];
            let h = by_op.entry(name_of(trace, site.op)).or_default();
            h.0 += a.bytes;
            h.1 += 1;
            frames_seen |= site.frame.is_some();
            let f = by_frame.entry(name_of(trace, site.frame)).or_default();
            f.0 += a.bytes;
            f.1 += 1;
        }
        // Everything `Total Allocated` counts beyond the blocks seen allocated: blocks from before
        // the trace (those freed later are among them).
        before += self.allocated[p] - seen;
        let holders = |map: HashMap<StrId, (i64, usize)>, extra: i64| {
            let mut v: Vec<Holder> = map
                .into_iter()
                .map(|(k, (bytes, count))| Holder {
                    op: if k.is_none() {
                        NO_OP.to_string()
                    } else {
                        trace.str(k).to_string()
                    },
                    bytes,
                    count,
                })
                .collect();
            if extra != 0 {
                v.push(Holder {
                    op: BEFORE_TRACE.into(),
                    bytes: extra,
                    count: live
                        .iter()
                        .filter(|&&i| self.allocations[i].alloc_event == NO_EVENT)
                        .count(),
                });
            }
            v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.op.cmp(&b.op)));
            v
        };
        let ops = holders(by_op, before);
        let frames = if frames_seen {
            holders(by_frame, before)
        } else {
            Vec::new()
        };
        let mut largest: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&i| self.allocations[i].alloc_event != NO_EVENT)
            .collect();
        largest.sort_by_key(|&i| (std::cmp::Reverse(self.allocations[i].bytes), i));
        largest.truncate(top);
        let step_of = |t: i64| {
            steps
                .iter()
                .find(|s| s.cpu_start_ns <= t && t < s.cpu_end_ns)
                .and_then(|s| s.number)
        };
        let now_step = step_of(at_ns);
        let live_rows = largest
            .into_iter()
            .map(|i| {
                let a = &self.allocations[i];
                let site = &self.alloc_sites[i];
                let t = m.ts_ns[a.alloc_event as usize];
                let step = step_of(t);
                LiveAllocation {
                    addr: a.addr,
                    bytes: a.bytes,
                    op: site
                        .op
                        .map_or(NO_OP.to_string(), |r| trace.slice_name(r).to_string()),
                    frame: site.frame.map(|r| trace.slice_name(r).to_string()),
                    slice: site.op,
                    allocated_at_us: Some(us(t)),
                    age_us: Some(us(at_ns - t)),
                    held_since_step: step.filter(|_| step != now_step),
                }
            })
            .collect();
        (ops, frames, live_rows)
    }

    /// The allocation table, in allocation order.
    pub fn table(&self, trace: &Trace) -> Vec<AllocationRow> {
        let m = &trace.memory;
        let at = |e: u32| (e != NO_EVENT).then(|| m.ts_ns[e as usize]);
        let name = |r: Option<SliceRef>| r.map(|r| trace.slice_name(r).to_string());
        self.allocations
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let (t0, t1) = (at(a.alloc_event), at(a.free_event));
                let (s0, s1) = (&self.alloc_sites[i], &self.free_sites[i]);
                AllocationRow {
                    addr: a.addr,
                    bytes: a.bytes,
                    allocated_at_us: t0.map(us),
                    allocated_by: if a.alloc_event == NO_EVENT {
                        BEFORE_TRACE.into()
                    } else {
                        name(s0.op).unwrap_or_else(|| NO_OP.into())
                    },
                    frame: name(s0.frame),
                    freed_at_us: t1.map(us),
                    freed_by: t1.map(|_| name(s1.op).unwrap_or_else(|| NO_OP.into())),
                    lifetime_us: t0.zip(t1).map(|(a, b)| us(b - a)),
                    never_freed: a.free_event == NO_EVENT,
                    slice: s0.op,
                }
            })
            .collect()
    }

    /// Per step, the least and largest `Total Allocated` during its CPU span (value carried in
    /// included). Steps without a number, or that end before the first event, are left out.
    pub fn step_floors(&self, trace: &Trace, steps: &[Step]) -> Vec<StepFloor> {
        let m = &trace.memory;
        let mut out = Vec::new();
        for s in steps {
            let Some(step) = s.number else { continue };
            let ts = |e: &u32| m.ts_ns[*e as usize];
            let lo = self.events.partition_point(|e| ts(e) < s.cpu_start_ns);
            let hi = self.events.partition_point(|e| ts(e) < s.cpu_end_ns);
            let inside = lo.saturating_sub(1)..hi;
            if inside.is_empty() {
                continue;
            }
            // A step that begins before the device's first event starts from the level before
            // that event.
            let initial = (lo == 0).then(|| {
                let e = self.events[0] as usize;
                self.allocated[0]
                    - if self.totals_recorded {
                        m.bytes[e]
                    } else {
                        self.allocated[0]
                    }
            });
            let values = || {
                self.allocated[inside.clone()]
                    .iter()
                    .copied()
                    .chain(initial)
            };
            out.push(StepFloor {
                step,
                floor_bytes: values().min().unwrap_or(0),
                peak_bytes: values().max().unwrap_or(0),
            });
        }
        out
    }
}

/// Options of [`report`].
pub struct MemoryOptions {
    /// Points of the curve per device (0: none).
    pub points: u32,
    /// Largest live allocations listed at the peak.
    pub top: usize,
    /// Also list what was live at this time (ns from the trace start).
    pub at_ns: Option<i64>,
    /// Also give the allocation table.
    pub table: bool,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        MemoryOptions {
            points: 100,
            top: 20,
            at_ns: None,
            table: false,
        }
    }
}

/// Every device's peak, holders, floors and curve.
pub fn report(
    trace: &Trace,
    memory: &Memory,
    steps: &[Step],
    opts: &MemoryOptions,
) -> MemoryReport {
    let m = &trace.memory;
    let devices = memory
        .devices
        .iter()
        .filter_map(|d| {
            let peak = d.peak()?;
            let peak_reserved = d.peak_reserved()?;
            let ts = |p: usize| m.ts_ns[d.events[p] as usize];
            let (holders, frames, live) = d.live_report(trace, steps, peak, opts.top);
            let (first, last) = (d.events[0], *d.events.last()?);
            let (t0, t1) = (m.ts_ns[first as usize], m.ts_ns[last as usize] + 1);
            let never: Vec<&Allocation> = d
                .allocations
                .iter()
                .filter(|a| a.alloc_event != NO_EVENT && a.free_event == NO_EVENT)
                .collect();
            Some(DeviceMemory {
                device: d.name(),
                events: d.events.len(),
                capacity_bytes: d.capacity_bytes(trace),
                totals_recorded: d.totals_recorded,
                addresses_recorded: d.addresses_recorded,
                peak_allocated_bytes: d.allocated[peak],
                peak_reserved_bytes: d.reserved[peak_reserved],
                peak_at_us: us(ts(peak)),
                peak_at_ns: ts(peak),
                peak_reserved_at_us: us(ts(peak_reserved)),
                holders,
                frames,
                live_at_peak: live,
                allocations: d
                    .allocations
                    .iter()
                    .filter(|a| a.alloc_event != NO_EVENT)
                    .count(),
                never_freed: never.len(),
                never_freed_bytes: never.iter().map(|a| a.bytes).sum(),
                freed_from_before: d
                    .allocations
                    .iter()
                    .filter(|a| a.alloc_event == NO_EVENT)
                    .count(),
                step_floors: d.step_floors(trace, steps),
                curve: d.columns(trace, t0, t1, opts.points),
                at: opts.at_ns.and_then(|t| {
                    let p = d.position_at(trace, t)?;
                    let (holders, frames, live) = d.live_report(trace, steps, p, opts.top);
                    Some(LiveAt {
                        at_us: us(t),
                        allocated_bytes: d.allocated[p],
                        reserved_bytes: d.reserved[p],
                        holders,
                        frames,
                        live,
                    })
                }),
                allocation_table: opts.table.then(|| d.table(trace)),
            })
        })
        .collect();
    MemoryReport { devices }
}
