//! The allocation table: each `[memory]` allocation paired with its free by address, and who made it.
//!
//! Pairing: per device, in event order, an allocation (`Bytes` > 0) opens its `Addr`; the next free
//! (`Bytes` < 0) of that address closes it. A free whose address was never opened inside the trace is
//! a block allocated before the trace began: it is listed with no allocation time. An allocation still
//! open at the end of the trace is *never freed* (inside the trace) and flagged.
//!
//! Who: the innermost `cpu_op` on the allocating thread enclosing the event (as `key_averages`
//! charges memory to operators), and the innermost `python_function` frame there when `with_stack`
//! recorded frames.

use crate::analysis::links::{Kind, Links};
use crate::model::{SliceRef, StrId, Trace};
use std::collections::HashMap;

/// No event: an allocation from before the trace, or one never freed.
pub const NO_EVENT: u32 = u32::MAX;

/// One allocation of one device, columns in [`Allocations`].
#[derive(Debug, Clone, Copy)]
pub struct Allocation {
    pub addr: i64,
    pub bytes: i64,
    /// Index into [`Trace::memory`] of the allocation ([`NO_EVENT`]: before the trace).
    pub alloc_event: u32,
    /// Index into [`Trace::memory`] of the free ([`NO_EVENT`]: not freed inside the trace).
    pub free_event: u32,
}

/// The operator and Python frame enclosing a memory event (by its index in [`Trace::memory`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Site {
    pub op: Option<SliceRef>,
    pub frame: Option<SliceRef>,
}

/// The enclosing operator and frame of one memory event.
pub fn site_of(trace: &Trace, links: &Links, event: u32) -> Site {
    let m = &trace.memory;
    let Some(&lane) = m.lane.get(event as usize) else {
        return Site::default();
    };
    let Some(l) = trace.lanes.get(lane as usize) else {
        return Site::default();
    };
    let mut cur =
        crate::parse::enclosing_slice(&trace.slices_of(l), m.ts_ns[event as usize]).map(|i| {
            SliceRef {
                lane,
                index: i as u32,
            }
        });
    let mut site = Site::default();
    while let Some(r) = cur {
        match links.kinds.of_cat(trace.slices_of(l).cat[r.index as usize]) {
            Kind::CpuOp if site.op.is_none() => site.op = Some(r),
            Kind::Python if site.frame.is_none() => site.frame = Some(r),
            _ => {}
        }
        if site.op.is_some() && site.frame.is_some() {
            break;
        }
        cur = links.parent(r);
    }
    site
}

/// The allocations of one device, in the order of their allocation (those from before the trace
/// first, in the order of their free).
pub fn pair(trace: &Trace, events: &[u32]) -> Vec<Allocation> {
    let m = &trace.memory;
    let mut open: HashMap<i64, usize> = HashMap::new();
    let mut before: Vec<Allocation> = Vec::new();
    let mut out: Vec<Allocation> = Vec::new();
    for &e in events {
        let (bytes, addr) = (m.bytes[e as usize], m.addr[e as usize]);
        if bytes > 0 {
            // An address allocated again without a free in between (a free the trace lost): the
            // older block stays unpaired and is listed as never freed.
            open.insert(addr, out.len());
            out.push(Allocation {
                addr,
                bytes,
                alloc_event: e,
                free_event: NO_EVENT,
            });
        } else if bytes < 0 {
            match open.remove(&addr) {
                Some(i) => out[i].free_event = e,
                None => before.push(Allocation {
                    addr,
                    bytes: -bytes,
                    alloc_event: NO_EVENT,
                    free_event: e,
                }),
            }
        }
    }
    before.extend(out);
    before
}

/// Interned name of a slice, or [`StrId::NONE`].
pub fn name_of(trace: &Trace, r: Option<SliceRef>) -> StrId {
    r.map_or(StrId::NONE, |r| trace.columns.name[trace.row(r)])
}
