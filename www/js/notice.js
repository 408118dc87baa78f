// The line above the timeline about how the file was read. Damage (the file is cut short, holds
// invalid or repaired events, unpaired begin/end) is a notice a user should read before trusting
// the view. Observations (facts of healthy traces: flows whose start the profiler did not record,
// slices that overlap without nesting) are listed quietly under a closed <details>, never as a
// warning. Text from the trace goes in with textContent only.

import { count } from "./format.js";

const sentence = (kind) => kind.replace(/_/g, " ");

function items(list, rows, line) {
  list.replaceChildren(
    ...rows.map((d) => {
      const li = document.createElement("li");
      li.textContent = line(d);
      return li;
    }),
  );
}

/** Fills `#notice` from a summary (`diagnostics` = damage, `observations` = the rest). */
export function showNotice(summary) {
  const $ = (id) => document.getElementById(id);
  const box = $("notice");
  const damage = summary.diagnostics || [];
  const observations = summary.observations || [];
  items($("diagnostics"), damage, (d) => `${sentence(d.kind)} × ${count(d.count)}: ${d.detail}`);
  items($("observations"), observations, (o) => `${sentence(o.kind)} × ${count(o.count)}: ${o.explanation}`);
  $("diagnostics").hidden = damage.length === 0;
  $("observations").hidden = observations.length === 0;
  box.hidden = damage.length === 0 && observations.length === 0;
  box.classList.toggle("damage", damage.length > 0);
  box.classList.toggle("quiet", damage.length === 0);
  box.classList.toggle("warn", !!summary.truncated);
  const skipped = damage.filter((d) => d.kind !== "repaired_event").reduce((n, d) => n + d.count, 0);
  const notes = observations.length;
  $("notice-summary").textContent = damage.length
    ? `What was skipped or repaired${notes ? `, and ${notes} observation${notes > 1 ? "s" : ""}` : ""}`
    : `${notes} observation${notes > 1 ? "s" : ""} about this trace`;
  // A cut file loses everything after the cut, not only the skipped events: say how far it got.
  $("notice-text").textContent = summary.truncated
    ? `${summary.cut ? summary.cut.sentence : "This trace is truncated: the file ends early."} Everything before the cut is shown${skipped ? `; ${count(skipped)} damaged events or links at the cut were skipped` : ""}.`
    : damage.length
      ? `This file is damaged: ${count(damage.reduce((n, d) => n + d.count, 0))} events repaired or skipped (${damage.map((d) => sentence(d.kind)).join(", ")}).`
      : "Read as the profiler wrote it.";
}
