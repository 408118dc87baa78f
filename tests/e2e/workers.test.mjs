// End-to-end tests of the page off its main thread: the Session lives in a Web Worker and answers
// only the calls worker/protocol.js declares, Cancel during the model build returns to the trace
// shown before, and a worker that dies is shown as an error that leaves the page usable; a file
// read by several workers gives what one worker gives; frames asked for while the background
// analyses run are drawn between their slices.
// Nothing here is timed.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";

const SAMPLE = "real/tracelens_h100_bert_small_stack_mem.json.gz";
const OTHER = "real/hta_a100_alexnet_cuda_sync.json.gz";
// Big enough for the analyses to take many slices (`SLICE_UNITS` in src/web/tables.rs).
const BIG = "real/tracelens_h100_owlv2_stack_mem.json.gz";

async function ready(page, timeout = 60000) {
  await page.waitForFunction(
    () => {
      const b = document.body.dataset;
      return b.state === "error" || (b.state === "ready" && b.analyses === "ready");
    },
    null,
    { timeout },
  );
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state !== "ready") throw new Error(`state ${state}: ${await page.textContent("#error")}`);
}

async function open(page, baseUrl) {
  // Counts wasm instances made on the page's own thread (workers do not run this script).
  await page.addInitScript(() => {
    window.pageInstances = 0;
    const instantiate = WebAssembly.instantiate;
    WebAssembly.instantiate = function (...args) {
      window.pageInstances++;
      return instantiate.apply(this, args);
    };
    const streaming = WebAssembly.instantiateStreaming;
    WebAssembly.instantiateStreaming = function (...args) {
      window.pageInstances++;
      return streaming.apply(this, args);
    };
    const Instance = WebAssembly.Instance;
    WebAssembly.Instance = function (...args) {
      window.pageInstances++;
      return new Instance(...args);
    };
  });
  await page.goto(baseUrl);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
}

export async function theLoadRunsInAWorker({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, SAMPLE));
  await ready(page);
  const info = await page.evaluate(async () => {
    const s = window.sightline.app.active.session;
    const call = s.window_ns();
    return {
      pageInstances: window.pageInstances,
      // A Session method answers later, from the worker: a promise, not a value.
      async: call instanceof Promise,
      window: Array.from(await call),
      worker: window.sightline.app.active.worker.worker instanceof Worker,
      bindings: "wasmBindings" in window,
    };
  });
  assert.equal(info.pageInstances, 0, "no wasm module instantiated on the page's thread");
  assert.equal(info.bindings, false);
  assert.ok(info.async, "Session calls are asynchronous");
  assert.ok(info.worker, "the shown trace's Session is in a Worker");
  assert.ok(info.window[1] > info.window[0], `a window: ${info.window}`);
  assert.ok(page.workers().length >= 1, "the page runs a worker");
  // The trace is drawn and the tables came from the worker.
  assert.ok((await page.$$("#ops-table tbody tr")).length > 0, "operator rows");
}

export async function theWorkerAnswersOnlyTheDeclaredCalls({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, SAMPLE));
  await ready(page);
  const answers = await page.evaluate(async () => {
    const w = window.sightline.app.active.worker;
    const ask = (target, method) => w.call(target, method).then(() => "answered", (e) => e.message);
    return {
      // A wasm-bindgen method the page never calls (it would end the Session), a method of a
      // SnapshotSession asked of a trace's, an export the protocol leaves out, then a declared call.
      free: await ask("session", "free"),
      snapshotOnly: await ask("session", "positions"),
      module: await ask("module", "last_panic"),
      declared: await ask("session", "heap_bytes"),
    };
  });
  assert.match(answers.free, /a Session has no call 'free'/);
  assert.match(answers.snapshotOnly, /a Session has no call 'positions'/);
  assert.match(answers.module, /the module has no call 'last_panic'/);
  assert.equal(answers.declared, "answered", "the Session still answers");
}

