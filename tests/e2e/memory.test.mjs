// End-to-end tests of memory on the page: the chart under the timeline shows each device's peak as
// `sightline memory --json` computes it (tests/e2e/expected/memory.json, kept equal to the CLI's
// output by tests/memory.rs), follows the timeline's window, and a click on it lists what was live
// then, adding up to the allocated bytes there; the "Memory" tab lists every allocation, with a
// CSV of the same rows; a trace without memory events shows no chart.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ENCODER = "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz";
const NO_MEMORY = "real/param_dlrm_v100_rank0of8.pt.trace.json.gz";
const expected = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "expected", "memory.json"), "utf8"));

/** Opens a fixture and waits for its timeline, its analyses and the memory chart's devices. */
async function openFixture(page, baseUrl, path) {
  if (!page.url().startsWith(baseUrl)) await page.goto(baseUrl);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
  await page.setInputFiles("#file-input", path);
  await page.waitForFunction(
    (name) => (document.body.dataset.state === "ready" && document.getElementById("file-name").textContent === name && document.body.dataset.analyses === "ready") || document.body.dataset.state === "error",
    basename(path),
    { timeout: 60000 },
  );
  assert.equal(await page.evaluate(() => document.body.dataset.state), "ready");
  await page.evaluate(() => window.sightline.memory.state.ready);
  await painted(page);
}

/** Waits until the frames asked for so far (the timeline's and the chart's) are drawn. */
function painted(page) {
  return page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await window.sightline.view.idle();
  });
}

/** The panel's last live set once it is in for a time other than `previous`. */
async function liveAfter(page, previous) {
  await page.waitForFunction((p) => {
    const live = window.sightline.memory.state.live;
    return live && JSON.stringify(live) !== p && document.querySelector("#memory-holders");
  }, previous, { timeout: 30000 });
  return page.evaluate(() => window.sightline.memory.state.live);
}

export async function memoryChartShowsThePeakAndWhatHeldIt({ page, baseUrl, fixturesDir, screenshot }) {
  await openFixture(page, baseUrl, join(fixturesDir, ENCODER));
  const want = expected[ENCODER].devices;
  assert.equal(await page.isVisible("#memory-chart"), true);
  // The legend: one entry per device with the CLI's peak, in bytes and in time.
  const legend = await page.$$eval("#memory-legend .memory-peak", (bs) => bs.map((b) => ({ device: b.dataset.device, bytes: Number(b.dataset.peakBytes), at_ns: Number(b.dataset.peakAtNs), text: b.textContent })));
  assert.deepEqual(legend.map((l) => l.device), want.map((d) => d.device));
  for (const [l, d] of legend.map((l, i) => [l, want[i]])) {
    assert.equal(l.bytes, d.peak_allocated_bytes, l.text);
    assert.ok(Math.abs(l.at_ns / 1e3 - d.peak_at_us) < 0.001, `${l.at_ns} ns vs ${d.peak_at_us} µs`);
    assert.match(l.text, /peak \d/);
  }
  // After the analyses, the panel lists what was live at the peak: the CLI's holders, exactly.
  const atPeak = await liveAfter(page, "");
  assert.equal(atPeak.at_peak, true);
  assert.equal(atPeak.allocated_bytes, want[0].peak_allocated_bytes);
  assert.deepEqual(atPeak.holders.map((h) => ({ op: h.op, bytes: h.bytes })), want[0].holders);
  const rows = await page.$$eval("#memory-holders tbody tr", (trs) => trs.length);
  assert.equal(rows, want[0].holders.length);

  // The chart follows the timeline: its columns are the timeline's window, at the peak's column
  // the largest allocated value is the peak.
  const columnsAtPeak = async () =>
    page.evaluate(() => {
      const { chart, state } = window.sightline.memory;
      const m = window.sightline.view.meta;
      const d = state.devices[0];
      const x = Math.floor((d.peak_at_ns - m.start_ns) / m.ns_per_px);
      const n = chart.columns.length / state.devices.length / 3;
      return { n, x, max: chart.columns[x * 3 + 1], npp: m.ns_per_px };
    });
  const whole = await columnsAtPeak();
  assert.equal(whole.max, want[0].peak_allocated_bytes);
  await page.evaluate(async () => {
    const { view, memory } = window.sightline;
    const d = memory.state.devices[0];
    await view.session.set_window(d.peak_at_ns - 2e6, d.peak_at_ns + 2e6);
    view.request();
  });
  await painted(page);
  const zoomed = await columnsAtPeak();
  assert.ok(zoomed.npp < whole.npp / 10, `zoomed in: ${zoomed.npp} vs ${whole.npp} ns per px`);
  assert.equal(zoomed.n, whole.n);
  assert.equal(zoomed.max, want[0].peak_allocated_bytes, "the peak's column after zooming");

  // A click on the chart, left of the peak: the holders add up to the allocated bytes then, which
  // lie within what the chart drew for that pixel column.
  const box = await page.$eval("#memory-chart", (c) => {
    const r = c.getBoundingClientRect();
    return { left: r.left, top: r.top };
  });
  const clickX = zoomed.x - 200;
  const previous = JSON.stringify(atPeak);
  await page.mouse.click(box.left + 190 + clickX + 0.5, box.top + 40);
  const clicked = await liveAfter(page, previous);
  assert.equal(clicked.at_peak, false);
  const column = await page.evaluate((x) => Array.from(window.sightline.memory.chart.columns.slice(x * 3, x * 3 + 3)), clickX);
  assert.ok(clicked.allocated_bytes >= column[0] && clicked.allocated_bytes <= column[1], `${clicked.allocated_bytes} in ${column}`);
  const sum = clicked.holders.reduce((a, h) => a + h.bytes, 0);
  assert.equal(sum, clicked.allocated_bytes);
  assert.ok(clicked.holders.length > 0);
  const shown = await page.$eval("#memory-live .memory-at", (p) => Number(p.dataset.allocatedBytes));
  assert.equal(shown, clicked.allocated_bytes);
  await screenshot("memory-chart");

  // A holder with an allocating operator selects that operator's slice on the timeline.
  const row = await page.$$eval("#memory-holders tbody tr", (trs) => trs.findIndex((tr) => /^aten::/.test(tr.cells[0].textContent)));
  assert.ok(row >= 0);
  const op = await page.$eval(`#memory-holders tbody tr:nth-child(${row + 1}) td`, (td) => td.textContent);
  await page.click(`#memory-holders tbody tr:nth-child(${row + 1})`);
  await page.waitForFunction((name) => document.querySelector("#details .slice-name")?.textContent === name, op, { timeout: 10000 });
}

