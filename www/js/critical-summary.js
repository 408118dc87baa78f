// What bounds the steps, as the Critical path panel draws it from the Session's `critical_path()`
// answer: all steps as one stacked bar, a row per step, and the longest segments grouped.
// Text from the trace is set as text only.

import { count, duration, percent, shortName } from "./format.js";
import { el } from "./dom.js";

/** @typedef {import("../generated/answers.js").PathSummary} CriticalSummary */

/** The path's categories (`analysis::critical`) as the panel words and colours them. */
export const CATEGORY = {
  cpu_op: ["CPU op", "#68c2c2"],
  cpu_launch: ["CPU launch", "#e6b33c"],
  data_loading: ["DataLoader", "#4fb07a"],
  sync_wait: ["sync wait", "#e86a5a"],
  cpu_untraced: ["CPU untraced", "#b0b0b0"],
  gpu_compute: ["GPU compute", "#4f8fdc"],
  gpu_memcpy: ["GPU memcpy", "#d97bb5"],
  gpu_communication: ["GPU communication", "#a46fd4"],
  kernel_launch_overhead: ["launch delay", "#f2a341"],
  kernel_kernel_overhead: ["kernel-kernel gap", "#8fa2b8"],
  other: ["other", "#d9d9d9"],
};

/** Steps listed in a table (a trace may hold thousands; the bar has them all). */
export const MAX_STEPS = 50;

/** All steps' paths as one bar stacked by category, with its legend. @param {CriticalSummary} sm */
export function breakdownBar(sm) {
  const box = el("div", "critical-breakdown");
  const used = sm.categories.filter((c) => sm.bound_by[c] > 0);
  const bar = el("div", "hbar critical-bar");
  const legend = el("div", "chart-legend");
  for (const c of used) {
    const [label, colour] = CATEGORY[c] || [c, "#999"];
    const share = sm.bound_by[c];
    const part = document.createElement("span");
    part.dataset.category = c;
    part.style.width = `${share}%`;
    part.style.setProperty("--swatch", colour);
    part.title = `${label}: ${percent(share)} of the steps' paths (${duration(share * sm.total_us * 10)})`;
    bar.append(part);
    const item = el("span", "", `${label} ${percent(share)}`);
    item.dataset.category = c;
    item.style.setProperty("--swatch", colour);
    legend.append(item);
  }
  box.append(bar, legend);
  return box;
}

/**
 * A row per step (the first MAX_STEPS): its length, what bounds it most, its path by category.
 * @param {CriticalSummary} sm
 * @param {(t0: number, t1: number) => void} showRange a row's click shows its step
 */
export function stepTable(sm, showRange) {
  const table = el("table", "data critical-steps");
  const head = table.createTHead().insertRow();
  for (const [c, cls] of [["Step", ""], ["Length", "num"], ["Bound by", ""], ["", ""]]) head.append(el("th", cls, c));
  const body = table.createTBody();
  const longest = Math.max(...sm.steps.map((s) => s.length_us), 1e-9);
  for (const s of sm.steps.slice(0, MAX_STEPS)) {
    const tr = body.insertRow();
    const top = Object.entries(s.bound_by).sort((a, b) => b[1] - a[1])[0];
    tr.append(el("td", "text", s.step), el("td", "num", duration(s.length_us * 1e3)), el("td", "", top ? `${(CATEGORY[top[0]] || [top[0]])[0]} ${percent(top[1])}` : "–"));
    const cell = el("td", "critical-step-bar");
    const bar = el("div", "hbar");
    bar.style.width = `${(100 * s.length_us) / longest}%`;
    for (const c of sm.categories) {
      if (!(s.bound_by[c] > 0)) continue;
      const part = document.createElement("span");
      part.style.width = `${s.bound_by[c]}%`;
      part.style.setProperty("--swatch", (CATEGORY[c] || ["", "#999"])[1]);
      bar.append(part);
    }
    cell.append(bar);
    tr.append(cell);
    tr.title = "Click to show this step on the timeline";
    tr.addEventListener("click", () => showRange(s.start_ns, s.end_ns));
  }
  const box = el("div", "critical-steps-box");
  box.append(table);
  if (sm.steps.length > MAX_STEPS) box.append(el("p", "muted", `first ${MAX_STEPS} of ${count(sm.steps.length)} steps listed; the bar above has them all`));
  return box;
}

/**
 * The longest segments, one row per slice name, bound, lane and step, counted.
 * @param {CriticalSummary} sm
 * @param {(lane: number, index: number) => void} pick a row's click selects its slice
 */
export function segmentTable(sm, pick) {
  const table = el("table", "data critical-segments");
  const head = table.createTHead().insertRow();
  for (const [c, cls] of [["Time", "num"], ["Bound by", ""], ["Slice", ""], ["Lane", ""], ["Step", ""]]) head.append(el("th", cls, c));
  const body = table.createTBody();
  // The same slice name, bound, lane and step once, its times summed and counted (twelve rows
  // of one kernel read as one), in the order of their longest.
  const groups = new Map();
  for (const s of sm.longest) {
    const key = [s.bound_by, s.name, s.captured_by, s.lane, s.step].join("\u0000");
    const g = groups.get(key);
    if (g) {
      g.dur_us += s.dur_us;
      g.count += 1;
    } else groups.set(key, { ...s, count: 1 });
  }
  for (const s of groups.values()) {
    const tr = body.insertRow();
    const named = s.name ? (s.captured_by ? `${shortName(s.name)} (${s.captured_by}, captured)` : shortName(s.name)) : "(nothing recorded)";
    const slice = el("td", "text", s.count > 1 ? `${named} ×${s.count}` : named);
    if (s.name) slice.title = s.name;
    tr.append(el("td", "num", duration(s.dur_us * 1e3)), el("td", "", (CATEGORY[s.bound_by] || [s.bound_by])[0]), slice, el("td", "text", s.lane), el("td", "text", s.step));
    if (s.at) {
      tr.title = "Click to select the slice and name it in the what-if";
      tr.addEventListener("click", () => pick(s.at.lane, s.at.index));
    }
  }
  return table;
}
