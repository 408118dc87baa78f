// The Overview panel, the first panel a trace shows (as the TensorBoard plugin's Overview page):
// per device the GPU figures of the steps (utilization, estimated SM efficiency, estimated
// achieved occupancy, Tensor Core share of kernel time), the step time breakdown (all steps as one
// stacked bar, then each step as a row) and the top findings with what their fixes save. Data:
// the session's `steps()` (StepsReport, the steps' declared columns beside them) and
// `findings()`, as the Steps and Findings panels get them; a figure the analysis could
// not estimate (null) is left out. Text from the trace is set as text only.

import { stepParts, stepRange } from "./charts.js";
import { count, declaredLabel, duration, percent } from "./format.js";
import { el } from "./dom.js";

/** How many findings the overview lists; the Findings panel has them all. */
const TOP_FINDINGS = 5;
/** Steps listed in the breakdown table (a trace may hold thousands). */
const MAX_STEPS = 100;

/** The device figures in the plugin's order: field, label, how to read it, tooltip. */
/** @type {[key: string, label: string, show: (v: number) => string, help: string][]} */
const FIGURES = [
  ["utilization", "GPU utilization over the steps", (v) => percent(100 * v), "Share of the steps' span (first step's start to last step's end, as the TensorBoard plugin counts) in which a kernel ran on the device. The idle panel's busy share counts from the device's first op to its last instead (HTA's window)."],
  ["est_sm_efficiency_pct", "Est. SM efficiency", percent, "Estimated share of SMs busy over the steps' span: min(blocks per SM, 1) of the running kernels, idle counted as 0 (TensorBoard plugin)"],
  ["est_achieved_occupancy_pct", "Est. achieved occupancy", percent, "Kernels' estimated achieved occupancy, weighted by kernel time (TensorBoard plugin)"],
  ["tensor_core_pct", "Tensor Cores", percent, "Share of kernel time in kernels whose names say they run on the matrix units (Tensor Cores on NVIDIA, Matrix Cores on AMD)"],
];

/**
 * Renders the overview of `steps` (StepsReport) and `findings` (a list of Finding) into `host`.
 * hooks: { onEvidence(evidence), onRange(t0, t1), findingsPanel: the element "all findings" shows }
 */
export function renderOverview(host, steps, findings, hooks) {
  host.replaceChildren(devices(steps), breakdown(steps, hooks.onRange), topFindings(findings, hooks));
}

function devices(report) {
  const box = el("div", "ov-devices");
  if (!report.gpu.length && report.devices_without_events && report.devices_without_events.length) {
    // A cut trace keeps its deviceProperties and loses its device events (written last): not a CPU-only trace.
    const lost = report.devices_without_events;
    box.append(el("p", "muted ov-no-device ov-cut", `The trace is cut short: its ${lost.length} listed ${lost.length === 1 ? "device" : "devices"} (${lost.join(", ")}) ${lost.length === 1 ? "has" : "have"} no events left, so there are no ${report.device_word} figures, and the breakdown below counts the host only.`));
    return box;
  }
  if (!report.gpu.length) {
    box.append(el("p", "muted ov-no-device", `No device: this trace holds CPU work only (no ${report.device_word} kernels, copies or sets), so there are no ${report.device_word} figures.`));
    return box;
  }
  for (const g of report.gpu) {
    const row = el("div", "ov-device");
    row.append(el("span", "ov-device-name", g.name));
    for (const [key, label, show, help] of FIGURES) {
      const v = g[key];
      if (typeof v !== "number" || !Number.isFinite(v)) continue;
      const fig = el("span", "ov-figure");
      fig.dataset.figure = key;
      fig.title = help;
      // The matrix units by their maker's name (the field is `tensor_core_pct` on every device).
      const name = key === "tensor_core_pct" && g.matrix_units ? g.matrix_units : label;
      fig.append(el("span", "ov-value", show(v)), el("span", "ov-label", name));
      row.append(fig);
    }
    box.append(row);
  }
  return box;
}

