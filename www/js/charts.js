// Findings (with what each fix saves), the step breakdown and the GPU idle breakdown, drawn from
// the analyses' JSON (StepsReport, IdleReport, Finding) with plain DOM: bars are spans with a
// width. Text from the trace goes in with textContent only.

import { count, duration, shortName } from "./format.js";
import { el } from "./dom.js";

/** The colours of the step breakdown's categories, by key. */
const STEP_COLOURS = {
  kernel_ns: "#4f8fdc",
  memcpy_ns: "#e86a5a",
  memset_ns: "#b0b0b0",
  communication_ns: "#a46fd4",
  runtime_ns: "#e6b33c",
  dataloader_ns: "#4fb07a",
  cpu_exec_ns: "#68c2c2",
  other_ns: "#d9d9d9",
};

/**
 * The step breakdown's categories as the core declares them (the members of the steps'
 * `breakdown` column, sent beside the rows), in the TensorBoard plugin's priority order: key,
 * label, colour and what each holds.
 * @returns {[key: string, label: string, colour: string, about: string][]}
 */
export function stepParts(report) {
  const breakdown = report.columns.find((c) => c.key === "breakdown");
  return (breakdown?.parts ?? []).map((p) => [p.key, p.label, STEP_COLOURS[p.key] ?? "#d9d9d9", p.about]);
}

const WAIT_COLOURS = ["#e86a5a", "#f2a341", "#e6d27c", "#4fb07a", "#68c2c2", "#4f8fdc", "#a46fd4", "#d97bb5", "#8fa2b8", "#b5895b", "#9aa1ab", "#c9c9c9", "#dedede"];

/**
 * One `li` per finding; a click shows its evidence on the timeline. A finding whose fix has a
 * saving (the critical path's what-if) says it, with a button that opens that what-if
 * (`onWhatIf(finding)`, when given).
 */
export function renderFindings(list, empty, findings, onEvidence, onWhatIf, { keepEmpty = false } = {}) {
  list.replaceChildren();
  // The recording notes' list leaves the Findings list's "nothing stands out" line as it is.
  if (!keepEmpty) empty.textContent = findings.length ? "" : "Nothing stands out: no finding fired on this trace.";
  for (const f of findings) {
    const li = document.createElement("li");
    li.className = f.severity;
    li.dataset.id = f.id;
    const title = el("div", "title", f.title);
    const detail = el("div", "detail", f.detail);
    const advice = el("div", "advice", f.advice);
    li.append(title, detail);
    // Symptoms whose cause this finding prices (the device waiting for the host).
    for (const c of f.context || []) li.append(el("div", "context", c));
    if (f.saving) {
      const saving = el("div", "saving");
      saving.append(el("span", "finding-saving", f.saving.sentence));
      if (onWhatIf) {
        const open = el("button", "link", `what if ${f.saving.edits.join(", ")}`);
        open.type = "button";
        open.title = "Open this fix in the critical path's what-if";
        open.addEventListener("click", (ev) => {
          ev.stopPropagation();
          onWhatIf(f);
        });
        saving.append(" ", open);
      }
      li.append(saving);
    }
    li.append(advice);
    li.title = "Click to show the evidence on the timeline";
    li.addEventListener("click", () => onEvidence(f.evidence));
    list.append(li);
  }
}

/**
 * The range a step row shows: its ProfilerStep span, as the ruler draws it (the synthetic step
 * of a trace without steps spans the trace).
 * @returns {[number, number]}
 */
export function stepRange(report, s) {
  return report.synthetic ? [s.start_ns, s.end_ns] : [s.cpu_start_ns, s.cpu_end_ns];
}

