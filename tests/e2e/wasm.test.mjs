// End-to-end tests of the page's two wasm modules (www/js/wasm-choice.js): Chromium has wasm SIMD,
// so the page runs the simd128 build (sightline_bg.wasm) unless the address says `?wasm=plain`;
// on the plain build (sightline_plain_bg.wasm) a real trace comes up with the same timeline,
// reports and tables, in the session worker and in the parse workers alike, and
// <sightline-trace> follows the same choice. Nothing here is timed.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";

const SAMPLE = "real/tracelens_h100_bert_small_stack_mem.json.gz";
// Read as plain JSON in three parse workers (gzip is never cut).
const SPLIT = "real/hta_a100_nccl_rank0of2.json.gz";

/**
 * Opens the page at `url` and records, from its start, the .wasm files it compiles and what each
 * worker's module says of itself (`simd128()`), the parse workers' included.
 */
async function open(page, url) {
  await page.addInitScript(() => {
    // Added again by each open() of the same page: the first one to run wraps the functions.
    if (window.compiledWasm) return;
    window.compiledWasm = [];
    for (const name of ["compileStreaming", "compile"]) {
      const real = WebAssembly[name];
      WebAssembly[name] = async function (source, ...rest) {
        const s = await source;
        window.compiledWasm.push(s instanceof Response ? s.url.split("/").pop() : "bytes");
        return real.call(this, s, ...rest);
      };
    }
  });
  await page.goto(url);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 30000 });
  await page.evaluate(async () => {
    const { SessionWorker } = await import(new URL("js/worker/client.js", document.baseURI).href);
    window.workerSimd = [];
    const spawnLinked = SessionWorker.prototype.spawnLinked;
    SessionWorker.prototype.spawnLinked = function () {
      const helper = spawnLinked.call(this);
      window.workerSimd.push(helper.module.simd128());
      return helper;
    };
  });
}

/** What the page's workers said of their module: the shown trace's, then each parse worker's. */
function workerSimd(page) {
  return page.evaluate(async () => [await window.sightline.app.active.worker.module.simd128(), ...(await Promise.all(window.workerSimd))]);
}

/** Opens `path` with `workers` parse workers and returns what the page shows of it. */
async function figures(page, path, workers = 1) {
  await page.evaluate(async (n) => {
    const m = await import(new URL("js/worker/parallel.js", document.baseURI).href);
    m.settings.minBytes = 0;
    m.settings.workers = n;
    window.shownBefore = window.sightline.app.active;
  }, workers);
  await page.setInputFiles("#file-input", path);
  await page.waitForFunction(
    () => {
      const b = document.body.dataset;
      const settled = b.state === "ready" && b.analyses === "ready" && !document.querySelector(".analysing");
      return b.state === "error" || (window.sightline.app.active !== window.shownBefore && settled);
    },
    null,
    { timeout: 60000 },
  );
  assert.equal(await page.evaluate(() => document.body.dataset.state), "ready", await page.textContent("#error"));
  await page.waitForSelector("#ops-table tbody tr");
  return page.evaluate(async () => {
    const { app, view } = window.sightline;
    const a = app.active;
    const s = a.session;
    const frame = await s.frame();
    const reports = await Promise.all([s.steps(), s.idle(), s.findings()]);
    const tables = await Promise.all([s.ops(false), s.kernels()]);
    const text = (sel) => document.querySelector(sel)?.textContent ?? null;
    return {
      parts: a.worker.parts,
      summary: a.summary,
      frame: { rects: Array.from(frame.rects), meta: frame.meta },
      drawnRects: view.meta ? frame.rects.length / view.k.rect_stride : 0,
      reports,
      tables,
      page: {
        findings: [...document.querySelectorAll("#findings li")].map((li) => li.dataset.id),
        steps: text("#steps-chart"),
        idle: text("#idle-chart"),
        ops: text("#ops-table tbody"),
      },
    };
  });
}