function breakdown(report, onRange) {
  const box = el("div", "ov-steps");
  const st = report.stats;
  const heading = report.steps.length
    ? `Step time breakdown: ${count(st.count)} step${st.count === 1 ? "" : "s"}, median ${duration(st.median_ns)}${report.synthetic ? " (no ProfilerStep spans: one step spans the trace)" : ""}`
    : "Step time breakdown";
  box.append(el("h3", "", heading));
  if (!report.steps.length) {
    box.append(el("p", "muted", "No ProfilerStep spans in this trace (profile with schedule() and call prof.step())."));
    return box;
  }
  const used = stepParts(report).filter(([k]) => report.total[k] > 0);
  const all = used.reduce((s, [k]) => s + report.total[k], 0);

  // All steps as one stacked bar, the legend with each category's share.
  const bar = el("div", "hbar ov-total");
  const legend = el("div", "chart-legend ov-legend");
  for (const [k, label, colour] of used) {
    const part = document.createElement("span");
    part.style.width = `${(100 * report.total[k]) / Math.max(1, all)}%`;
    part.style.setProperty("--swatch", colour);
    part.title = `${label}: ${duration(report.total[k])} (${percent((100 * report.total[k]) / Math.max(1, all))})`;
    bar.append(part);
    const item = el("span", "", `${label} ${percent((100 * report.total[k]) / Math.max(1, all))}`);
    item.style.setProperty("--swatch", colour);
    legend.append(item);
  }
  box.append(bar, legend);

  // Each step: its time per category; a click shows the step on the timeline.
  const oneDevice = report.gpu.length === 1 ? report.gpu[0].device : null;
  const table = el("table", "data ov-step-table");
  const head = table.createTHead().insertRow();
  // A step's length is its ProfilerStep span (the ruler's); the plugin's breakdown covers the
  // step extended to the device work it launched, whose total is labelled as such. Headed as
  // the core declares the steps' columns (sent beside them), the hover text saying what each
  // holds.
  const [name, length, withDevice] = ["name", "length_ns", "dur_ns"].map((key) => report.columns.find((c) => c.key === key));
  const heads = [name, length, ...used.map(([, label, , about]) => ({ label, about })), withDevice].map((c) => [declaredLabel(c.label), c.about]);
  if (oneDevice !== null) heads.push(["GPU util.", ""]);
  heads.forEach(([text, about], i) => {
    const th = el("th", i ? "num" : "", text);
    if (about) th.title = about;
    head.append(th);
  });
  const body = table.createTBody();
  for (const s of report.steps.slice(0, MAX_STEPS)) {
    const tr = body.insertRow();
    tr.append(el("td", "text", s.name));
    tr.append(el("td", "num", duration(s.length_ns)));
    for (const [k] of used) tr.append(el("td", "num", duration(s.breakdown[k])));
    tr.append(el("td", "num", duration(s.dur_ns)));
    if (oneDevice !== null) {
      const g = (s.gpu || []).find((x) => x.device === oneDevice);
      tr.append(el("td", "num", g && Number.isFinite(g.utilization) ? percent(100 * g.utilization) : "–"));
    }
    const figures = (s.gpu || []).map((g) => `${g.name}: ${FIGURES.filter(([k]) => typeof g[k] === "number").map(([k, label, show]) => `${label} ${show(g[k])}`).join(", ")}`);
    tr.title = ["Click to show this step (its ProfilerStep span) on the timeline", ...figures].join("\n");
    tr.addEventListener("click", () => onRange(...stepRange(report, s)));
  }
  const foot = table.createTFoot().insertRow();
  foot.append(el("td", "text", report.steps.length > 1 ? `All ${count(report.steps.length)} steps` : "Total"));
  foot.append(el("td", "num", duration(report.steps.reduce((a, s) => a + s.length_ns, 0))));
  for (const [k] of used) foot.append(el("td", "num", duration(report.total[k])));
  foot.append(el("td", "num", duration(all)));
  if (oneDevice !== null) {
    const g = report.gpu[0];
    foot.append(el("td", "num", Number.isFinite(g.utilization) ? percent(100 * g.utilization) : "–"));
  }
  box.append(table);
  if (report.steps.length > MAX_STEPS) box.append(el("p", "muted", `first ${MAX_STEPS} of ${count(report.steps.length)} steps listed; the Steps panel draws them all`));
  return box;
}

function topFindings(findings, { onEvidence, findingsPanel }) {
  const box = el("div", "ov-findings");
  box.append(el("h3", "", "Top findings"));
  if (!findings.length) {
    box.append(el("p", "muted", "Nothing stands out: no finding fired on this trace."));
    return box;
  }
  const list = el("ul", "ov-finding-list");
  for (const f of findings.slice(0, TOP_FINDINGS)) {
    const li = el("li", f.severity);
    li.dataset.id = f.id;
    li.title = `${f.detail}${f.saving ? `\n${f.saving.sentence}` : ""}\n\nClick to show the evidence on the timeline`;
    li.append(el("span", "title", f.title));
    // A bound (the work made free) or an estimate reads as one, not as a fix's saving.
    if (f.saving) li.append(el("span", "ov-saving", `${f.saving.bound ? "up to" : "saves"} ${duration(f.saving.per_step_us * 1e3)} per step`));
    li.addEventListener("click", () => onEvidence(f.evidence));
    list.append(li);
  }
  box.append(list);
  const more = el("button", "link ov-all-findings", findings.length > TOP_FINDINGS ? `All ${count(findings.length)} findings, with their advice` : "The findings with their numbers and advice");
  more.type = "button";
  more.addEventListener("click", () => {
    findingsPanel.scrollIntoView({ block: "start" });
  });
  box.append(more);
  return box;
}
