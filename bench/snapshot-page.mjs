#!/usr/bin/env node
// A memory snapshot opened in the page in headless Chromium (a release build in dist/): the time
// from the file chosen to the timeline drawn, the worker's wasm memory then beside the pickle's
// size (the goal: at most 1.5 times), and the Active Memory Timeline's layouts (the worker call
// and its transfer, then the paint) zoomed out, while zooming in and out, and a hover's hit test.
//
//   node bench/snapshot-page.mjs FILE.pickle[.gz]
//   node bench/snapshot-page.mjs --memory-viz DIR [--limit-s S] FILE.pickle...
//
// Large snapshots come from `tests/fixtures/snapshot/make.py --large OUT --steps N`. Prints one
// JSON object.
//
// --memory-viz DIR: each file in PyTorch's own viewer too (memory_viz, the page of
// `torch/utils/viz/MemoryViz.js`), side by side with this page, each viewer in a Chromium of its
// own and in turn. DIR holds `MemoryViz.js` as PyTorch ships it, `VERSION` (the torch version it
// came with, one line) and d3 5 from npm (`node_modules/d3`); bench/run fills it (`--snapshots`).
// MemoryViz.js imports d3 from a CDN; the copy served here reads the same names from d3 5's
// browser bundle instead (its import lines rewritten, every other line as shipped). It takes a
// file by drag and drop: the file chosen in an input is dropped on its page as a `drop` event,
// which it reads whole (FileReader), unpickles in JavaScript and draws as SVG. Its timeline is
// drawn when the polygons of its plot are in the page and a frame has been laid out and painted
// after them (a task posted from the next animation frame). Figures for both viewers: the time
// from the input's change event to the timeline drawn; the largest resident memory of a renderer
// process, sampled (Linux VmHWM; the page, its workers and its wasm memory all live in it); the
// page's JS heap once drawn, after a full GC (CDP Runtime.getHeapUsage). A viewer fails when its
// page throws, its renderer crashes ("Aw, Snap": out of memory) or no timeline is drawn within
// --limit-s (600).

import { readFileSync, writeFileSync, mkdtempSync, rmSync, copyFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CHROMIUM_PATH, launchBrowser, startStaticServer } from "../tests/e2e/lib.mjs";
import { start, viewerPage } from "./viewer.mjs";

async function inPage() {
  const { app, snapshot } = window.sightline;
  const { stats } = window.benchPage;
  const chart = snapshot.chart;
  while (app.timings.heapBytes === undefined) await new Promise((r) => setTimeout(r, 50));
  const report = snapshot.active.report;
  const timed = async (f) => {
    const t0 = performance.now();
    await f();
    return performance.now() - t0;
  };
  const whole = [];
  for (let i = 0; i < 10; i++) {
    chart.start = 0;
    chart.end = chart.positions;
    whole.push(await timed(() => chart.request()));
  }
  const rects = chart.painted[chart.painted.length - 1].rects;
  const zoom = [];
  const width = chart.size().width;
  for (const factor of [0.5, 2]) {
    for (let i = 0; i < 20; i++) zoom.push(await timed(() => (chart.zoom(width * 0.37, factor), chart.idle())));
  }
  const box = chart.canvas.getBoundingClientRect();
  const hits = [];
  for (let i = 0; i < 20; i++) {
    const ev = { clientX: box.left + (box.width * (i + 0.5)) / 20, clientY: box.bottom - 5 };
    hits.push(await timed(() => chart.hitAt(ev)));
  }
  const t = app.timings;
  const d = report.devices[0];
  return {
    file_bytes: report.stats.input_bytes,
    pickle_bytes: report.stats.pickle_bytes,
    entries: report.entries,
    allocations: d ? d.allocs : 0,
    read_ms: Math.round(t.readMs),
    build_ms: Math.round(t.finishMs),
    timeline_drawn_ms: Math.round(t.readyMs),
    worker_wasm_bytes: t.heapBytes,
    worker_wasm_over_pickle: +(t.heapBytes / report.stats.pickle_bytes).toFixed(2),
    // Wasm memory keeps its high-water mark: this is the most the worker held, layouts included.
    worker_wasm_bytes_after_layouts: await snapshot.active.worker.module.memory_bytes(),
    rects_zoomed_out: rects,
    layout_zoomed_out_ms: stats(whole),
    layout_zooming_ms: stats(zoom),
    hit_ms: stats(hits),
  };
}

