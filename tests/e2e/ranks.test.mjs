// End-to-end tests of a distributed job in the page (www/js/ranks.js): the gloo job with a known
// straggler (../shared/fixtures/pytorch-cpu-ranks/gloo4_straggler, its expected.json) opened as
// several files: a band per rank, the per-rank table, the heat strip marking the straggler's
// steps, a straggler finding that moves the view to its rank; the same job with a rank left out.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const JOB = "pytorch-cpu-ranks/gloo4_straggler";
const files = (fixturesDir, ranks) => ranks.map((r) => join(fixturesDir, JOB, `worker${r}.pt.trace.json.gz`));

async function open(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
}

async function jobReady(page) {
  await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.ranks), null, { timeout: 90000 });
  assert.equal(await page.evaluate(() => document.body.dataset.ranks), "ready", await page.textContent("#ranks-summary"));
  assert.equal(await page.evaluate(() => document.body.dataset.state), "ranks");
}

/** Waits until every band has drawn what was asked for (a frame of one band moves the others). */
function painted(page) {
  return page.evaluate(async () => {
    const { ranks } = window.sightline;
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      for (const t of ranks.traces) if (t.view) await t.view.idle();
    }
  });
}

export async function opensAJobAsSeveralFilesWithItsStraggler({ page, baseUrl, fixturesDir, screenshot }) {
  const expected = JSON.parse(readFileSync(join(fixturesDir, JOB, "expected.json"), "utf8"));
  await open(page, baseUrl);
  // File order says nothing: the ranks come from the traces.
  await page.setInputFiles("#file-input", files(fixturesDir, [3, 1, 0, 2]));
  await jobReady(page);
  await painted(page);

  assert.equal(await page.locator("#ranks-bands .rank-band").count(), expected.world_size);
  assert.deepEqual(await page.$$eval("#ranks-bands .rank-band", (b) => b.map((x) => x.dataset.rank)), ["0", "1", "2", "3"]);
  assert.equal(await page.locator("#ranks-table-rows tbody tr").count(), expected.world_size);
  assert.match(await page.textContent("#ranks-title"), /^4 of 4 ranks/);
  assert.equal(await page.locator("#ranks-issues li:not(.offsets)").count(), 0, await page.textContent("#ranks-issues"));
  // Every band is drawn, each from its own worker.
  const drawn = await page.evaluate(() => window.sightline.ranks.traces.map((t) => !!(t.view && t.view.meta)));
  assert.deepEqual(drawn, [true, true, true, true]);

  // The heat strip: the straggler's slow steps are marked on its row, and only those.
  const marked = await page.$$eval("#ranks-heat .heat-cell[data-straggler]", (c) => c.map((x) => [Number(x.dataset.rank), x.dataset.step]));
  assert.deepEqual(
    marked.sort(),
    expected.slow_profiler_steps.map((s) => [expected.straggler_rank, s]).sort(),
  );
  assert.equal(await page.locator("#ranks-heat .heat-cell").count(), 4 * 6);

  // Collectives matched across the 4 ranks, and the stragglers' sentences.
  assert.ok((await page.locator("#ranks-collectives-rows tbody tr").count()) >= 1);
  // Both tables are headed as the core declares their columns (a rank's row, a collective's).
  const heads = (id) => page.$$eval(`#${id} thead th`, (t) => t.map((x) => x.textContent));
  const rankHeads = await heads("ranks-table-rows");
  for (const h of ["Rank", "Median step", "ProfilerStep#3", "Exposed comm.", "Collective wait"]) assert.ok(rankHeads.includes(h), `${h} in ${rankHeads}`);
  const collectiveHeads = await heads("ranks-collectives-rows");
  for (const h of ["Name", "Group", "Bytes", "Wait", "Transfer", "Algorithm GB/s", "Bus GB/s"]) assert.ok(collectiveHeads.includes(h), `${h} in ${collectiveHeads}`);
  assert.match(await page.textContent("#ranks-stragglers"), new RegExp(`rank ${expected.straggler_rank} is [0-9.]+ ms late into the all_reduce of ProfilerStep#3; the other 3 ranks waited`));

  // The straggler finding moves the view to rank 2, onto its evidence; the other bands follow.
  const finding = page.locator("#ranks-findings li[data-id='straggler_rank']");
  assert.equal(await finding.count(), 1);
  assert.match(await finding.textContent(), /Rank 2 holds the others back/);
  await finding.click();
  await page.waitForFunction(() => window.sightline.ranks.focused === 2);
  await painted(page);
  assert.ok(await page.locator(".rank-band[data-rank='2'][data-focused]").isVisible());
  const w = await page.evaluate(async () => {
    const { ranks } = window.sightline;
    const out = {};
    for (const t of ranks.traces) out[t.rank] = Array.from(await t.session.window_ns());
    const ev = ranks.report.findings.find((f) => f.id === "straggler_rank").evidence[0];
    return { windows: out, ev };
  });
  const [a, b] = w.windows[2];
  assert.ok(a <= w.ev.start_ns && b >= w.ev.end_ns && b - a < 2 * (w.ev.end_ns - w.ev.start_ns), `rank 2 shows ${a}..${b}, evidence ${w.ev.start_ns}..${w.ev.end_ns}`);
  // One host, one clock: the other bands show the same instants (clock origins differ by the
  // ranks' trace starts only), so their spans equal rank 2's.
  for (const r of [0, 1, 3]) assert.ok(Math.abs(w.windows[r][1] - w.windows[r][0] - (b - a)) < 1e3, `rank ${r}: ${w.windows[r]}`);
  await screenshot("ranks-gloo4");

  // Closing the job ends its workers and returns to the empty page.
  await page.click("#ranks-close");
  assert.equal(await page.evaluate(() => document.body.dataset.state), "empty");
  assert.equal(await page.evaluate(() => window.sightline.ranks.traces.length), 0);
}

