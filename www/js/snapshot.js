// A memory snapshot (`torch.cuda.memory._dump_snapshot`) shown in the page: opened like a trace
// (app.js tells it apart by its first bytes, load.js reads it into a SnapshotSession in its own
// worker), then the Active Memory Timeline of a device (snapshot-timeline.js), what is live at
// its peak by each grouping with the top holders, the allocator's segments and `oom` entries, and
// the diff with a second snapshot (snapshot-diff.js). Every figure is the report the worker
// returns, `sightline snapshot FILE --json` (its groups cut to the same top 10); bytes are shown
// as the CLI prints them, the exact count in each cell's `data-bytes` and title. Snapshot text
// (file and function names, annotations) is set as text, never parsed as HTML.

import { BandsChart, describeHit } from "./snapshot-timeline.js";
import { startSnapshotDiff } from "./snapshot-diff.js";
import { renderTabs } from "./table.js";
import { count, memory as bytes } from "./format.js";
import { GROUPINGS, groupTable } from "./snapshot-tables.js";

const $ = (id) => document.getElementById(id);

/** The snapshot shown; `window.sightline.snapshot` for tests and benchmarks. */
const state = {
  /** { worker, session, name, report } or null. */
  active: null,
  /** The device shown (an index into `report.devices`). */
  device: 0,
  grouping: "by_frame",
  chart: null,
  diff: null,
};

/**
 * Wires the snapshot view. Returns { show(loaded), close(), shown(), compareWith(file) }.
 * @param {import("./context.js").PageContext} hooks the page's context (context.js)
 */
export function startSnapshots(hooks) {
  state.chart = new BandsChart({
    canvas: /** @type {HTMLCanvasElement} */ ($("snapshot-timeline")),
    tooltip: $("snapshot-tooltip"),
    caption: $("snapshot-timeline-caption"),
    onPick: showAllocation,
  });
  state.diff = startSnapshotDiff(hooks, () => state.active);
  hooks.snapshot = state;
  $("snapshot-device").addEventListener("change", (ev) => showDevice(Number((/** @type {HTMLSelectElement} */ (ev.target)).value)));
  window.addEventListener("resize", () => state.active && state.chart.request());
  return { show, close, shown: () => !!state.active, compareWith: (file) => state.diff.compareWith(file) };
}

/** Ends the shown snapshot's worker and empties its views. */
function close() {
  state.diff.close();
  state.chart.detach();
  if (state.active) state.active.worker.terminate();
  state.active = null;
}

/** Shows a snapshot read into `loaded.worker` ({ worker, name, report }), in place of whatever was shown. */
async function show(loaded) {
  close();
  state.active = { ...loaded, session: loaded.worker.snapshot };
  const r = loaded.report;
  $("snapshot-name").textContent = loaded.name;
  $("snapshot-name").title = loaded.name;
  const s = r.stats;
  $("snapshot-headline").textContent = `${bytes(s.input_bytes)}${s.gzipped ? " gzip" : ""}, pickle protocol ${s.protocol}: ${count(r.entries)} trace entries on ${count(r.devices.length)} device(s), ${count(r.frames)} frames in ${count(r.stacks)} stacks, ${count(r.annotations)} annotations`;
  const damage = r.diagnostics.filter((d) => d.kind !== "unknown_key" && d.kind !== "unknown_action");
  $("snapshot-notice").hidden = damage.length === 0;
  $("snapshot-notice").textContent = damage.map((d) => `${d.detail} (${count(d.count)}×, first at byte ${count(d.first_offset)})`).join(" · ");
  const select = /** @type {HTMLSelectElement} */ ($("snapshot-device"));
  select.replaceChildren(...r.devices.map((d, i) => Object.assign(document.createElement("option"), { value: String(i), textContent: `device ${d.device}` })));
  select.disabled = r.devices.length < 2;
  renderSegments(r.segments);
  $("snapshot-allocation").replaceChildren();
  await showDevice(0);
}

async function showDevice(i) {
  const active = state.active;
  state.device = i;
  const d = active.report.devices[i];
  $("snapshot-timeline-panel").hidden = !d;
  renderPeak(d);
  renderOoms(d);
  if (!d) {
    state.chart.detach();
    return;
  }
  const [positions, palette] = await Promise.all([active.session.positions(d.device), active.worker.module.palette()]);
  if (state.active !== active) return;
  await state.chart.attach(active.session, d.device, positions, palette);
}

