// The group tables of a memory snapshot's page (snapshot.js) and of its diff (snapshot-diff.js):
// what is live at a moment by one grouping, or how each group changed. Keys are snapshot text,
// set as text.

import { count, memory as bytes } from "./format.js";

/** The groupings of a report's `at_peak` and `live`, in the order the CLI prints them. */
export const GROUPINGS = [
  { id: "by_frame", title: "First user frame" },
  { id: "by_line", title: "File and line" },
  { id: "by_file", title: "File" },
  { id: "by_annotation", title: "Annotation" },
  { id: "by_category", title: "Category" },
  { id: "by_compile_context", title: "Compile context" },
];

/** The columns of a group table: live bytes and allocations. */
const LIVE = [
  { label: "Live", kind: "bytes", value: (g) => g.bytes },
  { label: "Allocations", kind: "count", value: (g) => g.allocations },
];

/** How a cell of `kind` reads: bytes as the CLI prints them, a change with its sign. */
function cellText(kind, v) {
  if (kind === "count") return count(v);
  return kind === "delta" && v > 0 ? `+${bytes(v)}` : bytes(v);
}

/** A table of groups, one row each: its key, then `columns`; each cell's `data-value` holds the exact figure. */
export function groupTable(rows, { id = "", columns = LIVE } = {}) {
  const table = document.createElement("table");
  table.className = "data";
  if (id) table.id = id;
  const head = table.createTHead().insertRow();
  head.append(Object.assign(document.createElement("th"), { textContent: "Group" }));
  for (const c of columns) head.append(Object.assign(document.createElement("th"), { textContent: c.label, className: "num" }));
  const body = table.createTBody();
  for (const g of rows) {
    const tr = body.insertRow();
    Object.assign(tr.insertCell(), { textContent: g.key, className: "group-key" });
    for (const c of columns) {
      const v = c.value(g);
      const td = Object.assign(tr.insertCell(), { className: "num", textContent: cellText(c.kind, v) });
      td.dataset.value = String(v);
      if (c.kind !== "count") td.title = `${count(v)} bytes`;
    }
  }
  return table;
}

