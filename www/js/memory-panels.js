// What held memory: the live allocations at a time (`Session::memory_live`), grouped by the
// allocating operator and by Python frame, with the largest allocations, their ages and the step
// they were allocated in; and the allocation table (`Session::memory_allocations`) as a tab.
// Everything from the trace is set as text.

import { renderTable } from "./table.js";
import { bytes, count, duration } from "./format.js";
import { el } from "./dom.js";

// A row's allocating slice, kept under a symbol so that the table neither shows it as a column nor
// writes it to the CSV.
const SLICE = Symbol("slice");

/**
 * Renders `live` (memory_live's JSON) into `host`. onSlice(lane, index): a row whose allocation
 * (or whose group's largest allocation) has an allocating operator slice was clicked.
 */
export function renderLive(host, live, onSlice) {
  host.replaceChildren();
  const when = live.at_peak ? `at its peak, ${duration(live.at_ns)}` : `at ${duration(live.at_ns)}`;
  const head = el("p", "memory-at");
  head.textContent = `${live.device} ${when}: ${bytes(live.allocated_bytes)} allocated, ${bytes(live.reserved_bytes)} reserved, ${count(live.live_count)} live allocations seen allocated`;
  head.dataset.allocatedBytes = String(live.allocated_bytes);
  host.append(head);
  if (live.event_at_ns === null) {
    host.append(el("p", "muted", "No memory event of this device before this time."));
    return;
  }
  if (!live.totals_recorded || !live.addresses_recorded) {
    host.append(el("p", "muted", "This trace has no allocation addresses or totals (PyTorch before 1.10): live allocations cannot be told apart."));
    return;
  }
  const click = (r) => r[SLICE] && onSlice(r[SLICE].lane, r[SLICE].index);
  const group = (id, title, rows, key, csvName) => {
    host.append(el("h3", "", title));
    const box = el("div");
    host.append(box);
    renderTable(box, rows.map((h) => ({ [key]: h.op, bytes: h.bytes, share_pct: live.allocated_bytes ? (100 * h.bytes) / live.allocated_bytes : 0, allocations: h.count, [SLICE]: h.slice })), {
      id,
      csvName,
      sortKey: "bytes",
      onRowClick: click,
      caption: "click a row to select its largest allocation's operator",
    });
  };
  group("memory-holders", "By operator that allocated it", live.holders, "operator", "memory-by-operator.csv");
  if (live.frames.length) group("memory-frames", "By Python frame", live.frames, "frame", "memory-by-frame.csv");
  host.append(el("h3", "", "Largest live allocations"));
  const box = el("div");
  host.append(box);
  const rows = live.live.map((a) => ({
    bytes: a.bytes,
    operator: a.op,
    frame: a.frame ?? "",
    allocated_at_us: a.allocated_at_us,
    age_us: a.age_us,
    held_since: a.held_since_step === null ? "" : `step ${a.held_since_step}`,
    addr: `0x${a.addr.toString(16)}`,
    [SLICE]: a.slice,
  }));
  renderTable(box, rows, { id: "memory-live", csvName: "memory-live.csv", sortKey: "bytes", onRowClick: click, caption: "\"held since step N\": allocated in a step that had ended" });
}

/**
 * The allocation table of one device into `host`: `table` is memory_allocations' `{names, rows}`
 * (each row an array, names by index). A device picker is shown when the trace has more than one
 * (onDevice(name) switches).
 */
export function renderAllocations(host, table, { device, devices, onDevice, onSlice }) {
  const name = (i) => (i === null ? "" : table.names[i]);
  const rows = table.rows.map(([addr, size, at, by, frame, freedAt, freedBy, lifetime, never, slice]) => ({
    addr,
    bytes: size,
    allocated_at_us: at,
    allocated_by: name(by),
    frame: name(frame),
    freed_at_us: freedAt,
    freed_by: name(freedBy),
    lifetime_us: lifetime,
    never_freed: never ? "never freed" : "",
    [SLICE]: slice && { lane: slice[0], index: slice[1] },
  }));
  const never = rows.filter((r) => r.never_freed).length;
  renderTable(host, rows, {
    id: "memory-allocations",
    csvName: `allocations-${device.replace(/[^A-Za-z0-9]+/g, "_")}.csv`,
    onRowClick: (r) => r[SLICE] && onSlice(r[SLICE].lane, r[SLICE].index),
    caption: `${device}: ${count(rows.length)} allocations, ${count(never)} never freed inside the trace`,
    empty: "No allocations with addresses on this device.",
  });
  if (devices.length > 1) {
    const pick = document.createElement("select");
    pick.id = "memory-device";
    for (const d of devices) pick.append(Object.assign(document.createElement("option"), { value: d, textContent: d, selected: d === device }));
    pick.addEventListener("change", () => onDevice(pick.value));
    host.querySelector(".table-tools").prepend(pick);
  }
}
