// The Range tab: a time range selected on the timeline (shift-drag, `Session::select_range`),
// its slices grouped by name. A name's calls nest in each other and run on several threads at
// once, so their times inside the range, added up, can exceed the range itself; the tab gives
// both figures and says which is which: "In range", the time covered by at least one call
// (nested and parallel calls counted once, `covered_ns`), and "Sum of calls in range".

import { renderTable } from "./table.js";
import { count, duration } from "./format.js";

const COLUMNS = [
  { key: "name", label: "Name", kind: "text" },
  { key: "category", label: "Category", kind: "text" },
  { key: "count", label: "Calls", kind: "int", title: "Slices of this name that overlap the range" },
  { key: "covered_ns", label: "In range", kind: "ns", title: "Time inside the range during which at least one of these calls runs: nested and parallel calls counted once" },
  { key: "in_range_ns", label: "Sum of calls in range", kind: "ns", title: "Each call's time inside the range, added up over its calls: nested and parallel calls each count, so this can exceed the range" },
  { key: "total_ns", label: "Sum of calls", kind: "ns", title: "The calls' whole durations added up, inside the range or not" },
  { key: "max_ns", label: "Longest call", kind: "ns" },
];

/** Renders the range table `t` (the Session's JSON, parsed; null: none selected) into `host`. */
export function renderRange(host, t, onRowClick) {
  if (!t) {
    host.replaceChildren(Object.assign(document.createElement("p"), { className: "muted", textContent: "Shift-drag on the timeline to aggregate a time range by name." }));
    return;
  }
  const rows = t.rows.map((r) => Object.fromEntries(COLUMNS.map((c) => [c.key, r[c.key]])));
  renderTable(host, rows, {
    id: "range-table",
    csvName: "range.csv",
    columns: COLUMNS,
    sortKey: "covered_ns",
    onRowClick,
    caption: `${duration(t.end_ns - t.start_ns)} from ${duration(t.start_ns)}: ${count(t.slices)} slices, ${count(t.groups)} names · "In range": time covered by a name's calls, nested calls counted once`,
  });
}