/**
 * Samples the resident memory of `browser`'s renderer processes every 250 ms (CDP
 * SystemInfo.getProcessInfo names them; Linux /proc/PID/status says VmHWM, their high-water
 * mark). `stop()` returns the largest, in bytes: the page's renderer, where its workers run too.
 */
async function rendererPeak(browser) {
  const cdp = await browser.newBrowserCDPSession();
  const peaks = new Map();
  const read = async () => {
    const { processInfo } = await cdp.send("SystemInfo.getProcessInfo").catch(() => ({ processInfo: [] }));
    for (const p of processInfo) {
      if (p.type !== "renderer") continue;
      let status = "";
      try {
        status = readFileSync(`/proc/${p.id}/status`, "utf8");
      } catch {
        continue; // gone (a crash)
      }
      const m = /^VmHWM:\s+(\d+) kB/m.exec(status);
      if (m) peaks.set(p.id, Math.max(peaks.get(p.id) || 0, Number(m[1]) * 1024));
    }
  };
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    await read();
    busy = false;
  }, 250);
  return {
    async stop() {
      clearInterval(timer);
      while (busy) await new Promise((r) => setTimeout(r, 20));
      await read();
      return Math.max(0, ...peaks.values());
    },
  };
}

/** The page's JS heap in use after a full GC (CDP Runtime.getHeapUsage), in bytes: what it keeps. */
async function jsHeap(page) {
  const s = await page.context().newCDPSession(page);
  await s.send("HeapProfiler.collectGarbage");
  const { usedSize } = await s.send("Runtime.getHeapUsage");
  await s.detach();
  return usedSize;
}

/** This page on `file`, in a Chromium of its own. */
async function sightline(file) {
  const env = await start();
  try {
    const page = await viewerPage(env);
    const peak = await rendererPeak(env.browser);
    await page.setInputFiles("#file-input", resolve(file));
    await page.waitForFunction(() => ["snapshot", "error", "ready"].includes(document.body.dataset.state), null, { timeout: 0, polling: 500 });
    const state = await page.evaluate(() => document.body.dataset.state);
    if (state !== "snapshot") throw new Error(`not opened as a snapshot: ${state}: ${await page.textContent("#error")}`);
    const r = await page.evaluate(inPage);
    return { ...r, page_js_heap_bytes: await jsHeap(page), renderer_peak_rss_bytes: await peak.stop() };
  } finally {
    await env.browser.close();
    await env.server.close();
  }
}

/** Imports from the CDN, as MemoryViz.js writes them; each becomes the same names read from d3's bundle. */
const CDN_IMPORT = /^import (\* as \w+|\{[\w, ]+\}) from "https:\/\/[^"]+\/d3(-[a-z]+)?@\d+";$/;

/**
 * A folder with memory_viz's page: `index.html` (a hidden file input, d3 5's bundle, MemoryViz.js),
 * MemoryViz.js from `dir` with its d3 imports read from the bundle, and the bundle.
 */
function memoryVizSite(dir) {
  const site = mkdtempSync(join(tmpdir(), "memory-viz-"));
  let rewritten = 0;
  const js = readFileSync(join(dir, "MemoryViz.js"), "utf8")
    .split("\n")
    .map((line) => {
      const m = CDN_IMPORT.exec(line);
      if (!m) return line;
      rewritten++;
      return m[1].startsWith("*") ? `const ${m[1].slice(5)} = window.d3;` : `const ${m[1]} = window.d3;`;
    })
    .join("\n");
  if (rewritten === 0 || /^import /m.test(js)) throw new Error(`${dir}/MemoryViz.js: its imports are not the d3 ones this bench maps`);
  writeFileSync(join(site, "MemoryViz.js"), js);
  copyFileSync(join(dir, "node_modules", "d3", "dist", "d3.min.js"), join(site, "d3.min.js"));
  writeFileSync(
    join(site, "index.html"),
    '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>memory_viz</title></head><body>\n' +
      '<input type="file" id="bench-file" style="display: none">\n' +
      '<script src="d3.min.js"></script>\n<script type="module" src="MemoryViz.js"></script>\n</body></html>\n',
  );
  return site;
}

