// A generic table for the analyses' rows (arrays of flat objects, as serde writes them):
// columns as the core declares them (`declaredColumns`: the tables that arrive with `columns`),
// else given or inferred from the keys; click a header to sort, a filter box, CSV export,
// numbers formatted by unit. Values from the trace are set as text, never as HTML.

import { declaredLabel, formatValue, kindOf, label, shortName, unitKind } from "./format.js";
import { el } from "./dom.js";

const MAX_ROWS = 1000;

/**
 * A table's column: the row's key, its header (`label`, else the key), how its values are
 * formatted and sorted (`kind`, format.js `kindOf`), and the header's hover text.
 * @typedef {object} Column
 * @property {string} key
 * @property {string} [label]
 * @property {string} [kind]
 * @property {string} [title]
 */

/** Fills `nav` with one tab button per entry of `tabs` ({id, title}), `selected` marked; a click
 * calls `onSelect(id)`, which is expected to call this again. */
export function renderTabs(nav, tabs, selected, onSelect) {
  nav.replaceChildren();
  for (const t of tabs) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = t.title;
    b.setAttribute("role", "tab");
    b.setAttribute("aria-selected", String(t.id === selected));
    b.addEventListener("click", () => onSelect(t.id));
    nav.append(b);
  }
}

/**
 * Renders `rows` into `host` (emptied first) and returns the table element.
 * options: { id, columns: [{key, label, kind, title}], onRowClick(row, tr), csvName, caption }
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
  if (!rows.length) host.append(el("p", "muted", options.empty || "Nothing to list in this trace."));

  let sortKey = options.sortKey ?? null;
  let sortDir = options.sortDir ?? -1;
  let visible = rows;

  for (const c of columns) {
    const th = document.createElement("th");
    th.textContent = c.label;
    th.className = isNumeric(c.kind) ? "num" : "";
    if (c.title) th.title = c.title;
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
        // Names shown short (the full one on hover, and the filter reads it).
        td.textContent = c.key === "name" ? shortName(formatValue(c.kind, v)) : formatValue(c.kind, v);
        td.className = isNumeric(c.kind) ? "num" : "text";
        if (!isNumeric(c.kind) && v !== undefined && v !== null) td.title = formatValue(c.kind, v);
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

/**
 * A declared table's columns (the `columns` beside its rows) as renderTable takes them: the
 * label, the unit's format, what each holds on hover. Lists and objects (launchers, spreads)
 * are not cells; a column of JSON data (input shapes) is shown as Python prints it.
 * @param {import("./format.js").Declared[]} declared
 * @returns {Column[]}
 */
export function declaredColumns(declared) {
  return declared.filter((c) => typeof c.type === "string").map((c) => ({ key: c.key, label: declaredLabel(c.label), kind: unitKind(c.unit), title: c.about }));
}

/**
 * The columns a view shows, by key in its order, headed and formatted as a table declares them:
 * `base.calls` is the member `calls` of the object column `base`, headed "Base Calls". A key the
 * declaration lacks (a column the request left out, as input shapes) is left out.
 * @param {import("./format.js").Declared[]} declared
 * @param {string[]} keys
 * @returns {Column[]}
 */
export function pickColumns(declared, keys) {
  return keys.flatMap((key) => {
    const [outer, inner] = key.split(".");
    const c = declared.find((x) => x.key === outer);
    if (!c) return [];
    const p = inner ? (c.parts || []).find((x) => x.key === inner) : null;
    if (inner && !p) return [];
    const label = p ? `${declaredLabel(c.label)} ${p.label}` : declaredLabel(c.label);
    const of = p || c;
    return [{ key, label, kind: unitKind(of.unit), title: of.about }];
  });
}

/** A row's value under each column's key (`base.calls` from `row.base.calls`); lists and objects as text. */
export function flatRow(row, columns) {
  return Object.fromEntries(
    columns.map(({ key }) => {
      const [outer, inner] = key.split(".");
      const v = inner ? row[outer]?.[inner] : row[outer];
      return [key, v !== null && typeof v === "object" ? JSON.stringify(v) : v];
    }),
  );
}

/**
 * Columns from the keys of the first rows whose values are scalars.
 * @returns {Column[]}
 */
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

/**
 * The top-down call tree (CallTree JSON: nodes with children indices, roots, and the nodes'
 * declared columns) as a table whose rows open and close; children are made when a row is first
 * opened.
 * options: { id, onRowClick(node) }
 */
