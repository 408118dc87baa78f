#!/usr/bin/env node
// Measures the viewer in headless Chromium on one trace: time from the file being chosen to
// `ready`, memory, and frame times at full zoom-out, scrolling and while zooming. Needs a release
// build in dist/.
//
//   node bench/viewer.mjs [TRACE]
//
// TRACE defaults to the 56 MB (unzipped) fixture real/tracelens_h100_owlv2_stack_mem.json.gz.
// A "frame" is one TimelineView.draw(): the wasm layout of the visible window plus the canvas
// commands (Chromium rasterizes in software here: --disable-gpu). The rAF figures are the
// intervals between animation frames while zooming continuously, what a user would feel.
// Prints one JSON object. bench/browser.mjs runs the same measurement for bench/run.

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { launchBrowser, startStaticServer } from "../tests/e2e/lib.mjs";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Serves dist/ and starts Chromium; returns { browser, server }. */
export async function start() {
  const dist = resolve(root, process.env.SIGHTLINE_DIST || "dist");
  if (!existsSync(join(dist, "index.html"))) throw new Error("build the page first: trunk build --release");
  const server = await startStaticServer({ root: dist, prefix: "/" });
  const browser = await launchBrowser();
  return { browser, server };
}

/** Opens `trace` in a fresh page and measures it; see the file's header. */
export async function measure({ browser, server }, trace, frames = 120) {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  try {
    await page.goto(server.baseUrl);
    await page.waitForFunction(() => window.sightlineReady === true);
    // Sample the JS heap while loading: Chromium's performance.memory is the only window on it.
    await page.evaluate(() => {
      window.__peakHeap = 0;
      window.__heapTimer = setInterval(() => {
        window.__peakHeap = Math.max(window.__peakHeap, performance.memory ? performance.memory.usedJSHeapSize : 0);
      }, 50);
    });
    const chosen = Date.now();
    await page.setInputFiles("#file-input", trace);
    await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state), null, { timeout: 900000 });
    const wallMs = Date.now() - chosen;
    if ((await page.evaluate(() => document.body.dataset.state)) !== "ready") throw new Error(await page.textContent("#error"));
    const result = await page.evaluate(framesInPage, frames);
    return { trace, file_chosen_to_ready_ms_wall: wallMs, ...result };
  } finally {
    await page.close();
  }
}

async function framesInPage(n) {
  const { view, app, memory } = window.sightline;
  clearInterval(window.__heapTimer);
  const s = view.session;
  const stats = (xs) => {
    const v = xs.slice().sort((a, b) => a - b);
    const q = (p) => v[Math.min(v.length - 1, Math.floor(p * v.length))];
    return { median_ms: +q(0.5).toFixed(2), p95_ms: +q(0.95).toFixed(2), max_ms: +v[v.length - 1].toFixed(2), n: v.length };
  };
  const rects = () => {
    const f = s.frame();
    const k = f.rects().length / view.k.rect_stride;
    f.free();
    return k;
  };
  s.reset_view();
  view.draw();
  // Unfold every deep lane so the frames below walk all rows.
  for (;;) {
    const t = view.meta.tracks.find((t) => t.kind === "lane" && t.all_rows > t.rows);
    if (!t) break;
    s.click(-10, t.y + 5);
    view.draw();
  }
  const out = [];
  for (let i = 0; i < n; i++) out.push(view.draw());
  const zoomedOut = { ...stats(out), rects: rects() };
  // Zoomed out, scrolling through every lane top to bottom.
  const scroll = [];
  let most = 0;
  for (let i = 0; i < 40; i++) {
    s.pan(0, view.meta.content_px / 40);
    scroll.push(view.draw());
    most = Math.max(most, rects());
  }
  const scrolling = { ...stats(scroll), content_px: view.meta.content_px, most_rects: most };
  s.pan(0, -1e9);
  // Zoom in around one point step by step to about 1 us across the screen, panning a little,
  // then back out.
  const w = view.areaSize().w;
  const zoom = [];
  const steps = Math.max(10, Math.floor(n / 2));
  const factor = Math.pow(1e-6, 1 / steps);
  for (let i = 0; i < steps; i++) {
    s.zoom_at(w * 0.37, factor);
    s.pan(3, 0);
    zoom.push(view.draw());
  }
  const deepRects = rects();
  for (let i = 0; i < steps; i++) {
    s.zoom_at(w * 0.37, 1 / factor);
    s.pan(-3, 0);
    zoom.push(view.draw());
  }
  // The same zoom, one step per animation frame: intervals between frames.
  const raf = [];
  await new Promise((done) => {
    let i = 0;
    let last = performance.now();
    const tick = (t) => {
      raf.push(t - last);
      last = t;
      s.zoom_at(w * 0.37, i < steps ? factor : 1 / factor);
      view.draw();
      if (++i < 2 * steps) requestAnimationFrame(tick);
      else done();
    };
    requestAnimationFrame((t) => {
      last = t;
      requestAnimationFrame(tick);
    });
  });
  const summary = app.active.summary;
  return {
    timings: app.timings,
    peak_js_heap_bytes: window.__peakHeap,
    wasm_memory_bytes: memory.buffer.byteLength,
    zoomed_out: zoomedOut,
    zoomed_out_scrolling: scrolling,
    zooming: { ...stats(zoom), deepest_rects: deepRects },
    // The first interval also pays for presenting the synchronous frames drawn just before.
    raf_interval_while_zooming: stats(raf.slice(1)),
    summary: { events: summary.events.total, slices: summary.model.slices, json_bytes: summary.file.json_bytes },
    canvas_css_px: [view.cssW, view.cssH],
    dpr: view.dpr,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const fixtures = resolve(root, process.env.SIGHTLINE_FIXTURES || "../shared/fixtures");
  const trace = resolve(process.argv[2] || join(fixtures, "real/tracelens_h100_owlv2_stack_mem.json.gz"));
  const env = await start();
  try {
    console.log(JSON.stringify(await measure(env, trace), null, 2));
  } finally {
    await env.browser.close();
    await env.server.close();
  }
}
