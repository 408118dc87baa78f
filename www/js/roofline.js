// The roofline tab and the FLOPs columns of the tables. Data from the trace's worker:
// `Session::flops_report` (rows per op and shape as `sightline flops --json`, the device's peaks
// and roofs) and `Session::flops_calls` (a row's calls with their times). The chart is an SVG:
// log-log, x = arithmetic intensity (FLOP/byte), y = achieved TFLOP/s; the memory roof
// (bandwidth x intensity) and one compute ceiling per dtype the ops ran in; each op and shape
// with kernel time and known bytes is a point, its area by kernel time, its colour by bound.
// Names from the trace are set as text (textContent, SVG <title>), never as HTML.

import { declaredColumns, renderTable } from "./table.js";
import { duration, count, percent } from "./format.js";
import { el } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 720;
const H = 420;
const PAD = { left: 64, right: 130, top: 16, bottom: 44 };

/** The FLOPs columns the operator table by shape shows beside an op's own (see `withFlops`). */
const FLOPS_KEYS = ["gflops", "tflops_s", "tb_s", "intensity", "bound", "pct_of_peak"];

/**
 * The FLOPs columns of the operator table by shape, as the FLOPs rows declare them (the
 * `columns` of `Session::flops_report`).
 * @param {{columns: import("./format.js").Declared[]}} report
 */
export function flopsColumns(report) {
  return declaredColumns(report.columns.filter((c) => FLOPS_KEYS.includes(c.key)));
}

const shapeKey = (name, shapes) => `${name}\u0000${JSON.stringify(shapes ?? null)}`;

/**
 * The operator table's rows by shape with the FLOPs row of the same op and input shapes.
 * Where one op and shape ran in several dtypes (FLOPs rows also group by `Input type`), the row
 * with the most kernel time is shown (the rows come most kernel time first).
 */
export function withFlops(opsRows, report) {
  const byKey = new Map();
  for (const r of report.rows) {
    const k = shapeKey(r.name, r.input_shapes);
    if (!byKey.has(k)) byKey.set(k, r);
  }
  return opsRows.map((o) => {
    const f = byKey.get(shapeKey(o.name, o.input_shapes));
    return { ...o, ...Object.fromEntries(FLOPS_KEYS.map((k) => [k, f ? f[k] : null])) };
  });
}

/** The rows drawn as points: kernel time, a rate and bytes (so an intensity) known. */
export function plotted(report) {
  return report.rows.map((r, i) => ({ ...r, row: i })).filter((r) => r.kernel_us > 0 && r.tflops_s > 0 && r.intensity > 0);
}

function svg(tag, attrs = {}, parent = null) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (parent) parent.append(e);
  return e;
}

const decades = (lo, hi) => {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
};
const tick = (v) => (v >= 1 ? count(v) : String(v));
const shapes = (s) => (Array.isArray(s) ? JSON.stringify(s).replace(/,/g, ", ") : "");

/**
 * Renders the roofline of `report` into `host`. `session`: the trace's worker calls;
 * `pick(lane, index)`: selects a slice on the timeline (and shows its details).
 */
