// The Modules tab (as the TensorBoard plugin's Module view): the nn.Module tree that a trace
// recorded with `with_modules=True` holds, from `table("modules")` (ModuleTable: rows in tree
// order, parents first). A table whose rows open and close (calls, host total and self, device
// total and self, backward calls and time), and an icicle above it: one SVG row per depth, each
// module as wide as its device total (its host total when the trace has no device time), inside
// its parent. A click on a row or a box highlights the module's frames on the timeline (slices
// named `nn.Module: NAME`, `Session::highlight_name`) and says how many there are. The tab is
// listed only once the table is known to have rows. Names from the trace are set as text only
// (textContent, SVG <title>).

import { count, formatValue } from "./format.js";
import { el } from "./dom.js";
import { declaredColumns } from "./table.js";

const SVG = "http://www.w3.org/2000/svg";
const ROW_PX = 18;
/** Rows shown open at first: the tree down to this depth. */
const OPEN_DEPTH = 3;

/** The frames PyTorch writes for a module call are named like this. */
export const frameName = (row) => `nn.Module: ${row.name}`;

/**
 * The Modules tab of the page's tables. Returns { tab, analysed(loaded) }: `tab` goes in the
 * page's tab list (hidden while the shown trace has no module rows), `analysed` is called once the
 * shown trace's tables are built.
 * @param {import("./context.js").PageContext} cx the page's context (context.js)
 */
export function startModules({ app, tableOf, withTable, highlight, showTabs }) {
  const state = { loaded: null, has: false };
  const tab = {
    id: "modules",
    title: "Modules",
    hidden: () => !(state.has && state.loaded === app.active),
    render: (host) => withTable(host, "modules", (t) => renderModules(host, t, highlight)),
  };
  async function analysed(loaded) {
    let t;
    try {
      t = await tableOf("modules");
    } catch {
      return; // The tables' own failure is shown where they are asked for.
    }
    if (app.active !== loaded) return;
    state.loaded = loaded;
    state.has = t.rows.length > 0;
    if (state.has) showTabs();
  }
  return { tab, analysed };
}

/**
 * Each module's box in the icicle, as fractions of the width: [{row, depth, x, w}], parents before
 * their children. `key` is the field that sets the widths. A parent's children share its width
 * in proportion to their values (scaled down together if they add up to more than the parent).
 */
export function icicle(rows, key) {
  const byPath = new Map(rows.map((r) => [r.module, r]));
  const kids = new Map();
  const roots = [];
  for (const r of rows) {
    if (r.parent !== null && byPath.has(r.parent)) {
      if (!kids.has(r.parent)) kids.set(r.parent, []);
      kids.get(r.parent).push(r);
    } else {
      roots.push(r);
    }
  }
  const value = (r) => Math.max(0, r[key] || 0);
  const out = [];
  const place = (list, x, w, whole, depth) => {
    const sum = list.reduce((s, r) => s + value(r), 0);
    const scale = w / Math.max(whole, sum, 1e-12);
    for (const r of list) {
      const rw = value(r) * scale;
      if (rw > 0) {
        out.push({ row: r, depth, x, w: rw });
        if (kids.has(r.module)) place(kids.get(r.module), x, rw, value(r), depth + 1);
      }
      x += rw;
    }
  };
  place(roots, 0, 1, 0, 0);
  return out;
}

