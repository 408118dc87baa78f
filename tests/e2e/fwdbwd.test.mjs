// The details panel's forward and backward operators (www/js/details.js): a forward operator
// names the backward node its fwdbwd flow leads to, and that node the forward operator, each with
// a button that selects it and fits the timeline to it. The CPU trace's autograd graph.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openTrace } from "./lib.mjs";

/** The selected slice, its name and the span the timeline shows (ns). */
function selected(page) {
  return page.evaluate(async () => {
    const { app, view } = window.sightline;
    const sel = await app.active.session.selection();
    const d = await app.active.session.details(sel.slice[0], sel.slice[1]);
    await view.draw();
    return { slice: sel.slice, name: d.name, start: d.start_ns, dur: d.dur_ns, viewStart: view.meta.start_ns, span: view.meta.ns_per_px * view.canvas.clientWidth };
  });
}

export async function detailsLeadFromForwardToBackwardAndBack({ page, baseUrl, fixturesDir, screenshot }) {
  await openTrace(page, baseUrl, join(fixturesDir, "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz"), { analyses: true });
  await page.fill("#search", "aten::mean");
  await page.press("#search", "Enter");
  await page.waitForFunction(() => document.querySelector("#details .slice-name")?.textContent === "aten::mean");
  const forward = await selected(page);
  assert.ok(forward.span > 1e9, "the whole trace (1.27 s) is shown");
  assert.equal(await page.textContent("#details .fwdbwd.backward"), "Backward: MeanBackward0 Show");
  assert.equal(await page.$("#details .fwdbwd.forward"), null);

  // Show: the backward node selected, the timeline fitted to it.
  await page.click("#details .fwdbwd.backward button");
  await page.waitForFunction(() => document.querySelector("#details .slice-name")?.textContent === "MeanBackward0");
  const backward = await selected(page);
  assert.equal(backward.name, "MeanBackward0");
  assert.ok(backward.start > forward.start, "the backward pass runs after the forward");
  assert.ok(backward.span < 4 * backward.dur, `fitted: ${backward.span} ns shown for a ${backward.dur} ns slice`);
  assert.ok(backward.viewStart <= backward.start && backward.start + backward.dur <= backward.viewStart + backward.span);
  assert.equal(await page.textContent("#details .fwdbwd.forward"), "Forward: aten::mean Show");
  await screenshot("details-backward");

  // And back to the same forward operator.
  await page.click("#details .fwdbwd.forward button");
  await page.waitForFunction(() => document.querySelector("#details .slice-name")?.textContent === "aten::mean");
  const again = await selected(page);
  assert.deepEqual(again.slice, forward.slice);
  assert.ok(again.span < 4 * again.dur, "fitted to the forward operator");
}