export async function chromiumRunsTheSimdModuleByDefault({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  const chosen = await page.evaluate(async () => {
    const m = await import(new URL("js/wasm-choice.js", document.baseURI).href);
    const title = document.getElementById("version").title;
    return { body: document.body.dataset.wasmBuild, state: window.sightline.wasmBuild, simd: m.simdSupported(), title };
  });
  assert.deepEqual(chosen, { body: "simd128", state: "simd128", simd: true, title: "wasm module: simd128" });
  await figures(page, join(fixturesDir, SAMPLE));
  assert.match(await page.evaluate(() => window.sightline.app.active.worker.glue), /\/sightline\.js$/);
  assert.deepEqual(await page.evaluate(() => window.compiledWasm), ["sightline_bg.wasm"]);
  assert.deepEqual(await workerSimd(page), [true]);
}

export async function thePlainModuleShowsWhatTheSimdModuleShows({ page, baseUrl, fixturesDir }) {
  const dir = mkdtempSync(join(tmpdir(), "sightline-wasm-"));
  const split = join(dir, "nccl_rank0.json");
  writeFileSync(split, gunzipSync(readFileSync(join(fixturesDir, SPLIT))));

  await open(page, baseUrl);
  const simd = [await figures(page, join(fixturesDir, SAMPLE)), await figures(page, split, 3)];
  assert.deepEqual(await workerSimd(page), [true, true, true]);

  await open(page, `${baseUrl}?wasm=plain`);
  assert.equal(await page.evaluate(() => document.body.dataset.wasmBuild), "plain");
  const plain = [await figures(page, join(fixturesDir, SAMPLE)), await figures(page, split, 3)];
  assert.equal(await page.evaluate(() => window.sightline.app.active.worker.glue.split("/").pop()), "sightline_plain.js");
  // The page compiled the plain module only (Trunk's preload fetches the other, unused), and
  // every worker, the parse workers included, runs it.
  assert.deepEqual(await page.evaluate(() => window.compiledWasm), ["sightline_plain_bg.wasm"]);
  assert.deepEqual(await workerSimd(page), [false, false, false]);

  assert.equal(simd[1].parts, 3, "read by three workers");
  assert.equal(plain[1].parts, 3, "read by three workers");
  for (let i = 0; i < simd.length; i++) {
    const [a, b] = [simd[i], plain[i]];
    assert.ok(a.drawnRects > 5, `trace ${i}: slices drawn: ${a.drawnRects}`);
    assert.ok(a.page.findings.length > 0 && a.page.ops, `trace ${i}: findings and an operator table`);
    assert.deepEqual(b.summary, a.summary, `trace ${i}: summary`);
    assert.deepEqual(b.frame, a.frame, `trace ${i}: the timeline's frame`);
    assert.deepEqual(b.reports, a.reports, `trace ${i}: steps, idle, findings`);
    assert.deepEqual(b.tables, a.tables, `trace ${i}: operator and kernel tables`);
    assert.deepEqual(b.page, a.page, `trace ${i}: what the page shows`);
  }
}

export async function theWebComponentRunsTheModuleTheHostPageAsksFor({ page, baseUrl, ignore }) {
  // The element streams the bundled sample; see embed.test.mjs acceptStreamedFetch.
  ignore("http", /\/samples\/[^ ]+: net::ERR_ABORTED$/);
  // The example page's iframes hold the viewer page itself: only the elements are looked at here.
  await page.goto(`${baseUrl}embed-example.html?wasm=plain`);
  await page.waitForFunction(() => [...document.querySelectorAll("sightline-trace")].every((e) => ["ready", "error"].includes(e.getAttribute("state"))), null, { timeout: 60000 });
  const info = await page.evaluate(async () => {
    const elements = [...document.querySelectorAll("sightline-trace")];
    return {
      build: customElements.get("sightline-trace").wasmBuild,
      states: elements.map((e) => e.getAttribute("state")),
      simd: await Promise.all(elements.map((e) => e.worker.module.simd128())),
    };
  });
  assert.equal(info.build, "plain");
  assert.ok(info.states.length > 0 && info.states.every((s) => s === "ready"), info.states.join(", "));
  assert.ok(info.simd.every((s) => s === false), `the elements' modules: simd128 ${info.simd}`);
}
