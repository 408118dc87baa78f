// The Overview panel (www/js/overview.js): the first panel of a trace, with the TensorBoard
// plugin's GPU figures per device, the step time breakdown and the top findings. Figures are
// checked against `sightline steps --json` of the same traces (the numbers the page is given).

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openTrace } from "./lib.mjs";

const SAMPLE = "tracelens_h100_bert_small_stack_mem.json.gz";

/** The overview's figures by device: { "GPU 0": { utilization: "6.94 %", ... } }. */
function figures(page) {
  return page.$$eval("#overview-summary .ov-device", (rows) =>
    Object.fromEntries(
      rows.map((r) => [
        r.querySelector(".ov-device-name").textContent,
        Object.fromEntries([...r.querySelectorAll(".ov-figure")].map((f) => [f.dataset.figure, f.querySelector(".ov-value").textContent])),
      ]),
    ),
  );
}

export async function overviewShowsGpuFiguresBreakdownAndTopFindings({ page, baseUrl, samplesDir, screenshot }) {
  await openTrace(page, baseUrl, join(samplesDir, SAMPLE), { analyses: true });
  await page.waitForSelector("#overview-summary .ov-figure");
  // The first panel under the timeline, shown without a click.
  assert.equal(await page.$eval(".panels > .panel", (p) => p.id), "overview-panel");
  assert.ok(await page.isVisible("#overview-panel"));
  // sightline steps --json: utilization 0.06940, est. SM efficiency 4.469 %, est. achieved
  // occupancy 4.081 %, Tensor Cores 76.50 % of kernel time (32.2 % before the wmma and flash
  // attention kernels were recognised).
  assert.deepEqual(await figures(page), {
    "GPU 0": { utilization: "6.94 %", est_sm_efficiency_pct: "4.47 %", est_achieved_occupancy_pct: "4.08 %", tensor_core_pct: "76.5 %" },
  });
  // The window of each figure family is said: the Overview's over the steps, the idle panel's
  // from the device's first op to its last (HTA's): 6.9 % and 7.9 % of one GPU, both labelled.
  assert.equal(await page.textContent('#overview-summary .ov-figure[data-figure="utilization"] .ov-label'), "GPU utilization over the steps");
  // The breakdown: one stacked bar of the total, its legend, one row per step and the total.
  const legend = await page.$$eval("#overview-summary .ov-legend span", (s) => s.map((x) => x.textContent));
  assert.deepEqual(legend.map((t) => t.replace(/ [\d.]+ %$/, "")), ["Kernel", "Memcpy", "Runtime", "CPU Exec"]);
  assert.equal((await page.$$("#overview-summary .ov-total > span")).length, 4);
  const heads = await page.$$eval("#overview-summary .ov-step-table th", (t) => t.map((x) => x.textContent));
  // The step's length (its ProfilerStep span) beside the plugin's span with the device work.
  assert.deepEqual(heads, ["Step", "Length", "Kernel", "Memcpy", "Runtime", "CPU Exec", "With device work", "GPU util."]);
  // Headed as the core declares the steps' columns (sent beside them): each says what it holds.
  const about = await page.$$eval("#overview-summary .ov-step-table th", (t) => t.map((x) => x.title));
  assert.equal(about[1], "The step's length: its `ProfilerStep#N` span as PyTorch records it");
  assert.equal(about[2], "Kernels, communication ones aside");
  const rows = await page.$$eval("#overview-summary .ov-step-table tbody tr", (t) => t.map((r) => [...r.cells].map((c) => c.textContent)));
  // ProfilerStep#6: kernel 307,197 ns, memcpy 2,240, runtime 380,575, CPU exec 3,736,102.
  assert.deepEqual(rows, [["ProfilerStep#6", "4.43 ms", "307 µs", "2.24 µs", "381 µs", "3.74 ms", "4.43 ms", "6.94 %"]]);
  // A step row shows the step on the timeline: its ProfilerStep span, as the ruler draws it.
  await page.click("#overview-summary .ov-step-table tbody tr");
  await page.waitForFunction(() => window.sightline.view.meta && window.sightline.view.meta.range !== null);
  // The top findings, most costly first, at most five; a click shows the evidence.
  const ids = await page.$$eval("#overview-summary .ov-finding-list li", (l) => l.map((li) => li.dataset.id));
  const all = await page.$$eval("#findings li", (l) => l.map((li) => li.dataset.id));
  assert.ok(ids.length >= 2 && ids.length <= 5, ids.join(", "));
  assert.deepEqual(ids, all.slice(0, ids.length));
  // The operator that holds the most of the path, priced as a bound; the device waiting for the
  // host is told under it, not ranked beside it.
  assert.equal(ids[0], "hot_operator");
  assert.ok(!all.includes("gpu_starved_by_cpu") && !all.includes("low_gpu_utilization"), all.join(", "));
  await screenshot("overview-h100");
  // The link to every finding brings the Findings panel into view.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.click("#overview-summary .ov-all-findings");
  await page.waitForFunction(() => {
    const r = document.getElementById("findings-panel").getBoundingClientRect();
    return r.top >= -1 && r.top < window.innerHeight / 2;
  });
}