export function renderTree(host, tree, options = {}) {
  host.replaceChildren();
  // The declared figures (calls and times; not the name, kind or the links between nodes),
  // device time only where the trace has some.
  const cols = declaredColumns(tree.columns)
    .filter((c) => !["name", "kind", "parent", "children"].includes(c.key))
    .filter((c) => !c.key.startsWith("device") || tree.nodes.some((n) => n[c.key] > 0))
    .map((c) => [c.key, c.label, c.kind]);
  const tools = el("div", "table-tools");
  const expandAll = document.createElement("button");
  expandAll.type = "button";
  expandAll.textContent = "Open 3 levels";
  const csv = document.createElement("button");
  csv.type = "button";
  csv.textContent = "CSV";
  tools.append(expandAll, csv, el("span", "muted", `${tree.nodes.length.toLocaleString("en-US")} paths; Python frames count as nodes`));
  const table = el("table", "data calltree");
  if (options.id) table.id = options.id;
  const head = table.createTHead().insertRow();
  for (const label of ["Name", "Kind", ...cols.map((c) => c[1])]) {
    const th = document.createElement("th");
    th.textContent = label;
    if (label !== "Name" && label !== "Kind") th.className = "num";
    head.append(th);
  }
  const tbody = table.createTBody();
  host.append(tools, table);

  const rowOf = new Map();
  function makeRow(i, depth) {
    const n = tree.nodes[i];
    const tr = document.createElement("tr");
    tr.dataset.depth = depth;
    const name = document.createElement("td");
    name.className = "text";
    name.style.paddingLeft = `${6 + depth * 14}px`;
    const tw = el("span", "twisty", n.children.length ? "▸" : "");
    name.append(tw, document.createTextNode(shortName(n.name)));
    name.title = n.name;
    const kind = el("td", "text", n.kind);
    tr.append(name, kind);
    for (const [k, , kindOf] of cols) {
      const td = el("td", "num", formatValue(kindOf, n[k]));
      tr.append(td);
    }
    tr.addEventListener("click", (ev) => {
      if (ev.target === tw || ev.detail === 2 || !options.onRowClick) toggle(i, depth);
      else options.onRowClick(n);
    });
    tw.addEventListener("click", (ev) => {
      ev.stopPropagation();
      toggle(i, depth);
    });
    rowOf.set(i, { tr, tw, open: false });
    return tr;
  }
  function toggle(i, depth) {
    const r = rowOf.get(i);
    const n = tree.nodes[i];
    if (!n.children.length) return;
    if (r.open) {
      // Remove every row below this one that is deeper.
      let next = r.tr.nextElementSibling;
      while (next && Number(next.dataset.depth) > depth) {
        const after = next.nextElementSibling;
        next.remove();
        next = after;
      }
      for (const c of descendants(i)) rowOf.delete(c);
      r.open = false;
      r.tw.textContent = "▸";
    } else {
      const frag = document.createDocumentFragment();
      for (const c of n.children.slice(0, 500)) frag.append(makeRow(c, depth + 1));
      r.tr.after(frag);
      r.open = true;
      r.tw.textContent = "▾";
    }
  }
  function descendants(i) {
    const out = [];
    const stack = [...tree.nodes[i].children];
    while (stack.length) {
      const c = stack.pop();
      out.push(c);
      stack.push(...tree.nodes[c].children);
    }
    return out;
  }
  for (const r of tree.roots.slice(0, 500)) tbody.append(makeRow(r, 0));
  expandAll.addEventListener("click", () => {
    for (let level = 0; level < 3; level++) {
      for (const [i, r] of [...rowOf]) {
        if (!r.open && Number(r.tr.dataset.depth) === level) toggle(i, level);
      }
    }
  });
  csv.addEventListener("click", () => {
    const rows = [];
    const walk = (i, path) => {
      const n = tree.nodes[i];
      const p = path ? `${path};${n.name}` : n.name;
      rows.push({ path: p, kind: n.kind, ...Object.fromEntries(cols.map(([k]) => [k, n[k]])) });
      for (const c of n.children) walk(c, p);
    };
    for (const r of tree.roots) walk(r, "");
    download("calltree.csv", toCsv([{ key: "path" }, { key: "kind" }, ...cols.map(([k]) => ({ key: k }))], rows));
  });
  return table;
}