function renderPeak(d) {
  const host = $("snapshot-groups");
  if (!d) {
    $("snapshot-peak").textContent = "No allocator trace was recorded (record it with torch.cuda.memory._record_memory_history()); the segments below are the allocator's state when the snapshot was taken.";
    $("snapshot-peak").dataset.peakBytes = "";
    $("snapshot-tabs").replaceChildren();
    host.replaceChildren();
    return;
  }
  const at = d.peak_entry === null ? "at the start" : `after entry ${count(d.peak_entry)}${d.peak_time_us !== null ? ` (time_us ${count(d.peak_time_us)})` : ""}`;
  $("snapshot-peak").textContent = `Device ${d.device}: peak live ${bytes(d.peak_bytes)} ${at}; ${count(d.entries)} entries, ${count(d.allocs)} allocs, ${count(d.frees)} frees; ${bytes(d.before_bytes)} live when recording began, ${bytes(d.end_bytes)} at the end.`;
  $("snapshot-peak").dataset.peakBytes = String(d.peak_bytes);
  const select = (id) => {
    state.grouping = id;
    renderTabs($("snapshot-tabs"), GROUPINGS, id, select);
    host.replaceChildren(groupTable(d.at_peak[id], { id: `snapshot-${id}` }));
  };
  select(state.grouping);
}

function renderSegments(g) {
  const free = g.free_internal_bytes + g.free_external_bytes;
  const share = g.reserved_bytes ? ` (${((100 * g.free_external_bytes) / g.reserved_bytes).toFixed(1)} % of reserved is free between allocations: fragmentation)` : "";
  const summary = $("snapshot-segments-summary");
  summary.textContent = `${count(g.segments.length)} segments: reserved ${bytes(g.reserved_bytes)}, allocated ${bytes(g.allocated_bytes)}, free ${bytes(free)} (${bytes(g.free_internal_bytes)} inside allocations, ${bytes(g.free_external_bytes)} between)${share}.`;
  for (const k of ["reserved_bytes", "allocated_bytes", "free_internal_bytes", "free_external_bytes"]) summary.dataset[k.replace(/_(\w)/g, (_, c) => c.toUpperCase())] = String(g[k]);
  const table = document.createElement("table");
  table.className = "data";
  table.id = "snapshot-segments-table";
  const head = table.createTHead().insertRow();
  const cols = ["Device", "Address", "Stream", "Pool", "Kind", "Reserved", "Allocated", "Free inside", "Free between", "Blocks"];
  for (const [i, text] of cols.entries()) head.append(Object.assign(document.createElement("th"), { textContent: text, className: i >= 5 ? "num" : "" }));
  const body = table.createTBody();
  for (const s of g.segments) {
    const tr = body.insertRow();
    const kind = `${s.large ? "large" : "small"}${s.is_expandable ? ", expandable" : ""}`;
    for (const v of [s.device, `0x${s.address.toString(16)}`, s.stream, `(${s.pool_id.join(", ")})`, kind]) tr.insertCell().textContent = String(v);
    for (const k of ["reserved_bytes", "allocated_bytes", "free_internal_bytes", "free_external_bytes"]) {
      const td = tr.insertCell();
      td.className = "num";
      td.textContent = bytes(s[k]);
      td.title = `${count(s[k])} bytes`;
      td.dataset.value = String(s[k]);
    }
    Object.assign(tr.insertCell(), { className: "num", textContent: count(s.blocks) });
  }
  $("snapshot-segments").replaceChildren(table);
}

function renderOoms(d) {
  const host = $("snapshot-ooms");
  host.replaceChildren();
  if (!d || d.oom_count === 0) return;
  host.append(Object.assign(document.createElement("h3"), { textContent: `Out of memory: ${count(d.oom_count)} failed allocation(s) recorded${d.oom_count > d.ooms.length ? `, the first ${d.ooms.length} explained` : ""}` }));
  for (const o of d.ooms) {
    const p = document.createElement("p");
    p.className = "snapshot-oom";
    p.dataset.requestedBytes = String(o.requested_bytes);
    p.dataset.shortBytes = String(o.short_bytes);
    p.dataset.liveBytes = String(o.live_bytes);
    p.textContent = `At entry ${count(o.entry)}${o.time_us !== null ? ` (time_us ${count(o.time_us)})` : ""}, stream ${o.stream}: asked ${bytes(o.requested_bytes)}, the device had ${bytes(o.device_free_bytes)} free, ${bytes(o.short_bytes)} short. ${bytes(o.live_bytes)} was live then; the failed allocation came from ${o.frame || "no Python frame"}. What was live, by first user frame and by category:`;
    host.append(p, groupTable(o.live.by_frame), groupTable(o.live.by_category));
  }
}

/** A band clicked: its figures and whole stack in the panel under the timeline. */
function showAllocation(hit) {
  const host = $("snapshot-allocation");
  host.replaceChildren();
  for (const line of describeHit(hit)) host.append(Object.assign(document.createElement("p"), { textContent: line }));
  const a = hit.allocation;
  if (!a) return;
  host.dataset.sizeBytes = String(a.size_bytes);
  const extra = [a.compile_context && `compile context: ${a.compile_context}`, a.user_metadata && `user metadata: ${a.user_metadata}`].filter(Boolean);
  for (const line of extra) host.append(Object.assign(document.createElement("p"), { textContent: line }));
  const list = document.createElement("ol");
  list.className = "snapshot-frames";
  for (const f of a.frames) list.append(Object.assign(document.createElement("li"), { textContent: f }));
  if (a.frames.length) host.append(Object.assign(document.createElement("p"), { className: "muted", textContent: "Stack, innermost frame first:" }), list);
}
