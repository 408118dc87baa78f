// End-to-end tests of memory snapshots in the page (www/js/snapshot*.js): a fixture snapshot of
// tests/fixtures/snapshot/ opened through the file input in headless Chromium shows the figures
// `sightline snapshot FILE --json` gives (which tests/snapshot.rs checks against PyTorch's
// `_memory_viz`): the peak, every grouping's top holders, the segments and the `oom` entry; the
// timeline is as tall as the peak and a band hovered and clicked says what it is; two snapshots
// compared show `sightline snapshot BASE NEW --json`; a snapshot given as a trace, and a trace
// given as a snapshot, are each told what they are.
// The binary is $SIGHTLINE_BIN, else target/debug/sightline, else target/release/sightline.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FIXTURES = join(root, "tests/fixtures/snapshot");
const GROUPINGS = ["by_frame", "by_line", "by_file", "by_annotation", "by_category", "by_compile_context"];

function cli(...args) {
  const candidates = [process.env.SIGHTLINE_BIN, join(root, "target/debug/sightline"), join(root, "target/release/sightline")];
  const bin = candidates.find((c) => c && existsSync(c));
  if (!bin) throw new Error("no sightline binary: run `cargo build` first (or set SIGHTLINE_BIN)");
  return JSON.parse(execFileSync(bin, ["snapshot", ...args, "--json"], { encoding: "utf8" }));
}

async function openSnapshot(page, baseUrl, file) {
  if (!page.url().startsWith(baseUrl)) await page.goto(baseUrl);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
  await page.setInputFiles("#file-input", file);
  await page.waitForFunction(() => ["snapshot", "error", "ready"].includes(document.body.dataset.state), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), "snapshot", await page.textContent("#error"));
  await page.evaluate(() => window.sightline.snapshot.chart.idle());
}

/** The rows of a group table: [key, ...each cell's exact value]. */
function rowsOf(page, selector) {
  return page.$$eval(`${selector} tbody tr`, (trs) => trs.map((tr) => [tr.cells[0].textContent, ...Array.from(tr.cells).slice(1).map((td) => Number(td.dataset.value))]));
}

async function checkGroups(page, at) {
  for (const [i, g] of GROUPINGS.entries()) {
    await page.click(`#snapshot-tabs button:nth-child(${i + 1})`);
    const rows = await rowsOf(page, `#snapshot-${g}`);
    assert.deepEqual(rows, at[g].map((r) => [r.key, r.bytes, r.allocations]), g);
  }
}

export async function snapshotFiguresEqualTheCli({ page, baseUrl }) {
  for (const name of ["training.pickle.gz", "oom.pickle", "every_key.pickle"]) {
    const file = join(FIXTURES, name);
    const want = cli(file);
    await openSnapshot(page, baseUrl, file);
    const d = want.devices[0];
    assert.equal(Number(await page.getAttribute("#snapshot-peak", "data-peak-bytes")), d.peak_bytes, name);
    await checkGroups(page, d.at_peak);
    const seg = await page.$eval("#snapshot-segments-summary", (p) => ({ ...p.dataset }));
    const g = want.segments;
    assert.deepEqual(seg, { reservedBytes: String(g.reserved_bytes), allocatedBytes: String(g.allocated_bytes), freeInternalBytes: String(g.free_internal_bytes), freeExternalBytes: String(g.free_external_bytes) }, name);
    const segRows = await page.$$eval("#snapshot-segments-table tbody tr", (trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td[data-value]")).map((td) => Number(td.dataset.value))));
    assert.deepEqual(segRows, g.segments.map((s) => [s.reserved_bytes, s.allocated_bytes, s.free_internal_bytes, s.free_external_bytes]), name);
    const ooms = await page.$$eval(".snapshot-oom", (ps) => ps.map((p) => [Number(p.dataset.requestedBytes), Number(p.dataset.shortBytes), Number(p.dataset.liveBytes)]));
    assert.deepEqual(ooms, d.ooms.map((o) => [o.requested_bytes, o.short_bytes, o.live_bytes]), name);
    if (name === "oom.pickle") assert.ok(ooms.length > 0, "the oom fixture's oom is explained");
    // The whole trace in view: the canvas' full height is the peak.
    assert.equal(Number(await page.getAttribute("#snapshot-timeline", "data-max-bytes")), d.peak_bytes, name);
  }
}

/** A snapshot linked with `?url=` opens as one chosen does, and its progress never counts trace events. */
export async function aSnapshotLinkedWithUrlOpens({ page, baseUrl }) {
  const file = join(FIXTURES, "training.pickle.gz");
  const want = cli(file);
  // Served beside the page, as a snapshot on the same site is.
  await page.route("**/linked/training.pickle.gz", (route) => route.fulfill({ body: readFileSync(file), contentType: "application/gzip" }));
  await page.goto(`${baseUrl}?url=linked/training.pickle.gz`);
  await page.waitForFunction(() => ["snapshot", "error", "ready"].includes(document.body.dataset.state), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), "snapshot", await page.textContent("#error"));
  assert.equal(Number(await page.getAttribute("#snapshot-peak", "data-peak-bytes")), want.devices[0].peak_bytes);
  const said = await page.textContent("#progress-text");
  assert.match(said, /read · a memory snapshot$/, said);
}

export async function snapshotTimelineHoverAndClick({ page, baseUrl, screenshot }) {
  await openSnapshot(page, baseUrl, join(FIXTURES, "training.pickle.gz"));
  const box = await page.$eval("#snapshot-timeline", (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.left, y: r.top, width: r.width, height: r.height };
  });
  // Near the bottom of the middle column there is always a band (the parameters live throughout).
  const x = box.x + box.width / 2;
  const y = box.y + box.height - 3;
  await page.mouse.move(x, y);
  await page.waitForSelector("#snapshot-tooltip:not([hidden])", { timeout: 10000 });
  const tip = await page.textContent("#snapshot-tooltip");
  assert.match(tip, /after entry [\d,]+, .* live/);
  await page.mouse.click(x, y);
  await page.waitForFunction(() => document.getElementById("snapshot-allocation").textContent.length > 0, null, { timeout: 10000 });
  const hit = await page.evaluate(async ([x, y]) => window.sightline.snapshot.chart.hitAt({ clientX: x, clientY: y }), [x, y]);
  assert.ok(hit && hit.allocation, "a band under the point");
  assert.equal(Number(await page.getAttribute("#snapshot-allocation", "data-size-bytes")), hit.allocation.size_bytes);
  const frames = await page.$$eval("#snapshot-allocation .snapshot-frames li", (lis) => lis.map((li) => li.textContent));
  assert.deepEqual(frames, hit.allocation.frames);
  // Zoomed into a tenth around the middle: a narrower window, laid out again.
  const before = Number(await page.getAttribute("#snapshot-timeline", "data-end")) - Number(await page.getAttribute("#snapshot-timeline", "data-start"));
  for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -250);
  await page.evaluate(() => window.sightline.snapshot.chart.idle());
  const after = Number(await page.getAttribute("#snapshot-timeline", "data-end")) - Number(await page.getAttribute("#snapshot-timeline", "data-start"));
  assert.ok(after < before / 4, `zoomed in: ${before} -> ${after}`);
  await screenshot("snapshot-timeline");
}

