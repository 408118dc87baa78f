// End-to-end tests of comparing two traces in the page (www/js/compare.js): "Compare with…" after
// the first trace, two files dropped together, `?url=A&compare=B`; the headline and diff tables;
// one zoom for both timelines; a diff row's slices highlighted in both; device-time columns only
// where a trace has device time.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const H100 = "real/tracelens_h100_bert_small_stack_mem.json.gz";
const MI300 = "real/tracelens_mi300_bert_small.json.gz";
// Two CPU-only traces of one model (DataLoader workers 0 and 2).
const CPU_BASE = "pytorch-cpu-pairs/workers.base.pt.trace.json.gz";
const CPU_NEW = "pytorch-cpu-pairs/workers.new.pt.trace.json.gz";
// A program before and after its untraced CPU time was removed (tests/fixtures/judge/): the
// optimizer's share of the shorter steps crosses its threshold.
const JUDGE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "judge");
const UNTRACED_BASE = join(JUDGE, "untraced_cpu_time.base.pt.trace.json.gz");
const UNTRACED_FIXED = join(JUDGE, "untraced_cpu_time.fixed.pt.trace.json.gz");

async function open(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
}

async function ready(page) {
  await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), "ready", await page.textContent("#error"));
}

async function compared(page) {
  await page.waitForFunction(() => ["ready", "error"].includes(document.getElementById("compare").dataset.state), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.getElementById("compare").dataset.state), "ready", await page.textContent("#compare-headline"));
}

/**
 * Waits until both timelines have drawn what was asked for. Each frame comes from its trace's
 * worker, and a frame of one view makes the other follow after two more calls, so a few rounds.
 */
function painted(page) {
  return page.evaluate(async () => {
    const { view, compare } = window.sightline;
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      await view.idle();
      if (compare.view) await compare.view.idle();
    }
  });
}

/** The column headings of a compare tab's table, after a click on the tab. */
async function headsOf(page, title, id) {
  await page.click(`#compare-tabs button:has-text('${title}')`);
  await page.waitForSelector(`#compare-${id}-table`, { state: "attached" });
  return page.evaluate((id) => Array.from(document.querySelectorAll(`#compare-${id}-table thead th`)).map((th) => th.textContent), id);
}

/** Both sessions' windows, and the alignment offset between them. */
function windows(page) {
  return page.evaluate(async () => {
    const { view, compare } = window.sightline;
    return { base: Array.from(await view.session.window_ns()), new: Array.from(await compare.session.window_ns()), offset: compare.offset };
  });
}

