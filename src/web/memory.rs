//! Memory on the page (`www/js/memory.js`, `memory-chart.js`, `memory-panels.js`): each device's
//! allocated and reserved bytes for the timeline's current window, the live allocations at any
//! time, and the allocation table, all from `analysis::memory`.
//!
//! The curves (`Derived::memory_curves`) cost one pass over the memory events, on first use. The
//! live allocations and the table need the allocations paired with their frees and the operator
//! around each event (`Derived::memory`, from the links the analyses kept): those are built on
//! the first call that needs them (the peak's panel, which the page asks for once the analyses are
//! done, a click on the chart, the table), and only for a trace that has memory events.

use super::session::Session;
use super::{err, json};
use crate::analysis::memory::{device_name, DeviceSeries, Memory, NO_EVENT};
use crate::model::SliceRef;
use crate::view::panels::{AllocationTable, DeviceInfo, HolderRow, LiveRows};
use std::collections::HashMap;
use wasm_bindgen::prelude::*;

/// Values per pixel column in [`Session::memory_columns`]: least and largest allocated, largest
/// reserved.
const PER_COLUMN: usize = 3;

/// Names to indices, in first-seen order.
#[derive(Default)]
struct Names {
    index: HashMap<String, u32>,
    names: Vec<String>,
}

impl Names {
    fn of(&mut self, name: String) -> u32 {
        if let Some(&i) = self.index.get(&name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.clone());
        self.index.insert(name, i);
        i
    }
}

fn device_of<'a>(memory: &'a Memory, name: &str) -> Result<&'a DeviceSeries, JsValue> {
    memory
        .device(name)
        .ok_or_else(|| err(format!("no memory events for device '{name}'")))
}

/// Holders with the slice of each one's largest live allocation (`live` is largest first).
fn with_slices(
    holders: Vec<crate::analysis::memory::Holder>,
    live: &[crate::analysis::memory::LiveAllocation],
    key: impl Fn(&crate::analysis::memory::LiveAllocation) -> Option<&str>,
) -> Vec<HolderRow> {
    let mut first: HashMap<&str, SliceRef> = HashMap::new();
    for a in live {
        if let (Some(k), Some(s)) = (key(a), a.slice) {
            first.entry(k).or_insert(s);
        }
    }
    holders
        .into_iter()
        .map(|h| HolderRow {
            slice: first.get(h.op.as_str()).copied(),
            op: h.op,
            bytes: h.bytes,
            count: h.count,
        })
        .collect()
}