export async function snapshotDiffEqualsTheCli({ page, baseUrl }) {
  const [a, b] = [join(FIXTURES, "training.pickle.gz"), join(FIXTURES, "every_key.pickle")];
  const want = cli(a, b);
  await openSnapshot(page, baseUrl, a);
  await page.setInputFiles("#snapshot-compare-input", b);
  await page.waitForFunction(() => ["ready", "error"].includes(document.getElementById("snapshot-diff").dataset.state), null, { timeout: 60000 });
  assert.equal(await page.getAttribute("#snapshot-diff", "data-state"), "ready", await page.textContent("#snapshot-diff-headline"));
  const head = await page.$eval("#snapshot-diff-headline", (p) => ({ ...p.dataset }));
  assert.deepEqual(head, { deltaReservedBytes: String(want.delta_reserved_bytes), deltaAllocatedBytes: String(want.delta_allocated_bytes) });
  for (const [i, g] of GROUPINGS.entries()) {
    await page.click(`#snapshot-diff-tabs button:nth-child(${i + 1})`);
    for (const d of want.devices) {
      const rows = await rowsOf(page, `#snapshot-diff-tables table[data-device="${d.device}"]`);
      assert.deepEqual(rows, d.at_peak[g].map((r) => [r.key, r.base_bytes, r.new_bytes, r.delta_bytes]), `${g} device ${d.device}`);
    }
  }
}

export async function snapshotAndTraceAreEachToldWhatTheyAre({ page, baseUrl, samplesDir }) {
  const trace = join(samplesDir, "tracelens_h100_bert_small_stack_mem.json.gz");
  const snap = join(FIXTURES, "training.pickle.gz");
  // A snapshot given to the trace comparison.
  await page.goto(baseUrl);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
  await page.setInputFiles("#file-input", trace);
  await page.waitForFunction(() => document.body.dataset.state === "ready", null, { timeout: 60000 });
  await page.setInputFiles("#compare-input", snap);
  await page.waitForFunction(() => document.getElementById("compare").dataset.state === "error", null, { timeout: 60000 });
  assert.match(await page.textContent("#compare-headline"), /training\.pickle\.gz is a memory snapshot, not a profiler trace/);
  // A trace given to the snapshot comparison.
  await openSnapshot(page, baseUrl, snap);
  await page.setInputFiles("#snapshot-compare-input", trace);
  await page.waitForFunction(() => document.getElementById("snapshot-diff").dataset.state === "error", null, { timeout: 60000 });
  assert.match(await page.textContent("#snapshot-diff-headline"), /\.json\.gz is not a memory snapshot: a profiler trace/);
  // The snapshot shown stays.
  assert.equal(await page.evaluate(() => document.body.dataset.state), "snapshot");
}
