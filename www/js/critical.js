// The critical path on the page. The "Critical path" toggle in the header draws each step's path on
// the timeline (its slices; the rest dimmed; arrows where it goes from one lane to another: the
// Session's `show_critical_path`) and opens the Critical path panel: what bounds the steps (all
// steps as one stacked bar, a row per step, the longest segments) and the what-if: a name (typed,
// or picked: a slice on the timeline, a table row, a finding's fix) removed or scaled, and the
// predicted step time, replayed in the worker on the graph the first toggle built
// (`Session::what_if`, the CLI's `--what-if` syntax). Text from the trace is set as text only.

import { count, duration, percent, shortName } from "./format.js";
import { el } from "./dom.js";

/** The path's categories (`analysis::critical`) as the panel words and colours them. */
const CATEGORY = {
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

/** The kinds a what-if can name besides slice names. */
const KINDS = [
  ["kernels", "computation kernels"],
  ["memcpy", "copies and fills on the device"],
  ["pageable", "copies from or to pageable host memory"],
  ["communication", "collectives"],
  ["DataLoader", "CPU time in a DataLoader's __next__"],
];

/** Steps listed in the panel (a trace may hold thousands; the bar has them all). */
const MAX_STEPS = 50;
/** Milliseconds of typing before the what-if runs. */
const TYPING_MS = 120;

/** hooks: { app, view, pick(lane, index), showRange(t0, t1) }. Returns the page's critical path controller. */
export function startCritical({ app, view, pick, showRange }) {
  const $ = (id) => document.getElementById(id);
  const button = /** @type {HTMLButtonElement} */ ($("critical-path"));
  const panel = $("critical-panel");
  const state = {
    session: null,
    on: false,
    /** critical_path() of the shown trace, parsed. */
    summary: null,
    /** Edits kept while another is composed (a finding's fix, "Add"). */
    kept: [],
    /** The last what_if answer shown, parsed, and the edits it answers. */
    answer: null,
    answered: [],
    /** Milliseconds of each what_if call, posted to answered, for tests and benchmarks. */
    whatIfMs: [],
    /** Milliseconds of the toggle's first critical_path call (the graph's build). */
    buildMs: null,
    /** Bumped by each what-if asked for: only the newest answer is shown. */
    asked: 0,
  };
  const form = whatIfForm();
  let typing = 0;

  button.addEventListener("click", () => toggle(!state.on));

  /** A newly shown trace (or none): the toggle off until its analyses are done. */
  function attach(session) {
    Object.assign(state, { session, on: false, summary: null, kept: [], answer: null, answered: [], whatIfMs: [], buildMs: null });
    state.asked++;
    button.hidden = !session;
    button.disabled = true;
    button.title = "The critical path of each step: after the analyses";
    button.setAttribute("aria-pressed", "false");
    panel.hidden = true;
    form.name.value = "";
  }

  function analysed(session) {
    if (session !== state.session) return;
    button.disabled = false;
    button.title = "Show the critical path of each step on the timeline, what bounds it, and what-ifs";
  }

  async function toggle(on) {
    const s = state.session;
    if (!s || button.disabled) return;
    state.on = on;
    button.setAttribute("aria-pressed", String(on));
    panel.hidden = !on;
    if (on && !state.summary) {
      panel.replaceChildren(heading(), Object.assign(document.createElement("p"), { className: "muted analysing", textContent: "Following each step's path…" }));
      const t0 = performance.now();
      const text = await view.call(() => s.critical_path());
      if (text === undefined || s !== state.session) return;
      state.buildMs = performance.now() - t0;
      state.summary = JSON.parse(text);
      render();
    }
    await view.call(() => s.show_critical_path(on));
    view.request();
    if (on) panel.scrollIntoView({ block: "nearest" });
  }

  function heading() {
    return el("h2", "", "Critical path");
  }

  function render() {
    const sm = state.summary;
    panel.replaceChildren(heading());
    if (!sm.steps.length) {
      panel.append(el("p", "muted", "No step to follow: the trace has no ProfilerStep spans and no device or CPU work."));
      return;
    }
    panel.append(
      el("p", "muted critical-note", `${count(sm.steps.length)} step${sm.steps.length === 1 ? "" : "s"}, ${duration(sm.total_us * 1e3)} in all: the chain of work that set each step's length, ${count(sm.slices)} slices drawn on the timeline (the rest dimmed), ${count(sm.hops)} arrows where it changes lanes.`),
    );
    const body = el("div", "critical-body");
    const left = el("div", "critical-bound");
    left.append(el("h3", "", "What bounds the steps"), breakdownBar(sm), stepTable(sm));
    body.append(left, form.box);
    panel.append(body, el("h3", "", "Longest segments"), segmentTable(sm));
    runWhatIf();
  }

  function breakdownBar(sm) {
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

  function stepTable(sm) {
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

  function segmentTable(sm) {
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

  /** The what-if's controls and answer; kept across renders so a picked name stays. */
  function whatIfForm() {
    const box = el("div", "critical-whatif");
    box.append(el("h3", "", "What if"));
    const row = el("div", "whatif-row");
    const name = document.createElement("input");
    name.id = "whatif-name";
    name.type = "text";
    name.placeholder = "a slice name (* matches any run), or kernels, memcpy, …";
    name.autocomplete = "off";
    name.spellcheck = false;
    name.setAttribute("list", "whatif-kinds");
    const kinds = document.createElement("datalist");
    kinds.id = "whatif-kinds";
    for (const [k, help] of KINDS) kinds.append(Object.assign(document.createElement("option"), { value: k, label: help }));
    const mode = document.createElement("select");
    mode.id = "whatif-mode";
    mode.append(new Option("× factor", "scale"), new Option("= 0 (removed)", "remove"));
    const factor = document.createElement("input");
    factor.id = "whatif-factor";
    factor.type = "number";
    factor.min = "0";
    factor.step = "0.1";
    factor.value = "0.5";
    const add = el("button", "", "Add");
    add.type = "button";
    add.title = "Keep this edit and compose another: the what-if applies them all";
    row.append(name, kinds, mode, factor, add);
    const kept = el("ul", "whatif-kept");
    const edit = el("p", "muted whatif-edit");
    const answer = el("div", "whatif-answer");
    answer.setAttribute("aria-live", "polite");
    box.append(
      el("p", "muted", "Pick a slice on the timeline, a table row or a finding's fix, or type a name; remove it or scale it, and read the predicted step time. The graph is replayed with its dependencies: a change off the path buys nothing."),
      row,
      kept,
      edit,
      answer,
    );
    const soon = () => {
      clearTimeout(typing);
      typing = setTimeout(runWhatIf, TYPING_MS);
    };
    name.addEventListener("input", soon);
    factor.addEventListener("input", soon);
    // Removed reads as a factor of 0 in the box (a 0.5 left there would say the slice is halved);
    // back to "× factor", the factor typed before returns.
    let typed = factor.value;
    mode.addEventListener("change", () => {
      const removed = mode.value === "remove";
      if (removed && !factor.disabled) typed = factor.value;
      factor.value = removed ? "0" : typed;
      factor.disabled = removed;
      runWhatIf();
    });
    add.addEventListener("click", () => {
      const e = composed();
      if (!e) return;
      state.kept.push(e);
      name.value = "";
      runWhatIf();
    });
    return { box, name, mode, factor, kept, edit, answer };
  }

  /** The edit the controls compose, in the CLI's syntax, or null without a name. */
  function composed() {
    const n = form.name.value.trim();
    if (!n) return null;
    if (form.mode.value === "remove") return `${n}=0`;
    return `${n}*${form.factor.value === "" ? "1" : form.factor.value}`;
  }

  function renderKept() {
    form.kept.replaceChildren();
    state.kept.forEach((e, i) => {
      const li = el("li", "");
      li.append(el("code", "", e));
      const drop = el("button", "link", "remove");
      drop.type = "button";
      drop.title = "Leave this edit out";
      drop.addEventListener("click", () => {
        state.kept.splice(i, 1);
        runWhatIf();
      });
      li.append(" ", drop);
      form.kept.append(li);
    });
  }

  /** Runs the what-if of the kept edits and the composed one in the worker; shows the newest answer. */
  async function runWhatIf() {
    clearTimeout(typing);
    renderKept();
    const s = state.session;
    const edits = [...state.kept, composed()].filter(Boolean);
    form.edit.textContent = edits.length ? `--what-if ${edits.join(" --what-if ")}` : "";
    const seq = ++state.asked;
    if (!edits.length || !state.summary) {
      state.answer = null;
      state.answered = [];
      form.answer.replaceChildren(el("p", "muted", "Name something to change."));
      return;
    }
    const t0 = performance.now();
    const text = await view.call(() => s.what_if(edits.join("\n")));
    if (text === undefined || s !== state.session || seq !== state.asked) return;
    const ms = performance.now() - t0;
    state.whatIfMs.push(ms);
    state.answer = JSON.parse(text);
    state.answered = edits;
    showAnswer(state.answer, ms);
  }

  function showAnswer(a, ms) {
    const out = form.answer;
    out.replaceChildren();
    if (a.error) {
      const p = el("p", "whatif-error", a.error);
      p.setAttribute("role", "alert");
      out.append(p);
      return;
    }
    const head = el("p", "whatif-mean");
    head.append(
      "Mean step: measured ",
      el("strong", "whatif-measured", duration(a.mean_measured_us * 1e3)),
      ", predicted ",
      el("strong", "whatif-predicted", duration(a.mean_predicted_us * 1e3)),
      `: saves ${duration(a.mean_saving_us * 1e3)} per step (${percent(a.saving_pct)}).`,
    );
    out.append(head);
    const table = el("table", "data whatif-steps");
    const hr = table.createTHead().insertRow();
    for (const [c, cls] of [["Step", ""], ["Measured", "num"], ["Predicted", "num"], ["Saving", "num"], ["%", "num"]]) hr.append(el("th", cls, c));
    const body = table.createTBody();
    for (const p of a.steps.slice(0, MAX_STEPS)) {
      const tr = body.insertRow();
      tr.append(
        el("td", "text", p.step),
        el("td", "num", duration(p.measured_us * 1e3)),
        el("td", "num", duration(p.predicted_us * 1e3)),
        el("td", "num", duration(p.saving_us * 1e3)),
        el("td", "num", percent(p.measured_us > 0 ? (100 * p.saving_us) / p.measured_us : 0)),
      );
    }
    out.append(table);
    const matched = a.edits.map((e) => `${e.text}: ${count(e.matched)} slice${e.matched === 1 ? "" : "s"} or device ops`).join(" · ");
    out.append(el("p", "muted whatif-matched", `${matched} · replayed in ${ms.toFixed(0)} ms`));
  }

  /** A name picked elsewhere (a slice, a table row): the what-if's name, when the panel is open. */
  function pickName(name) {
    if (!state.on || !state.summary || !name) return;
    form.name.value = name;
    runWhatIf();
  }

  /** A finding's fix as the what-if: its edits kept, the panel opened. */
  async function pickEdits(edits) {
    if (!state.session || button.disabled) return;
    state.kept = [...edits];
    form.name.value = "";
    if (!state.on) await toggle(true);
    else runWhatIf();
    panel.scrollIntoView({ block: "nearest" });
  }

  return { attach, analysed, pickName, pickEdits, state };
}
