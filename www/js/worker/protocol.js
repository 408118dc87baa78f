// The calls a worker's Session answers, declared once: the page's clients (client.js) send only
// these names, and the worker (session-worker.js) refuses any other, so a message can reach no
// method of the module that the page does not declare. Each is a `#[wasm_bindgen]` method of
// src/web/ (a trace's `Session`, a memory snapshot's `SnapshotSession`) or a module-level export.

/** A trace's Session (src/web/): what client.js's SessionClient asks. */
export const SESSION_CALLS = /** @type {const} */ ([
  "feed",
  "expect_bytes",
  "bytes_fed",
  "events_read",
  "finish",
  "heap_bytes",
  "start_part",
  "take_part",
  "absorb_part",
  "analyses_room",
  "analyse_step",
  "steps",
  "idle",
  "findings",
  "recording",
  "ops",
  "kernels",
  "labels",
  "modules",
  "graphs",
  "compiled",
  "call_tree",
  "names_table",
  "digest",
  "capture_of",
  "capture_pairs",
  "use_capture",
  "critical_path",
  "show_critical_path",
  "what_if",
  "flops_report",
  "flops_calls",
  "memory_devices",
  "memory_recorded",
  "memory_columns",
  "memory_live",
  "memory_allocations",
  "fold_cpu",
  "window_ns",
  "set_window",
  "origin_ns",
  "selection",
  "select_range_ns",
  "resize",
  "zoom_at",
  "pan",
  "reset_view",
  "center_on",
  "fit_selection",
  "frame",
  "tooltip",
  "click",
  "select",
  "details",
  "full_name",
  "clear_selection",
  "search",
  "highlight_name",
  "search_step",
  "select_range",
  "overview",
  "show_evidence",
  "has_python_frames",
  "set_python_frames",
]);

/** A memory snapshot's SnapshotSession (src/web/snapshot.rs): what SnapshotClient asks. */
export const SNAPSHOT_CALLS = /** @type {const} */ ([
  "feed",
  "expect_bytes",
  "finish",
  "report",
  "peaks",
  "positions",
  "bands_layout",
  "bands_hit",
]);

/** The module's own exports (src/web/mod.rs and beside it): what ModuleClient asks. */
export const MODULE_CALLS = /** @type {const} */ ([
  "version",
  "simd128",
  "memory_bytes",
  "palette",
  "constants",
  "wait_kinds",
  "splittable",
  "event_boundary",
  "diff_digests",
  "ranks_report",
  "diff_snapshots",
  "warm_up",
]);

/** @typedef {typeof SESSION_CALLS[number]} SessionCall */
/** @typedef {typeof SNAPSHOT_CALLS[number]} SnapshotCall */
/** @typedef {typeof MODULE_CALLS[number]} ModuleCall */

const SESSION = new Set(/** @type {readonly string[]} */ (SESSION_CALLS));
const SNAPSHOT = new Set(/** @type {readonly string[]} */ (SNAPSHOT_CALLS));
const MODULE = new Set(/** @type {readonly string[]} */ (MODULE_CALLS));

/**
 * Whether `method` is a declared call of `target`: "module", or "session" holding a memory
 * snapshot's SnapshotSession (`snapshot`) or a trace's Session.
 * @param {string} target @param {string} method @param {boolean} snapshot
 */
export function declared(target, method, snapshot) {
  if (target === "module") return MODULE.has(method);
  return target === "session" && (snapshot ? SNAPSHOT : SESSION).has(method);
}