#[wasm_bindgen]
impl Session {
    /// The devices with memory events (JSON list; empty when the trace was recorded without
    /// `profile_memory=True`): name, peaks and their times, capacity.
    pub fn memory_devices(&self) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let trace = l.trace();
        let ts = |e: u32| trace.memory.ts_ns[e as usize];
        let devices: Vec<DeviceInfo> = l
            .derived
            .memory_curves()
            .devices
            .iter()
            .filter_map(|d| {
                let peak = d.peak()?;
                let peak_reserved = d.peak_reserved()?;
                Some(DeviceInfo {
                    device: d.name(),
                    events: d.events.len(),
                    peak_allocated_bytes: d.allocated[peak],
                    peak_at_ns: ts(d.events[peak]),
                    peak_at_us: ts(d.events[peak]) as f64 / 1e3,
                    peak_reserved_bytes: d.reserved[peak_reserved],
                    peak_reserved_at_ns: ts(d.events[peak_reserved]),
                    capacity_bytes: d.capacity_bytes(trace),
                    totals_recorded: d.totals_recorded,
                    addresses_recorded: d.addresses_recorded,
                })
            })
            .collect();
        Ok(json(&devices))
    }

    /// What the memory events can show (JSON: `worth_a_chart`, and `note`, the words where the
    /// devices ran work and recorded no device memory worth a chart).
    pub fn memory_recorded(&self) -> Result<String, JsValue> {
        let l = self.loaded()?;
        Ok(json(&crate::analysis::memory::recorded::recorded(
            l.trace(),
            l.derived.memory_curves(),
        )))
    }

    /// Every device's curve over the timeline's current window, one value triple per pixel
    /// column of its width (`least allocated, largest allocated, largest reserved`, bytes; NaN
    /// before the device's first event), devices in `memory_devices` order. The columns are the
    /// timeline's own, so a spike narrower than a pixel still shows as its column's maximum.
    pub fn memory_columns(&mut self) -> Result<Vec<f64>, JsValue> {
        let l = self.loaded_mut()?;
        let vp = l.vp;
        let columns = vp.width_px.ceil().max(1.0) as u32;
        // Bucket edges on whole ns; the window's own edges may fall between two.
        let (t0, t1) = (vp.start_ns.floor() as i64, vp.end_ns().ceil() as i64);
        let key = (t0, t1, columns);
        if let Some((k, out)) = &l.memory_columns {
            if *k == key {
                return Ok(out.clone());
            }
        }
        let trace = l.derived.trace();
        let memory = l.derived.memory_curves();
        let n = columns as usize * PER_COLUMN;
        let mut out = vec![f64::NAN; memory.devices.len() * n];
        for (d, series) in memory.devices.iter().enumerate() {
            for p in series.columns(trace, t0, t1.max(t0 + 1), columns) {
                let o = d * n + p.column as usize * PER_COLUMN;
                out[o] = p.allocated_min_bytes as f64;
                out[o + 1] = p.allocated_max_bytes as f64;
                out[o + 2] = p.reserved_max_bytes as f64;
            }
        }
        l.memory_columns = Some((key, out.clone()));
        Ok(out)
    }

    /// What was live on `device` at time `t_ns` (ns from the trace start; NaN: at its allocated
    /// peak), JSON: the allocated and reserved bytes, the live bytes by allocating operator and by
    /// Python frame (adding up to the allocated bytes; bytes from before the trace are a holder of
    /// their own), and the `top` largest live allocations with their ages and the step they were
    /// allocated in when it had ended ("held since step N").
    pub fn memory_live(&self, device: &str, t_ns: f64, top: u32) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let trace = l.trace();
        let d = device_of(l.derived.memory(), device)?;
        let at_peak = t_ns.is_nan();
        let position = if at_peak {
            d.peak()
        } else {
            d.position_at(trace, t_ns as i64)
        };
        let mut out = LiveRows {
            device: device_name(d.device_type, d.device_id),
            at_ns: if at_peak { 0 } else { t_ns as i64 },
            event_at_ns: None,
            at_peak,
            allocated_bytes: 0,
            reserved_bytes: 0,
            totals_recorded: d.totals_recorded,
            addresses_recorded: d.addresses_recorded,
            holders: Vec::new(),
            frames: Vec::new(),
            live: Vec::new(),
            live_count: 0,
        };
        if let Some(p) = position {
            let e = d.events[p];
            let at = trace.memory.ts_ns[e as usize];
            if at_peak {
                out.at_ns = at;
            }
            out.event_at_ns = Some(at);
            out.allocated_bytes = d.allocated[p];
            out.reserved_bytes = d.reserved[p];
            // Every live allocation, largest first, so each holder finds its largest one's slice.
            let (holders, frames, mut live) =
                d.live_report(trace, &l.derived.steps().steps, p, usize::MAX);
            out.live_count = d
                .live_after(e)
                .iter()
                .filter(|&&i| d.allocations[i].alloc_event != NO_EVENT)
                .count();
            out.holders = with_slices(holders, &live, |a| Some(a.op.as_str()));
            out.frames = with_slices(frames, &live, |a| a.frame.as_deref());
            live.truncate(top as usize);
            out.live = live;
        }
        Ok(json(&out))
    }

    /// The allocation table of `device` as JSON `{names, rows}` (see [`AllocationTable`]), rows in
    /// allocation order (blocks allocated before the trace and freed inside it first): address,
    /// size, allocated at and by (operator and Python frame), freed at and by, lifetime, never
    /// freed inside the trace, and the allocating operator's slice.
    pub fn memory_allocations(&self, device: &str) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let trace = l.trace();
        let d = device_of(l.derived.memory(), device)?;
        let mut names = Names::default();
        let rows = d
            .table(trace)
            .into_iter()
            .map(|r| {
                (
                    format!("{:#x}", r.addr),
                    r.bytes,
                    r.allocated_at_us,
                    names.of(r.allocated_by),
                    r.frame.map(|f| names.of(f)),
                    r.freed_at_us,
                    r.freed_by.map(|f| names.of(f)),
                    r.lifetime_us,
                    r.never_freed,
                    r.slice.map(|s| [s.lane, s.index]),
                )
            })
            .collect();
        let table = AllocationTable {
            names: names.names,
            rows,
        };
        Ok(json(&table))
    }
}