/** Stacked bars per step (the plugin's breakdown over the step and its device work), scaled to the longest; a click shows the step. */
export function renderSteps(host, report, onRange) {
  host.replaceChildren();
  if (!report || !report.steps.length) {
    host.append(el("p", "muted", "No ProfilerStep spans in this trace (profile with schedule() and call prof.step())."));
    return;
  }
  const legend = el("div", "chart-legend");
  const used = stepParts(report).filter(([k]) => report.steps.some((s) => s.breakdown[k] > 0));
  for (const [, label, colour, about] of used) {
    const item = el("span", "", label);
    item.style.setProperty("--swatch", colour);
    item.title = about;
    legend.append(item);
  }
  host.append(legend);
  const longest = Math.max(...report.steps.map((s) => s.dur_ns), 1);
  for (const s of report.steps) {
    const row = el("div", "bar-row step");
    row.title = [`${s.name}: ${duration(s.length_ns)} (ProfilerStep), ${duration(s.dur_ns)} with its device work`, ...used.map(([k, label]) => `${label}: ${duration(s.breakdown[k])}`)].join("\n");
    const bar = el("div", "hbar");
    bar.style.width = `${(100 * s.dur_ns) / longest}%`;
    for (const [k, , colour] of used) {
      const part = document.createElement("span");
      part.style.width = `${(100 * s.breakdown[k]) / Math.max(1, s.dur_ns)}%`;
      part.style.setProperty("--swatch", colour);
      bar.append(part);
    }
    row.append(el("span", "bar-label", s.name), bar, el("span", "bar-value", duration(s.length_ns)));
    row.addEventListener("click", () => onRange(...stepRange(report, s)));
    host.append(row);
  }
  const st = report.stats;
  const gpu = report.gpu.map((g) => `${g.name} busy ${(100 * g.utilization).toFixed(1)} % of the steps`).join(" · ");
  host.append(el("p", "muted", `${count(st.count)} steps · median ${duration(st.median_ns)} · p90 ${duration(st.p90_ns)}${gpu ? ` · ${gpu}` : ""}${report.synthetic ? " · no ProfilerStep spans: one step spans the trace" : ""}`));
}

/** What the devices waited for (bars), per-device utilization, and the longest gaps (click: show). */
export function renderIdle(host, report, phrases, onRange) {
  host.replaceChildren();
  if (!report || !report.devices.length) {
    host.append(el("p", "muted", `No ${report ? report.device_word : "GPU"} events in this trace.`));
    return;
  }
  for (const d of report.devices) {
    // HTA's window, not the steps' span of the Overview's utilization: say which.
    host.append(el("p", "", `${d.name}: busy ${(100 * d.utilization).toFixed(1)} % of ${duration(d.window_ns)} from its first op to its last (HTA's window; the Overview counts over the steps), idle ${duration(d.idle_ns)} in ${count(d.gaps)} gaps`));
  }
  if (report.waits.length) {
    host.append(el("h3", "", `While the ${report.device_word} was idle, the CPU was in`));
    const top = Math.max(...report.waits.map((w) => w.ns), 1);
    report.waits.forEach((w, i) => {
      const row = el("div", "bar-row");
      const bar = el("div", "hbar");
      const part = document.createElement("span");
      part.style.width = `${(100 * w.ns) / top}%`;
      part.style.setProperty("--swatch", WAIT_COLOURS[i % WAIT_COLOURS.length]);
      bar.append(part);
      row.append(el("span", "bar-label", phrases[w.kind] || w.kind), bar, el("span", "bar-value", `${duration(w.ns)} · ${w.pct.toFixed(1)} %`));
      row.title = `${count(w.gaps)} gaps`;
      host.append(row);
    });
  }
  if (report.gaps.length) {
    host.append(el("h3", "", `Longest gaps (${Math.min(20, report.gaps.length)} of ${count(report.gap_count)})`));
    const ul = el("ul", "gap-list");
    for (const g of report.gaps.slice(0, 20)) {
      const li = document.createElement("li");
      const doing = g.cpu.slice(0, 3).map((k) => `${phrases[k.kind] || k.kind} ${duration(k.ns)}`).join(", ");
      li.textContent = `${g.device_name} idle ${duration(g.dur_ns)} at ${duration(g.start_ns)}: ${doing || "no CPU attribution"}; ended by ${shortName(g.ended_by.name)}`;
      li.title = g.ended_by.name;
      li.addEventListener("click", () => onRange(g.start_ns, g.end_ns));
      ul.append(li);
    }
    host.append(ul);
  }
  for (const n of report.notes || []) host.append(el("p", "muted", n));
}