export async function cancelDuringTheModelBuildKeepsThePreviousTrace({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, SAMPLE));
  await ready(page);
  const before = await page.evaluate(() => {
    window.shownBefore = window.sightline.app.active;
    return { name: document.getElementById("file-name").textContent };
  });
  // Cancel the moment the page has asked the worker to build the model: the mutation observer
  // runs before the page can take the worker's answer, so the build is still under way.
  await page.evaluate(() => {
    window.cancelledAt = null;
    new MutationObserver((_, obs) => {
      if (document.body.dataset.stage === "building") {
        window.cancelledAt = { stage: document.body.dataset.stage, loading: !!window.sightline.app.loading };
        document.getElementById("cancel").click();
        obs.disconnect();
      }
    }).observe(document.body, { attributes: true, attributeFilter: ["data-stage"] });
  });
  await page.setInputFiles("#file-input", join(fixturesDir, OTHER));
  await page.waitForFunction(() => window.cancelledAt !== null && document.body.dataset.state === "ready");
  const after = await page.evaluate(async () => {
    const { app, view } = window.sightline;
    return {
      cancelledAt: window.cancelledAt,
      loading: app.loading,
      name: document.getElementById("file-name").textContent,
      active: app.active.name,
      same: app.active === window.shownBefore,
      window: Array.from(await app.active.session.window_ns()),
      drawn: (await view.draw()) > 0,
    };
  });
  assert.deepEqual(after.cancelledAt, { stage: "building", loading: true });
  assert.equal(after.loading, null, "no load in progress");
  assert.equal(after.name, before.name);
  assert.equal(after.active, before.name, "the previous trace is shown");
  assert.ok(after.same, "the same loaded trace, in the same worker");
  assert.ok(after.window[1] > after.window[0], `its worker answers: ${after.window}`);
  assert.ok(after.drawn, "and draws");
  // The page stays usable: the same file opens when asked again.
  await page.setInputFiles("#file-input", join(fixturesDir, OTHER));
  await ready(page);
  assert.equal(await page.textContent("#file-name"), OTHER.split("/").pop());
}

export async function aWorkerThatDiesIsShown({ page, baseUrl, fixturesDir, ignore }) {
  // The failure provoked below is reported by the browser as an uncaught error in the worker.
  ignore("console", /worker died in a test/);
  ignore("pageerror", /worker died in a test/);
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, SAMPLE));
  await ready(page);
  // Every worker of the page throws an uncaught error, as a crashed one would.
  for (const w of page.workers()) {
    await w.evaluate(() => {
      setTimeout(() => {
        throw new Error("worker died in a test");
      });
    });
  }
  await page.waitForFunction(() => document.body.dataset.state === "error");
  assert.match(await page.textContent("#error"), /the worker stopped: .*worker died in a test/);
  // The page is usable: the next trace opens in a new worker.
  await page.setInputFiles("#file-input", join(fixturesDir, OTHER));
  await ready(page);
  assert.ok(await page.isHidden("#error-box"));
}

export async function aSpareWorkerStartsOnlyWhenAnotherTraceIsBeingOpened({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, SAMPLE));
  await ready(page);
  // Nothing is started after the load: leaving the page now aborts no fetch of a worker script.
  await page.waitForTimeout(300);
  assert.ok(await page.evaluate(() => window.sightline.workers.spare === null), "no spare after the load");
  assert.equal(page.workers().length, 1, "only the shown trace's worker");
  // Pressing Open… starts the spare (the file dialog hides its start), and the next load takes it.
  await page.dispatchEvent('label[for="file-input"]', "pointerdown");
  await page.waitForFunction(() => window.sightline.workers.spare !== null);
  await page.evaluate(async () => {
    window.spareWorker = await window.sightline.workers.spare;
  });
  await page.setInputFiles("#file-input", join(fixturesDir, OTHER));
  await ready(page);
  assert.ok(await page.evaluate(() => window.sightline.app.active.worker === window.spareWorker), "the load took the spare");
}