export async function comparesWithASecondTraceAcrossHardware({ page, baseUrl, fixturesDir, screenshot }) {
  await open(page, baseUrl);
  assert.ok(await page.isHidden("#compare-button"), "no Compare with… before a trace is open");
  await page.setInputFiles("#file-input", join(fixturesDir, H100));
  await ready(page);
  assert.ok(await page.isVisible("#compare-button"));
  await page.setInputFiles("#compare-input", join(fixturesDir, MI300));
  await compared(page);
  assert.match(await page.textContent("#compare-name"), /mi300/);
  assert.match(await page.textContent("#compare-headline"), /^median step .* -> .*\(over 1 and 1 steps\)/);

  // The operator rows: before, after, delta; the rows of both traces, addmm in both.
  const ops = await page.evaluate(() => {
    const t = document.getElementById("compare-ops-table");
    const heads = Array.from(t.tHead.rows[0].cells).map((c) => c.textContent);
    const rows = Array.from(t.tBodies[0].rows).map((r) => Array.from(r.cells).map((c) => c.textContent));
    return { heads, rows };
  });
  for (const h of ["Name", "Status", "Base Self CPU", "New Self CPU", "Self CPU delta", "Self CPU change"]) assert.ok(ops.heads.includes(h), `${h} in ${ops.heads}`);
  const addmm = ops.rows.find((r) => r[0] === "aten::addmm");
  assert.ok(addmm, "aten::addmm row");
  assert.equal(addmm[1], "both");
  // The change is NEW over BASE as a signed percentage (a declared ratio), "new" where BASE had none.
  const changeAt = ops.heads.indexOf("Self CPU change");
  assert.match(addmm[changeAt], /^[+-]\d/);
  assert.ok(ops.rows.some((r) => r[1] === "added") && ops.rows.some((r) => r[1] === "removed"), "runtime calls differ: cuda* removed, hip* added");
  // Both traces ran on a GPU: the device-time columns are there.
  for (const h of ["Base Self device", "New Self device", "Self device delta"]) assert.ok(ops.heads.includes(h), `${h} in ${ops.heads}`);
  const labelHeads = await headsOf(page, "Labels", "labels");
  for (const h of ["Base Device inside", "New Device inside", "Device delta"]) assert.ok(labelHeads.includes(h), `${h} in ${labelHeads}`);
  // The idle tab: the waits' declared columns, the whole idle time and the host's wait first.
  const idleHeads = await headsOf(page, "GPU idle", "idle");
  for (const h of ["Waiting for", "Base", "New", "Delta"]) assert.ok(idleHeads.includes(h), `${h} in ${idleHeads}`);
  assert.equal(await page.textContent("#compare-idle-table tbody tr:first-child td:first-child"), "GPU idle (all)");
  await page.click("#compare-tabs button:has-text('Operators')");

  // GPU ops pair through their launcher: a row names a CUTLASS GEMM and a hipBLASLt one.
  await page.click("#compare-tabs button:has-text('GPU ops')");
  const launcherRows = await page.evaluate(() =>
    Array.from(document.querySelectorAll("#compare-kernels-table tbody tr")).filter((r) => /launcher/.test(r.textContent) && /aten::addmm/.test(r.textContent)).length,
  );
  assert.ok(launcherRows > 0, "GEMMs of aten::addmm matched through the launcher");

  // One zoom for both: zooming BASE moves NEW to the same span (shifted by the alignment).
  await painted(page);
  const canvas = await page.$("#timeline");
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.keyboard.press("w");
  await page.keyboard.press("w");
  await painted(page);
  await painted(page);
  let w = await windows(page);
  const near = (a, b) => Math.abs(a - b) <= Math.max(2, 1e-6 * Math.abs(b));
  assert.ok(near(w.new[0] - w.offset, w.base[0]) && near(w.new[1] - w.offset, w.base[1]), JSON.stringify(w));
  // ... and zooming NEW moves BASE.
  const cbox = await (await page.$("#compare-timeline")).boundingBox();
  await page.mouse.move(cbox.x + cbox.width / 2, cbox.y + cbox.height / 2);
  await page.mouse.wheel(0, 300);
  await painted(page);
  await painted(page);
  w = await windows(page);
  assert.ok(near(w.new[0] - w.offset, w.base[0]) && near(w.new[1] - w.offset, w.base[1]), JSON.stringify(w));

  // A click on a diff row highlights its slices in both timelines.
  await page.click("#compare-tabs button:has-text('Operators')");
  await page.click("#compare-ops-table tbody tr:has(td:text-is('aten::addmm'))");
  await page.waitForFunction(() => /before/.test(document.getElementById("compare-highlight").textContent));
  const h = await page.evaluate(() => window.sightline.compare.highlighted);
  assert.ok(h.base > 0 && h.new > 0, JSON.stringify(h));
  await painted(page);
  await screenshot("compare-h100-mi300");

  // Per step / totals and by shape re-diff in place.
  await page.check("#compare-shape");
  await page.waitForFunction(() => window.sightline.compare.diff.by_shape === true);
  await page.check("#compare-total");
  await page.waitForFunction(() => window.sightline.compare.diff.mode === "total");

  // Opening another BASE closes the comparison.
  await page.setInputFiles("#file-input", join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz"));
  await ready(page);
  assert.ok(await page.isHidden("#compare"));
}

export async function twoDroppedFilesOfferAComparison({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  const [a, b] = [H100, MI300].map((f) => readFileSync(join(fixturesDir, f)).toString("base64"));
  const drop = (a, b) =>
    page.evaluate(
      ([a, b]) => {
        const file = (b64, name) => new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name);
        const dt = new DataTransfer();
        dt.items.add(file(a, "before.json.gz"));
        dt.items.add(file(b, "after.json.gz"));
        for (const type of ["dragenter", "dragover", "drop"]) {
          document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
        }
      },
      [a, b],
    );
  // Open one of them.
  await drop(a, b);
  await page.waitForSelector("#compare-choice[open]");
  assert.match(await page.textContent("#choice-names"), /before\.json\.gz \(before\) and after\.json\.gz \(after\)/);
  await page.click("#choice-second");
  await ready(page);
  assert.equal(await page.textContent("#file-name"), "after.json.gz");
  assert.ok(await page.isHidden("#compare"));
  // Or compare them: the first is BASE.
  await drop(a, b);
  await page.waitForSelector("#compare-choice[open]");
  await page.click("#choice-compare");
  await compared(page);
  assert.equal(await page.textContent("#file-name"), "before.json.gz");
  assert.equal(await page.textContent("#compare-name"), "after.json.gz");
}

export async function urlAndCompareParametersOpenBoth({ page, baseUrl, ignore }) {
  // The page streams same-site URLs; see viewer.test.mjs on the report this gives under interception.
  ignore("http", /\/samples\/[^ ]+: net::ERR_ABORTED$/);
  const sample = "samples/tracelens_h100_bert_small_stack_mem.json.gz";
  await open(page, `${baseUrl}?url=${sample}&compare=${sample}`);
  await ready(page);
  await compared(page);
  // A trace against itself: nothing moved.
  const d = await page.evaluate(() => window.sightline.compare.diff);
  assert.equal(d.steps.delta.step_time_us, 0);
  assert.ok(d.ops.every((o) => o.delta_self_cpu_us === 0 && o.status === "both"));
  assert.equal(d.findings.added.length + d.findings.removed.length + d.findings.changed.length, 0);
  assert.match(await page.textContent("#compare-headline"), /\+0 ns/);
  // A step to align at: both traces have ProfilerStep#6.
  const options = await page.evaluate(() => Array.from(document.querySelectorAll("#compare-align option")).map((o) => o.textContent));
  assert.ok(options.includes("ProfilerStep#6"), options.join(","));
  await page.click("#compare-close");
  assert.ok(await page.isHidden("#compare"));
}

export async function cpuOnlyTracesCompareWithoutDeviceColumns({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, CPU_BASE));
  await ready(page);
  await page.setInputFiles("#compare-input", join(fixturesDir, CPU_NEW));
  await compared(page);
  const check = async (when) => {
    for (const [title, id, cpu] of [["Operators", "ops", "Base Self CPU"], ["Labels", "labels", "Base CPU total"]]) {
      const heads = await headsOf(page, title, id);
      assert.ok(heads.includes(cpu), `${when}, ${title}: ${cpu} in ${heads}`);
      assert.deepEqual(heads.filter((h) => /device/i.test(h)), [], `${when}, ${title}: no device column for two CPU-only traces`);
    }
  };
  await check("per step");
  await page.check("#compare-shape");
  await page.waitForFunction(() => window.sightline.compare.diff.by_shape === true);
  await page.check("#compare-total");
  await page.waitForFunction(() => window.sightline.compare.diff.mode === "total");
  await check("totals by shape");
}

