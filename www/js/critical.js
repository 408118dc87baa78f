// The critical path on the page. The "Critical path" toggle in the header draws each step's path on
// the timeline (its slices; the rest dimmed; arrows where it goes from one lane to another: the
// Session's `show_critical_path`) and opens the Critical path panel: what bounds the steps
// (critical-summary.js) and the what-if (whatif.js), replayed in the worker on the graph the first
// toggle built (`Session::what_if`). This module is the panel's controller: the shown trace, the
// toggle, the edits kept, and which answer is the newest.

import { count, duration } from "./format.js";
import { el } from "./dom.js";
import { breakdownBar, segmentTable, stepTable } from "./critical-summary.js";
import { composed, renderKept, showAnswer, whatIfForm } from "./whatif.js";

/**
 * The Critical path toggle and panel. Returns the page's critical path controller.
 * @param {import("./context.js").PageContext} cx the page's context (context.js): its view, pick and showRange
 */
export function startCritical({ view, pick, showRange }) {
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
  const form = whatIfForm({
    run: runWhatIf,
    keep: (edit) => {
      state.kept.push(edit);
      runWhatIf();
    },
  });

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
      const summary = await view.call(() => s.critical_path());
      if (summary === undefined || s !== state.session) return;
      state.buildMs = performance.now() - t0;
      state.summary = summary;
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
    left.append(el("h3", "", "What bounds the steps"), breakdownBar(sm), stepTable(sm, showRange));
    body.append(left, form.box);
    panel.append(body, el("h3", "", "Longest segments"), segmentTable(sm, pick));
    runWhatIf();
  }

  /** Runs the what-if of the kept edits and the composed one in the worker; shows the newest answer. */
  async function runWhatIf() {
    form.cancel();
    renderKept(form, state.kept, (i) => {
      state.kept.splice(i, 1);
      runWhatIf();
    });
    const s = state.session;
    const edits = [...state.kept, composed(form)].filter(Boolean);
    form.edit.textContent = edits.length ? `--what-if ${edits.join(" --what-if ")}` : "";
    const seq = ++state.asked;
    if (!edits.length || !state.summary) {
      state.answer = null;
      state.answered = [];
      form.answer.replaceChildren(el("p", "muted", "Name something to change."));
      return;
    }
    const t0 = performance.now();
    const answer = await view.call(() => s.what_if(edits.join("\n")));
    if (answer === undefined || s !== state.session || seq !== state.asked) return;
    const ms = performance.now() - t0;
    state.whatIfMs.push(ms);
    state.answer = answer;
    state.answered = edits;
    showAnswer(form.answer, state.answer, ms);
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