export async function overviewLeavesOutFiguresAFamilyCannotEstimate({ page, baseUrl, fixturesDir }) {
  // On ROCm the trace records no blocks per SM or occupancy: utilization, and the share of kernel
  // time on the Matrix Cores (Tensile's MFMA GEMMs), under AMD's name.
  await openTrace(page, baseUrl, join(fixturesDir, "real/tracelens_mi300_bert_small.json.gz"), { analyses: true });
  await page.waitForSelector("#overview-summary .ov-figure");
  const f = await figures(page);
  assert.deepEqual(Object.keys(f), ["GPU 2"]);
  assert.deepEqual(Object.keys(f["GPU 2"]), ["utilization", "tensor_core_pct"]);
  assert.equal(await page.textContent('#overview-summary .ov-figure[data-figure="tensor_core_pct"] .ov-label'), "Matrix Cores");
}

export async function overviewOfACpuOnlyTraceSaysThereIsNoDevice({ page, baseUrl, fixturesDir }) {
  await openTrace(page, baseUrl, join(fixturesDir, "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz"), { analyses: true });
  await page.waitForSelector("#overview-summary .ov-steps");
  assert.equal((await page.$$("#overview-summary .ov-figure")).length, 0);
  assert.match(await page.textContent("#overview-summary .ov-devices"), /^No device/);
  // One step spans the trace: all CPU Exec.
  const heads = await page.$$eval("#overview-summary .ov-step-table th", (t) => t.map((x) => x.textContent));
  assert.deepEqual(heads, ["Step", "Length", "CPU Exec", "With device work"]);
}

export async function overviewOfACutGpuTraceSaysItsGpuLostItsEvents({ page, baseUrl }) {
  // A CUDA trace cut half way keeps its deviceProperties and loses its kernels (written last).
  // Before, the Overview said "No device: this trace holds CPU work only" and the notice said
  // only that the file ends early.
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  await openTrace(page, baseUrl, join(root, "tests/fixtures/devices/h100_cut_in_half.json.gz"), { analyses: true });
  await page.waitForSelector("#overview-summary .ov-steps");
  const text = await page.textContent("#overview-summary .ov-devices");
  assert.match(text, /^The trace is cut short: its 1 listed device \(GPU 0\) has no events left/);
  assert.doesNotMatch(text, /CPU work only/);
  assert.match(await page.textContent("#notice-text"), /^The file is truncated: it ends after 0\.4 MB of JSON, 911 events, /);
  const ids = await page.$$eval("#findings li", (l) => l.map((li) => li.dataset.id));
  assert.equal(ids[0], "device_events_lost");
  assert.ok(!ids.includes("cpu_copy_overhead"), ids.join(", "));
}

export async function analysesThatWouldNotFitInMemoryLeaveTheTimelineAndSayWhy({ page, baseUrl, samplesDir }) {
  // A 5 GB trace opened and was drawn, then its analyses ran the module out of memory (a trap
  // the worker does not survive) and the page showed only "could not be opened: unreachable".
  // Here the sample stands for it, with the memory the page may use lowered under what it holds.
  await page.goto(baseUrl);
  await page.waitForFunction(() => window.sightlineReady === true);
  await page.evaluate(async () => {
    const m = await import(new URL("js/analyses.js", document.baseURI).href);
    m.settings.memoryLimit = 1;
  });
  await page.setInputFiles("#file-input", join(samplesDir, SAMPLE));
  await page.waitForFunction(() => document.body.dataset.state === "error" || document.body.dataset.analyses === "too-large", null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), "ready");
  for (const id of ["overview-summary", "findings", "steps-chart", "idle-chart"]) {
    assert.match(await page.textContent(`#${id}`), /^Not analysed: this page's memory is \d+\.\d GiB with the timeline, and the analyses would need about \d+\.\d GiB more, past the 0\.0 GiB a browser gives it\. The timeline and the details work; `sightline report FILE` runs the analyses natively\.$/, id);
  }
  // A table that reads the analyses says the same; one that does not is shown; the timeline stays.
  await page.click('#tabs button:text-is("Kernels")');
  await page.waitForSelector("#tab-body .not-analysed", { timeout: 10000 });
  assert.match(await page.textContent("#tab-body"), /^Not analysed: /);
  await page.click('#tabs button:text-is("All slices by name")');
  await page.waitForSelector("#names-table", { timeout: 10000 });
  assert.ok(await page.isVisible("#viewer"));
  assert.equal(await page.isVisible("#error-box"), false);
}
