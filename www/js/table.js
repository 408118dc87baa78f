// A generic table for the analyses' rows (arrays of flat objects, as serde writes them):
// columns inferred from the keys (or given), click a header to sort, a filter box, CSV export,
// numbers formatted by unit. Values from the trace are set as text, never as HTML.

import { formatValue, kindOf, label } from "./format.js";

const MAX_ROWS = 1000;

/**
 * Renders `rows` into `host` (emptied first) and returns the table element.
 * options: { id, columns: [{key, label, kind}], onRowClick(row, tr), csvName, caption }
 */
export function renderTable(host, rows, options = {}) {
  host.replaceChildren();
  const columns = options.columns || inferColumns(rows);
  const tools = el("div", "table-tools");
  const filter = document.createElement("input");
  filter.type = "search";
  filter.placeholder = "Filter rows";
  const shown = el("span", "muted");
  const csv = document.createElement("button");
  csv.type = "button";
  csv.textContent = "CSV";
  csv.title = "Download these rows as CSV";
  tools.append(filter, shown, csv);
  if (options.caption) tools.append(el("span", "muted", options.caption));
  const table = el("table", "data");
  if (options.id) table.id = options.id;
  const thead = table.createTHead();
  const headRow = thead.insertRow();
  const tbody = table.createTBody();
  host.append(tools, table);

  let sortKey = options.sortKey ?? null;
  let sortDir = options.sortDir ?? -1;
  let visible = rows;

  for (const c of columns) {
    const th = document.createElement("th");
    th.textContent = c.label;
    th.className = isNumeric(c.kind) ? "num" : "";
    th.addEventListener("click", () => {
      sortDir = sortKey === c.key ? -sortDir : isNumeric(c.kind) ? -1 : 1;
      sortKey = c.key;
      update();
    });
    headRow.append(th);
  }

  function update() {
    const q = filter.value.trim().toLowerCase();
    visible = q
      ? rows.filter((r) => columns.some((c) => !isNumeric(c.kind) && String(r[c.key] ?? "").toLowerCase().includes(q)))
      : rows.slice();
    if (sortKey !== null) {
      const k = sortKey;
      visible.sort((a, b) => compare(a[k], b[k]) * sortDir);
    }
    headRow.querySelectorAll("th").forEach((th, i) => {
      if (columns[i].key === sortKey) th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      else th.removeAttribute("aria-sort");
    });
    tbody.replaceChildren();
    const frag = document.createDocumentFragment();
    for (const r of visible.slice(0, MAX_ROWS)) {
      const tr = document.createElement("tr");
      for (const c of columns) {
        const td = document.createElement("td");
        const v = r[c.key];
        td.textContent = formatValue(c.kind, v);
        td.className = isNumeric(c.kind) ? "num" : "text";
        if (!isNumeric(c.kind) && v !== undefined && v !== null) td.title = String(v);
        tr.append(td);
      }
      if (options.onRowClick) {
        tr.addEventListener("click", () => {
          tbody.querySelectorAll("tr.active").forEach((x) => x.classList.remove("active"));
          tr.classList.add("active");
          options.onRowClick(r, tr);
        });
      }
      frag.append(tr);
    }
    tbody.append(frag);
    const more = visible.length > MAX_ROWS ? `, first ${MAX_ROWS} shown` : "";
    shown.textContent = `${visible.length.toLocaleString("en-US")} rows${more}`;
  }

  filter.addEventListener("input", update);
  csv.addEventListener("click", () => download(options.csvName || "table.csv", toCsv(columns, visible)));
  update();
  return table;
}

/** Columns from the keys of the first rows whose values are scalars. */
export function inferColumns(rows) {
  const keys = [];
  const sample = {};
  for (const r of rows.slice(0, 20)) {
    for (const [k, v] of Object.entries(r)) {
      if (v !== null && typeof v === "object") continue;
      if (!(k in sample) || sample[k] === null) sample[k] = v;
      if (!keys.includes(k)) keys.push(k);
    }
  }
  return keys.map((k) => ({ key: k, label: label(k), kind: kindOf(k, sample[k]) }));
}

function isNumeric(kind) {
  return kind !== "text";
}

function compare(a, b) {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a ?? "").localeCompare(String(b ?? ""));
}

/** RFC 4180 CSV with raw values (ns stay ns), so a spreadsheet gets numbers. */
export function toCsv(columns, rows) {
  const cell = (v) => {
    const s = v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [columns.map((c) => cell(c.key)).join(",")];
  for (const r of rows) lines.push(columns.map((c) => cell(r[c.key])).join(","));
  return lines.join("\r\n") + "\r\n";
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