/**
 * Run in memory_viz's page before a file is chosen: the file chosen in #bench-file is dropped on
 * the body, where MemoryViz.js takes files; `window.bench` gets the times from the change event
 * to the file read (its FileReader's load), to the plot's polygons in the page (its scripts
 * done) and to the frame after them (drawn).
 */
function memoryVizHarness() {
  const input = document.getElementById("bench-file");
  const read = FileReader.prototype.readAsArrayBuffer;
  FileReader.prototype.readAsArrayBuffer = function (blob) {
    const onload = this.onload;
    this.onload = (e) => {
      window.bench.read_ms = performance.now() - window.bench.started;
      // Told to the bench at once, so that it is known if the page dies unpickling the file.
      window.benchNote("read_ms", window.bench.read_ms);
      return onload.call(this, e);
    };
    return read.call(this, blob);
  };
  input.addEventListener("change", () => {
    const started = performance.now();
    window.bench = { started };
    new MutationObserver((_, obs) => {
      if (!document.querySelector("svg polygon")) return;
      obs.disconnect();
      window.bench.scripts_done_ms = performance.now() - started;
      requestAnimationFrame(() => setTimeout(() => (window.bench.drawn_ms = performance.now() - started)));
    }).observe(document.body, { childList: true, subtree: true });
    const dt = new DataTransfer();
    dt.items.add(input.files[0]);
    document.body.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
}

/** What Chromium writes when a renderer runs out of memory (V8's heap or an allocation). */
const OOM = /V8 javascript OOM \([^)]*\)|Fatal JavaScript out of memory[^\n]*|Out of memory[^\n]*/i;
/** V8's account of a full garbage collection, on stderr before an OOM: heap used (committed) -> after. */
const GC = /Mark-Compact[^\n]*?[\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/g;

/**
 * memory_viz on `file`, in a Chromium of its own; a failure is returned as `failed`, not thrown,
 * with Chromium's out-of-memory line and V8's last heap size where it wrote them (its stderr goes
 * to a file: Chromium is started through a wrapper in `site`).
 */
async function memoryViz(site, file, limitS) {
  const server = await startStaticServer({ root: site, prefix: "/" });
  const log = join(site, "chromium-stderr.log");
  const wrapper = join(site, "chromium");
  writeFileSync(log, "");
  writeFileSync(wrapper, `#!/bin/sh\nexec ${CHROMIUM_PATH} "$@" 2>>'${log}'\n`, { mode: 0o755 });
  const browser = await launchBrowser({ executablePath: wrapper });
  const out = {};
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const notes = {};
    await page.exposeFunction("benchNote", (key, value) => (notes[key] = value));
    const errors = [];
    let crashed = false;
    page.on("pageerror", (e) => errors.push(String(e.message || e)));
    // A crash ends the wait; an exception ends it 5 s later if no timeline came.
    const ended = new Promise((done) => {
      page.on("crash", () => ((crashed = true), done()));
      page.on("pageerror", () => setTimeout(done, 5000));
    });
    await page.goto(server.baseUrl);
    await page.waitForFunction(() => document.querySelectorAll("select").length === 3);
    await page.evaluate(memoryVizHarness);
    const peak = await rendererPeak(browser);
    const chosen = Date.now();
    await page.setInputFiles("#bench-file", resolve(file));
    let done = false;
    const drawn = page
      .waitForFunction(() => window.bench && window.bench.drawn_ms !== undefined, null, { timeout: limitS * 1000, polling: 500 })
      .then(() => (done = true), () => {});
    // The limit kept here too: the page's own wait cannot time out while a long task holds it.
    let timer;
    await Promise.race([drawn, ended, new Promise((r) => (timer = setTimeout(r, limitS * 1000)))]);
    clearTimeout(timer);
    out.wall_ms = Date.now() - chosen;
    out.renderer_peak_rss_bytes = await peak.stop();
    if (errors.length) out.errors = errors.slice(0, 3);
    if (crashed) {
      // The renderer's last words reach the log a moment after the crash event.
      await new Promise((r) => setTimeout(r, 1000));
      const stderr = readFileSync(log, "utf8");
      const oom = OOM.exec(stderr);
      const gcs = [...stderr.matchAll(GC)];
      out.failed = "the renderer crashed (Aw, Snap)" + (oom ? `: ${oom[0]}` : "");
      if (gcs.length) out.js_heap_at_crash_bytes = Math.round(Number(gcs[gcs.length - 1][1]) * 2 ** 20);
      if (notes.read_ms !== undefined) out.read_ms = Math.round(notes.read_ms);
      return out;
    }
    if (!done) {
      // Still at work, or stopped by an exception: the page is not asked again (it may never answer).
      out.failed = errors.length ? `an exception: ${errors[0]}` : `no timeline after ${limitS} s`;
      if (notes.read_ms !== undefined) out.read_ms = Math.round(notes.read_ms);
      return out;
    }
    const bench = await page.evaluate(() => window.bench);
    Object.assign(out, { read_ms: bench.read_ms, scripts_done_ms: bench.scripts_done_ms, timeline_drawn_ms: bench.drawn_ms });
    out.page_js_heap_bytes = await jsHeap(page);
    out.polygons = await page.evaluate(() => document.querySelectorAll("svg polygon").length);
    for (const k of ["read_ms", "scripts_done_ms", "timeline_drawn_ms"]) if (out[k] !== undefined) out[k] = Math.round(out[k]);
    return out;
  } finally {
    await browser.close();
    await server.close();
  }
}

function args(argv) {
  const a = { files: [], limitS: 600 };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--memory-viz") a.memoryViz = argv[++i];
    else if (argv[i] === "--limit-s") a.limitS = Number(argv[++i]);
    else if (argv[i].startsWith("--")) throw new Error(`unknown flag ${argv[i]}`);
    else a.files.push(argv[i]);
  }
  if (a.files.length === 0 || (!a.memoryViz && a.files.length > 1) || !(a.limitS > 0)) {
    throw new Error("usage: node bench/snapshot-page.mjs FILE.pickle[.gz]\n       node bench/snapshot-page.mjs --memory-viz DIR [--limit-s S] FILE.pickle...");
  }
  return a;
}

const a = args(process.argv.slice(2));
if (!a.memoryViz) {
  console.log(JSON.stringify(await sightline(a.files[0]), null, 2));
} else {
  const dir = resolve(a.memoryViz);
  if (!existsSync(join(dir, "MemoryViz.js"))) throw new Error(`no MemoryViz.js in ${dir} (bench/run --snapshots fetches it)`);
  const site = memoryVizSite(dir);
  const version = existsSync(join(dir, "VERSION")) ? readFileSync(join(dir, "VERSION"), "utf8").trim() : "unknown";
  const d3 = JSON.parse(readFileSync(join(dir, "node_modules", "d3", "package.json"), "utf8")).version;
  const files = [];
  try {
    for (const file of a.files) {
      process.stderr.write(`snapshot-page: ${file}: this page\n`);
      const ours = await sightline(file);
      process.stderr.write(`snapshot-page: ${file}: memory_viz\n`);
      files.push({ file, bytes: ours.file_bytes, sightline: ours, memory_viz: await memoryViz(site, file, a.limitS) });
    }
  } finally {
    rmSync(site, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ memory_viz: { torch: version, d3, limit_s: a.limitS }, files }, null, 2));
}