export function renderRoofline(host, report, session, pick) {
  host.replaceChildren();
  const head = el("p", "muted roofline-device");
  head.id = "roofline-device";
  const peaks = report.peaks;
  if (peaks) {
    head.textContent = `${report.device}: roofs of the ${peaks.device} (${peaks.source}): ${peaks.mem_tb_s} TB/s; ${report.roofs.map((r) => `${r.label} ${r.tflops} TFLOP/s`).join(", ")}. Dense peaks, no sparsity.`;
  } else if (report.device) {
    head.textContent = `${report.device} is not in the table of peaks: no roofs are drawn, only the points; bound and % of peak are unknown.`;
  } else {
    head.textContent = "The trace names no GPU (no deviceProperties): no roofs are drawn, only the points.";
  }
  host.append(head);
  const points = plotted(report);
  if (!report.rows.length) {
    const p = el("p", "muted", "No operator here has a FLOPs model and recorded input shapes: record the trace with record_shapes=True (torch.profiler.profile(record_shapes=True)) to see the roofline.");
    p.id = "roofline-empty";
    host.append(p);
    return;
  }
  if (!points.length) {
    const p = el("p", "muted", "No modelled operator launched GPU kernels in this trace, so there is no achieved rate to draw.");
    p.id = "roofline-empty";
    host.append(p);
    return;
  }
  const left = report.rows.length - points.length;
  if (left) host.append(el("p", "muted", `${count(left)} op/shape rows are not drawn: no kernel time, or FLOPs from PyTorch's flops arg only (no bytes, so no intensity).`));

  // Axes' domains: the points, the ridge points and the ceilings, with room around.
  const xs = points.map((p) => p.intensity);
  const ys = points.map((p) => p.tflops_s);
  const roofs = peaks ? report.roofs : [];
  for (const r of roofs) {
    xs.push(r.tflops / peaks.mem_tb_s);
    ys.push(r.tflops);
  }
  const x0 = Math.min(...xs) / 3, x1 = Math.max(...xs) * 3;
  const y0 = Math.min(...ys) / 3, y1 = Math.max(...ys) * 2;
  const lx = (v) => PAD.left + ((Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * (W - PAD.left - PAD.right);
  const ly = (v) => H - PAD.bottom - ((Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * (H - PAD.top - PAD.bottom);

  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "roofline", role: "img" });
  chart.id = "roofline-chart";
  svg("title", {}, chart).textContent = "Roofline: achieved TFLOP/s against arithmetic intensity";
  const grid = svg("g", { class: "roofline-grid" }, chart);
  for (const v of decades(x0, x1)) {
    if (v < x0 || v > x1) continue;
    svg("line", { x1: lx(v), x2: lx(v), y1: PAD.top, y2: H - PAD.bottom }, grid);
    svg("text", { x: lx(v), y: H - PAD.bottom + 14, "text-anchor": "middle" }, grid).textContent = tick(v);
  }
  for (const v of decades(y0, y1)) {
    if (v < y0 || v > y1) continue;
    svg("line", { x1: PAD.left, x2: W - PAD.right, y1: ly(v), y2: ly(v) }, grid);
    svg("text", { x: PAD.left - 6, y: ly(v) + 4, "text-anchor": "end" }, grid).textContent = tick(v);
  }
  svg("text", { x: (PAD.left + W - PAD.right) / 2, y: H - 8, "text-anchor": "middle", class: "roofline-axis" }, chart).textContent = "arithmetic intensity (FLOP/byte)";
  svg("text", { x: 14, y: (PAD.top + H - PAD.bottom) / 2, "text-anchor": "middle", class: "roofline-axis", transform: `rotate(-90 14 ${(PAD.top + H - PAD.bottom) / 2})` }, chart).textContent = "achieved TFLOP/s";

  // The roofs: the memory slope up to each ceiling's ridge point, then the ceiling.
  const roofG = svg("g", { class: "roofline-roofs" }, chart);
  for (const r of roofs) {
    const ridge = r.tflops / peaks.mem_tb_s;
    const start = Math.max(x0, y0 / peaks.mem_tb_s);
    svg("polyline", { points: `${lx(start)},${ly(start * peaks.mem_tb_s)} ${lx(ridge)},${ly(r.tflops)} ${lx(x1)},${ly(r.tflops)}` }, roofG);
    svg("text", { x: W - PAD.right + 4, y: ly(r.tflops) + 4 }, roofG).textContent = `${r.label} ${r.tflops}`;
  }

  // The points, largest first so that small ones stay clickable on top.
  const maxUs = Math.max(...points.map((p) => p.kernel_us));
  const info = el("p", "roofline-info muted", "Hover a point to read it; click it to select its calls on the timeline.");
  info.id = "roofline-info";
  const dots = svg("g", { class: "roofline-points" }, chart);
  const calls = el("div", "roofline-calls");
  for (const p of [...points].sort((a, b) => b.kernel_us - a.kernel_us)) {
    const c = svg("circle", { cx: lx(p.intensity), cy: ly(p.tflops_s), r: (3 + 14 * Math.sqrt(p.kernel_us / maxUs)).toFixed(1), class: `pt pt-${p.bound || "unknown"}`, "data-row": p.row }, dots);
    const text = `${p.name} ${shapes(p.input_shapes)} ${p.dtype}: ${count(p.calls)} calls, ${p.gflops.toPrecision(4)} GFLOPs/call, ${duration(p.kernel_us * 1e3)} kernel time, ${p.tflops_s.toPrecision(4)} TFLOP/s, ${p.tb_s === null ? "–" : p.tb_s.toPrecision(3)} TB/s, ${p.intensity.toPrecision(4)} FLOP/B${p.bound ? `, ${p.bound}-bound, ${percent(p.pct_of_peak)} of the roof` : ""}`;
    svg("title", {}, c).textContent = text;
    c.addEventListener("mouseenter", () => (info.textContent = text));
    c.addEventListener("click", () => choose(p, c));
  }
  const legend = el("p", "muted roofline-legend", "Points: one op and input shape; area by kernel time; ");
  for (const [cls, what] of [["compute", "compute-bound"], ["memory", "memory-bound"], ["unknown", "bound unknown"]]) {
    const key = el("span", `roofline-key pt-${cls}`, "●");
    legend.append(key, document.createTextNode(` ${what}  `));
  }
  host.append(chart, legend, info, calls);

  async function choose(p, circle) {
    dots.querySelectorAll(".pt.chosen").forEach((x) => x.classList.remove("chosen"));
    circle.classList.add("chosen");
    const list = await session.flops_calls(p.row);
    if (list.length) pick(list[0].lane, list[0].index);
    const rows = list.map((c, i) => ({ call: i + 1, lane: c.lane, index: c.index, start_ns: c.start_ns, dur_ns: c.dur_ns }));
    renderTable(calls, rows, {
      id: "roofline-calls-table",
      csvName: "roofline-calls.csv",
      sortKey: "start_ns",
      sortDir: 1,
      onRowClick: (r) => pick(r.lane, r.index),
      caption: `${p.name} ${shapes(p.input_shapes)}: ${count(p.calls)} calls${p.calls > list.length ? ` (first ${list.length} listed)` : ""}; click one to select it`,
    });
  }
}