export async function bothTimelinesShareOneScaleAndFitWhole({ page, baseUrl, fixturesDir }) {
  // Either trace the longer one: the fit shows both whole, on one scale.
  for (const [a, b] of [[H100, MI300], [MI300, H100]]) {
    await open(page, baseUrl);
    await page.setInputFiles("#file-input", join(fixturesDir, a));
    await ready(page);
    await page.setInputFiles("#compare-input", join(fixturesDir, b));
    await compared(page);
    // Each trace's span, as its digest gives it.
    const spans = await page.evaluate(() => {
      const { compare } = window.sightline;
      return { base: compare.baseDigest.value.summary.span_ns, new: compare.newDigest.value.summary.span_ns };
    });
    assert.ok(spans.base > 0 && spans.new > 0 && spans.base !== spans.new, JSON.stringify(spans));
    const check = async (when) => {
      await painted(page);
      await painted(page);
      const w = await windows(page);
      const scales = await page.evaluate(() => [window.sightline.view.meta.ns_per_px, window.sightline.compare.view.meta.ns_per_px]);
      const near = (x, y) => Math.abs(x - y) <= Math.max(2, 1e-6 * Math.abs(y));
      assert.ok(near(w.new[0] - w.offset, w.base[0]) && near(w.new[1] - w.offset, w.base[1]), `${when}: ${JSON.stringify(w)}`);
      assert.ok(Math.abs(scales[0] - scales[1]) <= 1e-6 * scales[0], `${when}: ns per px ${scales}`);
      // Both traces whole: BASE's [0, span] and NEW's [0, span] (in BASE's time, less the offset).
      assert.ok(w.base[0] <= Math.min(0, -w.offset) && w.base[1] >= Math.max(spans.base, spans.new - w.offset), `${when}: ${JSON.stringify({ w, spans })}`);
      assert.ok(w.new[0] <= Math.min(0, w.offset) && w.new[1] >= Math.max(spans.new, spans.base + w.offset), `${when}: ${JSON.stringify({ w, spans })}`);
    };
    await check(`${a} then ${b}, as opened`);
    const box = await (await page.$("#timeline")).boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.press("w");
    await page.keyboard.press("w");
    await painted(page);
    await page.keyboard.press("0");
    await check(`${a} then ${b}, after 0`);
  }
}

