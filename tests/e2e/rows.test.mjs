// End-to-end checks of how real traces are read and laid out: a trace as the profiler wrote it
// opens without a warning (its observations are listed quietly), and with Python stacks the
// operators of a zoomed-in stretch are painted in the first rows of the main thread, with the
// Python frames folded, and higher still with them hidden (a choice remembered per trace).

import assert from "node:assert/strict";
import { join } from "node:path";
import { openTrace } from "./lib.mjs";

const HEALTHY = [
  "real/tracelens_h100_owlv2_stack_mem.json.gz",
  "real/hta_v100_train_1rank_ns_resolution.pt.trace.json.gz",
  "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz",
];
const WITH_STACK = "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz";

/** Waits until the frames asked for so far are drawn (their layout comes from the trace's worker). */
function painted(page) {
  return page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await window.sightline.view.idle();
  });
}

export async function healthyTracesOpenWithoutAWarning({ page, baseUrl, fixturesDir, screenshot }) {
  for (const rel of HEALTHY) {
    await openTrace(page, baseUrl, join(fixturesDir, rel));
    const notice = await page.evaluate(() => {
      const box = document.getElementById("notice");
      return {
        hidden: box.hidden,
        classes: [...box.classList],
        text: document.getElementById("notice-text").textContent,
        damage: document.querySelectorAll("#diagnostics li").length,
        observations: [...document.querySelectorAll("#observations li")].map((li) => li.textContent),
      };
    });
    assert.ok(!notice.classes.includes("damage") && !notice.classes.includes("warn"), `${rel}: ${JSON.stringify(notice)}`);
    assert.equal(notice.damage, 0, rel);
    assert.doesNotMatch(notice.text, /repaired|skipped|truncated/, rel);
    if (!notice.hidden) assert.match(notice.text, /as the profiler wrote it/, rel);
    if (rel.includes("owlv2")) {
      assert.ok(notice.observations.some((o) => /flow without start/.test(o)), notice.observations.join("\n"));
      await screenshot("rows-healthy-notice");
    }
  }
}

/** Rows (0 = top) of the main thread's labels that name operators, in the last painted frame. */
function operatorRows(page) {
  return page.evaluate(() => {
    const meta = window.sightline.view.meta;
    const lane = meta.tracks.find((t) => t.kind === "lane" && !t.gpu);
    return meta.labels
      .filter((l) => /^aten::/.test(l.text) && l.y >= lane.y && l.y < lane.y + lane.height)
      .map((l) => Math.round((l.y - lane.y - 3) / 18));
  });
}

export async function withStackOperatorsArePaintedInTheFirstRows({ page, baseUrl, fixturesDir, screenshot }) {
  await page.goto(baseUrl);
  await page.evaluate(() => localStorage.clear());
  await openTrace(page, baseUrl, join(fixturesDir, WITH_STACK));
  // Zoom in on a stretch in the middle of the run, where the first second's rows have long closed.
  await page.evaluate(async () => {
    const s = window.sightline.view.session;
    const [t0, t1] = await s.window_ns();
    const mid = t0 + (t1 - t0) * 0.6;
    await s.set_window(mid, mid + (t1 - t0) / 400);
    window.sightline.view.request();
  });
  await painted(page);
  const folded = await operatorRows(page);
  assert.ok(folded.length > 0, "operators are labelled");
  // Within the rows a lane shows before it is expanded (16), under the real Python nesting of
  // this stretch, not behind "N more rows" as when every step was laid one row deeper.
  assert.ok(Math.min(...folded) < 16, `operators start on row ${Math.min(...folded)}`);
  const top = await page.evaluate(() => window.sightline.view.meta.labels.map((l) => l.text).find((t) => / › /.test(t)));
  assert.ok(top && /<module>/.test(top), `the frames spanning the thread are folded into one labelled row: ${top}`);
  await screenshot("rows-with-stack-folded");

  const toggle = page.locator("#python-frames");
  assert.ok(await toggle.isVisible(), "a with_stack trace offers the Python frames toggle");
  await toggle.click();
  await painted(page);
  const hidden = await operatorRows(page);
  // Only the record_function labels (optimizer_step, Optimizer.step#AdamW.step) stay above them.
  assert.ok(hidden.length > 0 && Math.min(...hidden) <= 2, `without Python frames, operators on rows ${hidden}`);
  assert.ok(Math.min(...hidden) < Math.min(...folded), "hiding the frames moves the operators up");
  assert.match(await toggle.textContent(), /Show Python frames/);
  await screenshot("rows-with-stack-hidden");

  // Remembered for this trace: opening it again keeps the frames hidden.
  await page.reload();
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
  await openTrace(page, baseUrl, join(fixturesDir, WITH_STACK));
  await page.waitForFunction(() => /Show Python frames/.test(document.getElementById("python-frames").textContent));
}
