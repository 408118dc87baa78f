//! What the page's panels receive that no other front end asks for: the roofline and a FLOPs
//! row's calls, the memory chart's legend, what was live at a time, the allocation table, a
//! tooltip, the selection, what a click did and the frame's constants. `src/web/` fills them; they are declared here,
//! natively, so that the page's TypeScript types are generated from them with the rest
//! (`tests/generated_types.rs`).

use crate::analysis::columns::Column;
use crate::analysis::flops::peaks::{Peaks, Roof};
use crate::analysis::flops::FlopsRow;
use crate::analysis::idle::Gap;
use crate::analysis::memory::LiveAllocation;
use crate::model::SliceRef;
use crate::view::details::SliceDetails;
use serde::Serialize;

/// The roofline: the FLOPs rows, the device and its roofs.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Roofline {
    /// The rows' declared columns (`analysis::columns`), which the page lays the tables out from.
    pub columns: &'static [Column],
    /// The `deviceProperties` name, if the trace has one.
    pub device: Option<String>,
    /// The roof table's entry for it, if it is in the table.
    pub peaks: Option<Peaks>,
    /// The compute ceilings of the dtypes the rows run in.
    pub roofs: Vec<Roof>,
    /// As `sightline flops --json`, one per op and shape, most kernel time first.
    pub rows: Vec<FlopsRow>,
}

/// One call of a FLOPs row, for the list under the roofline.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FlopsCall {
    pub lane: u32,
    pub index: u32,
    pub start_ns: i64,
    pub dur_ns: i64,
}

/// One device as the chart's legend shows it.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeviceInfo {
    /// As PyTorch names it: `cpu`, `cuda:0`.
    pub device: String,
    pub events: usize,
    pub peak_allocated_bytes: i64,
    pub peak_at_ns: i64,
    pub peak_at_us: f64,
    pub peak_reserved_bytes: i64,
    pub peak_reserved_at_ns: i64,
    pub capacity_bytes: Option<u64>,
    pub totals_recorded: bool,
    pub addresses_recorded: bool,
}

/// Live bytes of one operator (or frame) at a time, with the allocating slice of its largest
/// live allocation, for the page to reveal.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HolderRow {
    pub op: String,
    pub bytes: i64,
    pub count: usize,
    pub slice: Option<SliceRef>,
}

/// What was live on one device at a time (after its last memory event at or before it).
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiveRows {
    pub device: String,
    /// The time asked about, ns from the trace start.
    pub at_ns: i64,
    /// The memory event the values are after (none before the device's first event).
    pub event_at_ns: Option<i64>,
    pub at_peak: bool,
    pub allocated_bytes: i64,
    pub reserved_bytes: i64,
    pub totals_recorded: bool,
    pub addresses_recorded: bool,
    pub holders: Vec<HolderRow>,
    pub frames: Vec<HolderRow>,
    pub live: Vec<LiveAllocation>,
    pub live_count: usize,
}

/// The allocation table compactly, for tables of a few hundred thousand rows: names once, and
/// each row an array `[addr (hex text: a JavaScript number cannot hold every 64-bit address),
/// bytes, allocated_at_us, allocated_by, frame, freed_at_us, freed_by, lifetime_us, never_freed,
/// slice]` where the three names are indices into `names` (or null) and `slice` is
/// `[lane, index]` of the allocating operator (or null).
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AllocationTable {
    pub names: Vec<String>,
    pub rows: Vec<AllocationCells>,
}

pub type AllocationCells = (
    String,
    i64,
    Option<f64>,
    u32,
    Option<u32>,
    Option<f64>,
    Option<u32>,
    Option<f64>,
    bool,
    Option<[u32; 2]>,
);

// The three below were written with `json!`, whose keys come out sorted: their fields are in that
// order, so the JSON is what it was.

/// A tooltip: a title and its lines (a slice's duration, category, lane and start; an idle gap's
/// length and what the CPU was doing).
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Tooltip {
    pub lines: Vec<String>,
    pub title: String,
}

/// What a click on the timeline did: selected a slice (its details), folded or unfolded a
/// process's group (its pid) or a deep lane (its index), or selected an idle gap's time range.
/// The page reads it by its one member (`group`, `fold_lane`, `gap`), else as a slice's details;
/// a click that cleared the selection answers `null`.
#[derive(Serialize)]
#[serde(untagged)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Clicked {
    Slice(Box<SliceDetails>),
    Group { group: u32 },
    FoldLane { fold_lane: u32 },
    Gap { gap: Box<Gap> },
}

/// The selected slice (`[lane, index]`) and time range (`[start_ns, end_ns]`), for links.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Selection {
    pub range: Option<[f64; 2]>,
    pub slice: Option<[u32; 2]>,
}

/// The geometry and flag values a painter needs to read a frame (`view::frame`,
/// `view::tracks`), so the page never hard-codes them.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FrameConstants {
    pub box_px: f64,
    pub flag_dim: u32,
    pub flag_mark: u32,
    pub flag_match: u32,
    pub flag_path: u32,
    pub flag_selected: u32,
    pub folded_rows: u32,
    pub header_px: f64,
    pub rect_stride: usize,
    pub row_px: f64,
}

impl FrameConstants {
    pub const PAGE: FrameConstants = FrameConstants {
        rect_stride: super::frame::RECT_STRIDE,
        flag_mark: super::frame::FLAG_MARK,
        flag_match: super::frame::FLAG_MATCH,
        flag_dim: super::frame::FLAG_DIM,
        flag_selected: super::frame::FLAG_SELECTED,
        flag_path: super::frame::FLAG_PATH,
        box_px: super::tracks::BOX_PX,
        row_px: super::tracks::ROW_PX,
        header_px: super::tracks::HEADER_PX,
        folded_rows: super::tracks::FOLDED_ROWS,
    };
}