function renderModules(host, t, highlight) {
  host.replaceChildren();
  const rows = t.rows;
  const device = t.device_time_us > 0;
  const backward = rows.some((r) => r.backward_calls > 0);
  const key = device ? "device_total_us" : "host_total_us";
  const parents = new Set(rows.map((r) => r.parent).filter((p) => p !== null));

  const tools = el("div", "table-tools");
  const openAll = button("Open all");
  const closeAll = button("Close all");
  tools.append(openAll, closeAll, el("span", "muted", `${count(rows.length)} modules · boxes as wide as their ${device ? "device" : "host"} time (total)`));
  if (t.unattributed_device_us > 0) tools.append(el("span", "muted", `· ${formatValue("us", t.unattributed_device_us)} of device time launched outside every module`));
  const found = el("p", "muted modules-found", "Click a module to highlight its calls on the timeline.");
  found.setAttribute("aria-live", "polite");

  // The icicle: depth rows, width by value.
  const boxes = icicle(rows, key);
  const width = Math.max(320, Math.floor(host.clientWidth || 720) - 4);
  const depth = boxes.reduce((d, b) => Math.max(d, b.depth), -1) + 1;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "icicle");
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(depth * ROW_PX));
  const gOf = new Map();
  for (const b of boxes) {
    const w = b.w * width;
    if (w < 0.5) continue;
    const g = document.createElementNS(SVG, "g");
    g.setAttribute("class", "ic-box");
    g.dataset.module = b.row.module;
    const rect = document.createElementNS(SVG, "rect");
    rect.setAttribute("x", (b.x * width).toFixed(2));
    rect.setAttribute("y", String(b.depth * ROW_PX));
    rect.setAttribute("width", Math.max(0.5, w - 1).toFixed(2));
    rect.setAttribute("height", String(ROW_PX - 1));
    rect.setAttribute("fill", colour(b.row.name));
    const title = document.createElementNS(SVG, "title");
    title.textContent = `${b.row.module}\n${count(b.row.calls)} calls · ${device ? "device" : "host"} total ${formatValue("us", b.row[key])}`;
    g.append(rect, title);
    const chars = Math.floor((w - 6) / 6.5);
    if (chars >= 3) {
      const text = document.createElementNS(SVG, "text");
      text.setAttribute("x", (b.x * width + 3).toFixed(2));
      text.setAttribute("y", String(b.depth * ROW_PX + 13));
      text.textContent = b.row.name.length > chars ? `${b.row.name.slice(0, chars - 1)}…` : b.row.name;
      g.append(text);
    }
    g.addEventListener("click", () => pick(b.row, true));
    svg.append(g);
    gOf.set(b.row.module, g);
  }

  // The table: the tree, indented, each parent opens and closes.
  // The columns as the table declares them (labels, units, what each holds), those the trace has.
  const keys = [
    "calls",
    "host_total_us",
    "host_self_us",
    ...(device ? ["device_total_us", "device_self_us"] : []),
    ...(backward ? ["backward_calls", "backward_host_total_us"] : []),
    ...(backward && device ? ["backward_device_total_us"] : []),
  ];
  const declared = declaredColumns(t.columns);
  const cols = keys.map((k) => declared.find((c) => c.key === k));
  const table = el("table", "data modules-table");
  table.id = "modules-table";
  const head = table.createTHead().insertRow();
  head.append(el("th", "", declared.find((c) => c.key === "module").label));
  for (const c of cols) {
    const th = el("th", "num", c.label);
    th.title = c.title;
    head.append(th);
  }
  const tbody = table.createTBody();
  const open = new Set(rows.filter((r) => r.depth < OPEN_DEPTH - 1 || rows.length <= 40).map((r) => r.module));
  const trOf = new Map();
  for (const r of rows) {
    const tr = document.createElement("tr");
    tr.dataset.module = r.module;
    tr.dataset.depth = String(r.depth);
    const name = el("td", "text");
    name.style.paddingLeft = `${6 + r.depth * 14}px`;
    const tw = el("span", "twisty", parents.has(r.module) ? "▸" : "");
    name.append(tw, document.createTextNode(r.name));
    name.title = r.module;
    tr.append(name);
    for (const c of cols) tr.append(el("td", "num", formatValue(c.kind, r[c.key])));
    tw.addEventListener("click", (ev) => {
      ev.stopPropagation();
      if (open.has(r.module)) open.delete(r.module);
      else open.add(r.module);
      layout();
    });
    tr.addEventListener("click", () => pick(r, false));
    tbody.append(tr);
    trOf.set(r.module, { tr, tw, row: r });
  }
  /** Shows a row when every module above it is open (one pass in tree order). */
  function layout() {
    const shown = new Map();
    for (const r of rows) {
      const up = r.parent === null || !trOf.has(r.parent) || (shown.get(r.parent) && open.has(r.parent));
      shown.set(r.module, up);
      const { tr, tw } = trOf.get(r.module);
      tr.hidden = !up;
      if (parents.has(r.module)) tw.textContent = open.has(r.module) ? "▾" : "▸";
    }
  }
  layout();
  openAll.addEventListener("click", () => {
    for (const p of parents) open.add(p);
    layout();
  });
  closeAll.addEventListener("click", () => {
    open.clear();
    layout();
  });

  /** Marks `row` in the table and the icicle and highlights its frames on the timeline. */
  async function pick(row, fromIcicle) {
    for (const e of host.querySelectorAll(".active")) e.classList.remove("active");
    const entry = trOf.get(row.module);
    // A box clicked for a row inside a closed module: open the modules above it.
    for (let p = row.parent; p !== null && trOf.has(p); p = trOf.get(p).row.parent) open.add(p);
    layout();
    entry.tr.classList.add("active");
    if (fromIcicle) entry.tr.scrollIntoView({ block: "nearest" });
    const g = gOf.get(row.module);
    if (g) g.classList.add("active");
    const name = frameName(row);
    found.textContent = `Looking for ${name}…`;
    const n = await highlight(name);
    if (!found.isConnected) return;
    found.textContent =
      n === undefined ? "" : n > 0 ? `${count(n)} call${n === 1 ? "" : "s"} of ${row.module} (slices named “${name}”) highlighted on the timeline` : `No slice named “${name}” on the timeline`;
  }

  host.append(tools, found, svg, table);
}

/** A light colour per module class (the name without its `_N` instance number). */
function colour(name) {
  const cls = name.replace(/_\d+$/, "");
  let h = 0;
  for (let i = 0; i < cls.length; i++) h = (h * 31 + cls.charCodeAt(i)) >>> 0;
  return `hsl(${h % 360} 55% 72%)`;
}

function button(text) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  return b;
}