/** Sets how many workers parse a file (worker/parallel.js `settings`), for any file size. */
async function parseWorkers(page, n) {
  await page.evaluate(async (n) => {
    const m = await import(new URL("js/worker/parallel.js", document.baseURI).href);
    m.settings.minBytes = 0;
    m.settings.workers = n;
  }, n);
}

/** Opens `path` and waits for its trace (not the one shown before) with its analyses. */
async function openAndWait(page, path) {
  await page.evaluate(() => {
    window.shownBefore = window.sightline.app.active;
  });
  await page.setInputFiles("#file-input", path);
  await page.waitForFunction(() => {
    const { app } = window.sightline;
    const b = document.body.dataset;
    return b.state === "error" || (app.active !== window.shownBefore && b.state === "ready" && b.analyses === "ready");
  });
  assert.equal(await page.evaluate(() => document.body.dataset.state), "ready", await page.textContent("#error"));
  return page.evaluate(async () => {
    const a = window.sightline.app.active;
    const s = a.session;
    const reports = await Promise.all([s.steps(), s.idle(), s.findings()]);
    const tables = await Promise.all([s.ops(false), s.kernels()]);
    return { parts: a.worker.parts, inflater: a.worker.inflater, summary: a.summary, reports, tables };
  });
}

export async function aFileReadBySeveralWorkersGivesWhatOneWorkerGives({ page, baseUrl, fixturesDir }) {
  // A real trace as plain JSON: gzip is never cut.
  const dir = mkdtempSync(join(tmpdir(), "sightline-parts-"));
  const plain = join(dir, "nccl_rank0.json");
  writeFileSync(plain, gunzipSync(readFileSync(join(fixturesDir, "real/hta_a100_nccl_rank0of2.json.gz"))));
  await open(page, baseUrl);
  await parseWorkers(page, 1);
  const one = await openAndWait(page, plain);
  await parseWorkers(page, 3);
  const three = await openAndWait(page, plain);
  assert.equal(one.parts, 0, "read by the loading worker alone");
  assert.equal(three.parts, 3, "read by three workers");
  assert.ok(three.summary.model.slices > 1000, `slices: ${three.summary.model.slices}`);
  assert.deepEqual(three.summary, one.summary);
  assert.deepEqual(three.reports, one.reports);
  assert.deepEqual(three.tables, one.tables);
  // The helpers ended once their parts were joined: the shown trace's worker, the previous
  // one's until it is dropped, and the spare remain.
  for (let i = 0; i < 50 && page.workers().length > 3; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(page.workers().length <= 3, `${page.workers().length} workers`);
  // Cancel ends a load's worker; the parse workers linked to it end with it.
  const ended = await page.evaluate(async () => {
    const w = await window.sightline.workers.take();
    const helpers = [w.spawnLinked(), w.spawnLinked()];
    const answer = helpers[0].module.version();
    w.terminate("cancelled in a test");
    const rejected = await answer.then(
      () => false,
      (e) => e.message,
    );
    return { dead: helpers.map((h) => h.dead), rejected };
  });
  assert.deepEqual(ended, { dead: ["cancelled in a test", "cancelled in a test"], rejected: "cancelled in a test" });
}

export async function gzipInflatedByTheBrowserGivesWhatTheWasmInflaterGives({ page, baseUrl, fixturesDir }) {
  // A healthy .gz is inflated by the browser in a worker of its own while the Session parses;
  // a damaged one (cut short, or in two gzip members, which the browser's inflater refuses) is
  // read again by the Session's own inflater. Either way the page shows what the Session's
  // inflater alone gives (`?inflate=wasm`), diagnostics included.
  const dir = mkdtempSync(join(tmpdir(), "sightline-gz-"));
  const gz = readFileSync(join(fixturesDir, SAMPLE));
  const cut = join(dir, "cut.json.gz");
  writeFileSync(cut, gz.subarray(0, Math.floor(gz.length * 0.6)));
  const json = gunzipSync(gz);
  const members = join(dir, "members.json.gz");
  const half = Math.floor(json.length / 2);
  writeFileSync(members, Buffer.concat([gzipSync(json.subarray(0, half)), gzipSync(json.subarray(half))]));
  const files = [join(fixturesDir, SAMPLE), cut, members];

  await open(page, `${baseUrl}?inflate=wasm`);
  const wasm = [];
  for (const f of files) wasm.push(await openAndWait(page, f));
  await open(page, baseUrl);
  const browser = [];
  for (const f of files) browser.push(await openAndWait(page, f));

  assert.deepEqual(
    wasm.map((r) => r.inflater),
    ["wasm", "wasm", "wasm"],
  );
  assert.deepEqual(
    browser.map((r) => r.inflater),
    ["browser", "wasm", "wasm"],
    "the browser inflates the healthy file; the Session reads the damaged ones again",
  );
  assert.ok(wasm[0].summary.model.slices > 1000, `slices: ${wasm[0].summary.model.slices}`);
  assert.equal(wasm[0].summary.diagnostics.length, 0, "a healthy trace gets no warning");
  assert.ok(wasm[1].summary.diagnostics.length > 0, "the cut file is reported");
  assert.deepEqual(wasm[2].summary.model, wasm[0].summary.model, "two members read as one");
  for (const [i, f] of files.entries()) {
    assert.deepEqual(browser[i].summary, wasm[i].summary, `${f}: summary`);
    assert.deepEqual(browser[i].reports, wasm[i].reports, `${f}: reports`);
    assert.deepEqual(browser[i].tables, wasm[i].tables, `${f}: tables`);
  }
  // Each inflate worker ended with its read: the shown trace's worker, the previous one's until
  // it is dropped, and the spare remain.
  for (let i = 0; i < 50 && page.workers().length > 3; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(page.workers().length <= 3, `${page.workers().length} workers`);
  // Cancel ends a load's worker; the inflate worker linked to it ends with it.
  const before = page.workers().length;
  const ended = await page.evaluate(async (sample) => {
    const w = await window.sightline.workers.take();
    await w.session.new();
    const blob = await (await fetch(sample)).blob();
    const reading = w.readInflated(blob, () => {});
    const linked = w.linked.size;
    w.terminate("cancelled in a test");
    const rejected = await reading.then(
      () => false,
      (e) => e.message,
    );
    return { linked, rejected, left: w.linked.size };
  }, "samples/tracelens_h100_bert_small_stack_mem.json.gz");
  assert.deepEqual(ended, { linked: 1, rejected: "cancelled in a test", left: 0 });
  for (let i = 0; i < 50 && page.workers().length > before; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(page.workers().length <= before, `${page.workers().length} workers, ${before} before`);
}

export async function framesAreDrawnBetweenTheSlicesOfTheAnalyses({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  // From the moment the timeline is shown until the analyses end, one frame after another (as a
  // user panning would ask for them), each noting where the analyses stood when it arrived.
  await page.evaluate(() => {
    window.framesSeen = [];
    new MutationObserver((_, obs) => {
      const b = document.body.dataset;
      if (b.state !== "ready" || b.analyses !== "running") return;
      obs.disconnect();
      const { view, app } = window.sightline;
      const shown = app.active;
      const next = async () => {
        if (app.active !== shown || document.body.dataset.analyses !== "running") return;
        view.call(() => view.session.pan(1, 0));
        await view.draw();
        window.framesSeen.push({ ...shown.analysis });
        next();
      };
      next();
    }).observe(document.body, { attributes: true, attributeFilter: ["data-state", "data-analyses"] });
  });
  await page.setInputFiles("#file-input", join(fixturesDir, BIG));
  await ready(page, 120000);
  const { seen, steps } = await page.evaluate(() => ({ seen: window.framesSeen, steps: window.sightline.app.timings.analyseSteps }));
  // Frames answered after a step that left its phase under way ("" from analyse_step): they were
  // drawn in the middle of the analyses, then in the middle of the forest, not after them.
  const mid = (phase) => seen.filter((f) => f.phase === phase && f.last === "").length;
  assert.ok(steps > 4, `${steps} analyse_step calls`);
  assert.ok(mid("analyses") > 0 && mid("tables") > 0, `frames drawn mid-phase: ${JSON.stringify(seen)}`);
  // The panels and tables arrive as before.
  await page.waitForFunction(() => !document.querySelector("#findings .analysing"));
  await page.waitForSelector("#ops-table tbody tr");
}

/** What the first worker's warm-up read (load.js `warmUp`), once it ran; null when it did not. */
function warmedUp(page, waitMs) {
  return page.evaluate(async (waitMs) => {
    const until = performance.now() + waitMs;
    while (!window.sightline.workers.warmed && performance.now() < until) await new Promise((r) => setTimeout(r, 50));
    return window.sightline.workers.warmed && (await window.sightline.workers.warmed);
  }, waitMs);
}

export async function theFirstWorkerReadsAWarmUpTraceWhileThePageWaitsForAFile({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  // The whole load of a healthy synthetic trace: 150 training steps, their flows, no warning.
  const got = await warmedUp(page, 20000);
  assert.deepEqual({ events: got.events, slices: got.slices, flows: got.flows, diagnostics: got.diagnostics }, { events: 4805, slices: 3000, flows: 600, diagnostics: 0 });
  assert.ok(got.findings >= 1 && got.ops >= 6, JSON.stringify(got));
  // The worker that read it reads the first trace, and nothing of the warm-up shows.
  const warmWorker = await page.evaluate(async () => {
    window.warmWorker = await window.sightline.workers.spare;
    return true;
  });
  assert.ok(warmWorker);
  await page.setInputFiles("#file-input", join(fixturesDir, SAMPLE));
  await ready(page);
  assert.ok(await page.evaluate(() => window.sightline.app.active.worker === window.warmWorker));
  assert.equal(await page.textContent("#file-name"), "tracelens_h100_bert_small_stack_mem.json.gz");
  assert.equal(page.workers().length, 1);
}

export async function aWarmUpStoppedByACancelSaysNothingAndOneThatFailsIsSaid({ page, baseUrl, ignore }) {
  ignore("console", /the warm-up read failed: crashed in a test/);
  const said = [];
  page.on("console", (m) => m.type() === "error" && said.push(m.text()));
  await open(page, baseUrl);
  await warmedUp(page, 20000);
  // A file chosen takes the spare while it warms up (load.js `take`); another choice then cancels
  // that load, which terminates its worker (app.js `stopLoading`): the warm-up ends with it.
  const stopped = await page.evaluate(async () => {
    const workers = window.sightline.workers;
    workers.warmed = null;
    workers.warmUp();
    const w = await workers.take();
    w.terminate();
    return workers.warmed.then(() => "read", (e) => e.message);
  });
  assert.equal(stopped, "the worker was stopped");
  assert.deepEqual(said, []);
  // A worker that fails mid-warm-up is still said.
  const failed = await page.evaluate(async () => {
    const workers = window.sightline.workers;
    workers.refill();
    workers.warmed = null;
    workers.warmUp();
    const w = await workers.take();
    w.die("crashed in a test");
    return workers.warmed.then(() => "read", (e) => e.message);
  });
  assert.equal(failed, "crashed in a test");
  await page.waitForTimeout(50);
  assert.deepEqual(said, ["the warm-up read failed: crashed in a test"]);
}

export async function aPageThatOpensATraceFromItsAddressDoesNotWarmUp({ page, baseUrl, ignore }) {
  // The page streams same-site URLs; see viewer.test.mjs on the report this gives under interception.
  ignore("http", /\/samples\/[^ ]+: net::ERR_ABORTED$/);
  await page.goto(`${baseUrl}?url=samples/tracelens_h100_bert_small_stack_mem.json.gz`);
  await ready(page);
  assert.equal(await warmedUp(page, 1000), null);
}