export async function theChangeIsExplainedAndACrossedThresholdSaysSo({ page, baseUrl, fixturesDir, screenshot }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", UNTRACED_BASE);
  await ready(page);
  await page.setInputFiles("#compare-input", UNTRACED_FIXED);
  await compared(page);
  const d = await page.evaluate(() => window.sightline.compare.diff);

  // Under the headline, the change explained: the share, then a category a line, as the CLI's.
  assert.ok(await page.isVisible("#compare-explained"));
  const head = await page.textContent("#compare-explained-head");
  assert.equal(head, d.summary.explanation[0]);
  // What no category holds (the median step against its categories' medians) is said apart.
  assert.match(head, /^explained: \d+% of the change by step category, then operator \(per step; \S+ \S+ unexplained(, \S+ \S+ of it held by no category: the categories' medians moved \S+ \S+, the median step \S+ \S+)?\)$/);
  const items = await page.$$eval("#compare-explained-list li", (li) => li.map((x) => x.textContent));
  assert.equal(items.length, d.summary.explained.length);
  assert.match(items[0], /^Other -\d+\.\d ms time in no operator, not named$/);
  assert.ok(items.some((t) => /^CPU Exec -[\d.]+ ms aten::mm -/.test(t)), items.join(" | "));

  // The findings table: the optimizer loop crossed its threshold (it did not appear), with both
  // figures; the untraced time fell under its own.
  await page.click("#compare-tabs button:has-text('Findings')");
  await page.waitForSelector("#compare-findings-table", { state: "attached" });
  const rows = await page.evaluate(() => {
    const t = document.getElementById("compare-findings-table");
    const heads = Array.from(t.tHead.rows[0].cells).map((c) => c.textContent);
    return Array.from(t.tBodies[0].rows).map((r) => Object.fromEntries(Array.from(r.cells).map((c, i) => [heads[i], c.textContent])));
  });
  const optimizer = rows.find((r) => r.Id === "optimizer_step_heavy");
  assert.ok(optimizer, JSON.stringify(rows));
  assert.equal(optimizer.Change, "crossed its threshold");
  const c = d.findings.added.find((f) => f.id === "optimizer_step_heavy").crossed;
  assert.equal(optimizer.Threshold, `${(c.base * 100).toFixed(1)}% → ${(c.new * 100).toFixed(1)}% (threshold 15.0%)`);
  const untraced = rows.find((r) => r.Id === "untraced_cpu_time");
  assert.equal(untraced.Change, "crossed its threshold");
  await screenshot("compare-explained");

  // A change within the noise explains nothing, and the block goes.
  await page.setInputFiles("#file-input", join(fixturesDir, CPU_BASE));
  await ready(page);
  assert.ok(await page.isHidden("#compare-explained"));
  await page.setInputFiles("#compare-input", join(fixturesDir, CPU_NEW));
  await compared(page);
  assert.ok((await page.evaluate(() => window.sightline.compare.diff.summary.noise)) === true);
  assert.ok(await page.isHidden("#compare-explained"));
  await page.click("#compare-tabs button:has-text('Findings')");
  assert.match(await page.textContent("#compare-body"), /No finding appeared, disappeared or changed severity\./);
}