export async function opensAJobFolder({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  // The folder holds expected.json too: a file that is not a trace is reported, not compared.
  await page.setInputFiles("#folder-input", join(fixturesDir, JOB));
  await jobReady(page);
  assert.equal(await page.locator("#ranks-bands .rank-band").count(), 4);
  assert.match(await page.textContent("#ranks-title"), /^4 of 4 ranks/);
  assert.match(await page.textContent("#ranks-issues"), /expected\.json: not read \(.*not a trace/);
  // expected.json is not counted as a trace (it was: "5 traces").
  assert.match(await page.textContent("#ranks-summary"), /^4 traces \(1 other file not read\) · /);
}

export async function reportsAMissingRankOfADroppedJob({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  // Three files dropped together (two would be a comparison).
  const dropped = files(fixturesDir, [0, 1, 3]).map((p) => [p.split("/").pop(), readFileSync(p).toString("base64")]);
  await page.evaluate((list) => {
    const dt = new DataTransfer();
    for (const [name, b64] of list) dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
    for (const type of ["dragenter", "dragover", "drop"]) {
      document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, dropped);
  await jobReady(page);
  assert.equal(await page.locator("#ranks-bands .rank-band").count(), 3);
  assert.equal(await page.locator("#ranks-table-rows tbody tr").count(), 3);
  assert.match(await page.textContent("#ranks-title"), /^3 of 4 ranks/);
  assert.match(await page.textContent("#ranks-issues"), /Missing: rank 2 of world size 4/);
}

export async function heatAndStragglersRankByWhatTheStepLoses({ page, baseUrl, fixturesDir }) {
  const expected = JSON.parse(readFileSync(join(fixturesDir, JOB, "expected.json"), "utf8"));
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", files(fixturesDir, [0, 1, 2, 3]));
  await jobReady(page);
  // The heat strip: the hottest cells are the straggler's slow steps (everyone waited for it
  // there), not the steps that are long on every rank or the noise of the others.
  const cells = await page.$$eval("#ranks-heat .heat-cell", (cs) =>
    cs.map((c) => {
      const [r, g, b] = getComputedStyle(c).backgroundColor.match(/\d+/g).map(Number);
      return { rank: Number(c.dataset.rank), step: c.dataset.step, lightness: (Math.max(r, g, b) + Math.min(r, g, b)) / 2 / 255 };
    }),
  );
  assert.equal(cells.length, 4 * 6);
  cells.sort((a, b) => a.lightness - b.lightness);
  const hottest = cells.slice(0, expected.slow_profiler_steps.length).map((c) => [c.rank, c.step]).sort();
  assert.deepEqual(hottest, expected.slow_profiler_steps.map((s) => [expected.straggler_rank, s]).sort(), JSON.stringify(cells.slice(0, 4)));
  // Every other cell is clearly paler than those.
  const next = cells[expected.slow_profiler_steps.length];
  assert.ok(next.lightness - cells[expected.slow_profiler_steps.length - 1].lightness > 0.1, JSON.stringify(cells.slice(0, 4)));

  // The stragglers list, costliest first: the waits caused, largest first.
  const report = await page.evaluate(() => window.sightline.ranks.report.stragglers);
  const byCost = [...report].sort((a, b) => b.wait_caused_us - a.wait_caused_us).map((s) => `${s.rank} ${s.step}`);
  const shown = await page.$$eval("#ranks-stragglers li", (li) => li.map((x) => x.textContent));
  assert.equal(shown.length, report.length);
  assert.deepEqual(
    shown.map((t) => /^rank (\d+) .* of (\S+);/.exec(t).slice(1).join(" ")),
    byCost,
  );
  assert.match(shown[0], new RegExp(`^rank ${expected.straggler_rank} `));
  // Not time order: the costliest comes before a straggler of an earlier step.
  assert.notDeepEqual(byCost, report.map((s) => `${s.rank} ${s.step}`), "the fixture's costliest straggler is not its first");
}

/** Drops `paths` on the page together, as files. */
async function dropFiles(page, paths) {
  const list = paths.map((p) => [p.split("/").pop(), readFileSync(p).toString("base64")]);
  await page.evaluate((list) => {
    const dt = new DataTransfer();
    for (const [name, b64] of list) dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
    for (const type of ["dragenter", "dragover", "drop"]) {
      document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, list);
}

export async function twoFilesChosenWithOpenAreTreatedAsTheirDrop({ page, baseUrl, fixturesDir }) {
  const pair = ["pytorch-cpu-pairs/workers.base.pt.trace.json.gz", "pytorch-cpu-pairs/workers.new.pt.trace.json.gz"].map((f) => join(fixturesDir, f));
  await open(page, baseUrl);
  // Two runs, chosen with Open…: the choice to compare them, as their drop offers.
  for (const how of ["open", "drop"]) {
    if (how === "open") await page.setInputFiles("#file-input", pair);
    else await dropFiles(page, pair);
    await page.waitForSelector("#compare-choice[open]");
    assert.match(await page.textContent("#choice-names"), /workers\.base\.pt\.trace\.json\.gz \(before\) and workers\.new\.pt\.trace\.json\.gz \(after\)/, how);
    assert.notEqual(await page.evaluate(() => document.body.dataset.state), "ranks", how);
    // The dialog's close event comes after the click: wait for the trace it opens, not the one before.
    await page.evaluate(() => {
      window.shownBefore = window.sightline.app.active;
    });
    await page.click("#choice-first");
    await page.waitForFunction(() => document.body.dataset.state === "ready" && window.sightline.app.active !== window.shownBefore);
    assert.equal(await page.textContent("#file-name"), "workers.base.pt.trace.json.gz");
  }
  // Two ranks of one job, either way: the job, with its two ranks of four.
  for (const how of ["open", "drop"]) {
    if (how === "open") await page.setInputFiles("#file-input", files(fixturesDir, [2, 0]));
    else await dropFiles(page, files(fixturesDir, [2, 0]));
    await jobReady(page);
    assert.ok(await page.isHidden("#compare-choice"), how);
    assert.match(await page.textContent("#ranks-title"), /^2 of 4 ranks/, how);
    assert.deepEqual(await page.$$eval("#ranks-bands .rank-band", (b) => b.map((x) => x.dataset.rank)), ["0", "2"], how);
    await page.click("#ranks-close");
  }
}

export async function aJobOpenedWhileATraceLoadsIsNotReplacedByIt({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  // A trace chosen, then a job chosen before the trace is drawn: the later choice stays on screen.
  await page.setInputFiles("#file-input", join(fixturesDir, "pytorch-cpu-pairs/workers.base.pt.trace.json.gz"));
  await page.setInputFiles("#file-input", files(fixturesDir, [1, 3]));
  await jobReady(page);
  assert.equal(await page.evaluate(() => window.sightline.app.loading === null), true);
  assert.match(await page.textContent("#ranks-title"), /^2 of 4 ranks/);
}
