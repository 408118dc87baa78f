// The what-if's controls and answer in the Critical path panel: a name (typed, or picked: a slice
// on the timeline, a table row, a finding's fix) removed or scaled, edits kept to compose several,
// and the predicted step times the worker's replay answers (`Session::what_if`, the CLI's
// `--what-if` syntax). The panel (critical.js) keeps the edits and asks; this draws. Text from
// the trace is set as text only.

import { count, duration, percent } from "./format.js";
import { el } from "./dom.js";
import { MAX_STEPS } from "./critical-summary.js";

/** The kinds a what-if can name besides slice names. */
const KINDS = [
  ["kernels", "computation kernels"],
  ["memcpy", "copies and fills on the device"],
  ["pageable", "copies from or to pageable host memory"],
  ["communication", "collectives"],
  ["DataLoader", "CPU time in a DataLoader's __next__"],
];

/** Milliseconds of typing before the what-if runs. */
const TYPING_MS = 120;

/**
 * @typedef {Object} WhatIfForm
 * @property {HTMLDivElement} box
 * @property {HTMLInputElement} name
 * @property {HTMLSelectElement} mode
 * @property {HTMLInputElement} factor
 * @property {HTMLUListElement} kept
 * @property {HTMLParagraphElement} edit
 * @property {HTMLDivElement} answer
 * @property {() => void} cancel drops a run that typing scheduled
 *
 * @typedef {import("../generated/answers.js").Answer} WhatIfAnswer
 */

/**
 * The controls, kept across renders so that a picked name stays.
 * @param {{ run: () => void, keep: (edit: string) => void }} on `run`: the edits changed (after
 *   TYPING_MS of typing); `keep`: "Add" pressed with an edit composed.
 * @returns {WhatIfForm}
 */
export function whatIfForm(on) {
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
  let typing = 0;
  const cancel = () => clearTimeout(typing);
  const soon = () => {
    cancel();
    typing = setTimeout(on.run, TYPING_MS);
  };
  name.addEventListener("input", soon);
  factor.addEventListener("input", soon);
  /** @type {WhatIfForm} */
  const form = { box, name, mode, factor, kept, edit, answer, cancel };
  // Removed reads as a factor of 0 in the box (a 0.5 left there would say the slice is halved);
  // back to "× factor", the factor typed before returns.
  let typed = factor.value;
  mode.addEventListener("change", () => {
    const removed = mode.value === "remove";
    if (removed && !factor.disabled) typed = factor.value;
    factor.value = removed ? "0" : typed;
    factor.disabled = removed;
    on.run();
  });
  add.addEventListener("click", () => {
    const e = composed(form);
    if (!e) return;
    name.value = "";
    on.keep(e);
  });
  return form;
}

/** The edit the controls compose, in the CLI's syntax, or null without a name. @param {WhatIfForm} form */
export function composed(form) {
  const n = form.name.value.trim();
  if (!n) return null;
  if (form.mode.value === "remove") return `${n}=0`;
  return `${n}*${form.factor.value === "" ? "1" : form.factor.value}`;
}

/**
 * The edits kept, each with a button that leaves it out.
 * @param {WhatIfForm} form
 * @param {string[]} kept
 * @param {(i: number) => void} drop
 */
export function renderKept(form, kept, drop) {
  form.kept.replaceChildren();
  kept.forEach((e, i) => {
    const li = el("li", "");
    li.append(el("code", "", e));
    const button = el("button", "link", "remove");
    button.type = "button";
    button.title = "Leave this edit out";
    button.addEventListener("click", () => drop(i));
    li.append(" ", button);
    form.kept.append(li);
  });
}

/**
 * The replay's answer: the mean step measured and predicted, a row per step, what each edit matched.
 * @param {HTMLElement} out
 * @param {WhatIfAnswer} a
 * @param {number} ms how long the replay took
 */
export function showAnswer(out, a, ms) {
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