export async function memoryTabListsEveryAllocationWithItsCsv({ page, baseUrl, fixturesDir }) {
  await openFixture(page, baseUrl, join(fixturesDir, ENCODER));
  const want = expected[ENCODER].devices[0];
  await page.click("#tabs button:has-text('Memory')");
  await page.waitForSelector("#memory-allocations");
  const counted = await page.$eval("#tab-body .table-tools", (t) => t.textContent);
  assert.match(counted, new RegExp(`${want.allocation_rows.toLocaleString("en-US")} rows`));
  assert.match(counted, new RegExp(`${want.never_freed} never freed`));
  const flagged = await page.$$eval("#memory-allocations tbody tr", (trs) => trs.filter((tr) => tr.textContent.includes("never freed")).length);
  assert.ok(flagged > 0 && flagged <= want.never_freed);
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#tab-body .table-tools button:has-text('CSV')")]);
  const csv = readFileSync(await download.path(), "utf8").trimEnd().split("\r\n");
  assert.equal(csv[0], "addr,bytes,allocated_at_us,allocated_by,frame,freed_at_us,freed_by,lifetime_us,never_freed");
  assert.equal(csv.length - 1, want.allocation_rows);
  assert.equal(csv.filter((l) => l.endsWith(",never freed")).length, want.never_freed);
  // Sorting by size puts the largest allocation first.
  await page.click("#memory-allocations th:has-text('Bytes')");
  const first = await page.$eval("#memory-allocations tbody tr td:nth-child(2)", (td) => td.textContent);
  assert.match(first, /MB|kB|B/);
}

export async function traceWithoutMemoryEventsShowsNoChart({ page, baseUrl, fixturesDir }) {
  await openFixture(page, baseUrl, join(fixturesDir, ENCODER));
  assert.equal(await page.isVisible("#memory"), true);
  await openFixture(page, baseUrl, join(fixturesDir, NO_MEMORY));
  assert.equal(await page.isVisible("#memory"), false);
  assert.equal(await page.isVisible("#memory-panel"), false);
  assert.deepEqual(await page.evaluate(() => window.sightline.memory.state.devices), []);
  await page.click("#tabs button:has-text('Memory')");
  await page.waitForFunction(() => /without profile_memory/.test(document.getElementById("tab-body").textContent), null, { timeout: 10000 });
}

/** The MI300 training trace recorded `profile_memory` and holds 210 memory events, all on the CPU
 * and at most 8 B: no flat strip, but words saying what was recorded and what to record. */
export async function memoryWithoutDeviceMemorySaysSoInWords({ page, baseUrl, fixturesDir, screenshot }) {
  await openFixture(page, baseUrl, join(fixturesDir, "gpu-training/tracelens_mi300_ddp_resnet18_train_stack_mem.json.gz"));
  assert.equal(await page.isVisible("#memory"), true);
  assert.equal(await page.isVisible("#memory-chart"), false);
  assert.equal(await page.$$eval("#memory-legend .memory-peak", (bs) => bs.length), 0);
  const note = await page.textContent("#memory-note");
  assert.match(note, /^This trace recorded no device memory: cpu has 210 memory events, at most 8 B allocated\./);
  assert.match(note, /profile_memory=True/);
  await screenshot("memory-no-device-memory");
}
