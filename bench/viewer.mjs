#!/usr/bin/env node
// Measures the viewer in headless Chromium on one trace: time from the file being chosen to the
// timeline drawn (`ready`) and to every analysis and table ready, memory (the page's JS heap and
// the wasm memory of the Session's worker), the page thread's longest task during the load
// (PerformanceObserver `longtask`), and frame times at full zoom-out, scrolling and while
// zooming, also while the background analyses run. Needs a release build in dist/.
//
//   node bench/viewer.mjs [TRACE] [--cancel] [--workers N] [--no-busy-frames]
//
// --cancel adds the Cancel latency at several points of the load (see cancelLatency).
// --workers N parses a large plain-JSON file in N workers (default: one per core; 1: the loading
// worker alone, as before the parallel parse).
// --no-busy-frames draws no frames while the background analyses run, so that their own time
// (file chosen -> every table ready) is measured without the frames' work between their slices.
//
// TRACE defaults to the 56 MB (unzipped) fixture real/tracelens_h100_owlv2_stack_mem.json.gz.
// A "frame" is one TimelineView.draw(): the request to the worker, the wasm layout of the visible
// window there, the draw list's transfer back and the canvas commands (Chromium rasterizes in software here: --disable-gpu). The rAF figures are the
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

/**
 * A fresh page of the viewer, its module started, with the page-side helpers (`pageHelpers`)
 * installed; `prepare(page)` runs before it loads (request routes, say); `query` is added to its
 * address (`?inflate=wasm`, say). The caller closes it.
 */
export async function viewerPage({ browser, server, query = "" }, prepare = async () => {}) {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  try {
    await prepare(page);
    await page.goto(server.baseUrl + query);
    await page.waitForFunction(() => window.sightlineReady === true);
    await page.evaluate(pageHelpers);
    return page;
  } catch (err) {
    await page.close();
    throw err;
  }
}

/** Chooses `trace` in the page's file input and waits for every analysis; throws its error. */
export async function openAnalysed(page, trace) {
  await page.setInputFiles("#file-input", trace);
  await page.waitForFunction(() => document.body.dataset.analyses === "ready" || document.body.dataset.state === "error", null, { timeout: 900000 });
  if ((await page.evaluate(() => document.body.dataset.state)) !== "ready") throw new Error(await page.textContent("#error"));
}

/**
 * Run in the page: `window.benchPage` = { stats(ms[]) (median, p95, max, n), unfoldedZoomedOut()
 * (the whole trace, every deep lane unfolded: the frames after it walk all rows) }.
 */
function pageHelpers() {
  const stats = (xs) => {
    const v = xs.slice().sort((a, b) => a - b);
    const q = (p) => v[Math.min(v.length - 1, Math.floor(p * v.length))];
    return { median_ms: +q(0.5).toFixed(2), p95_ms: +q(0.95).toFixed(2), max_ms: +v[v.length - 1].toFixed(2), n: v.length };
  };
  const unfoldedZoomedOut = async () => {
    const { view } = window.sightline;
    const s = view.session;
    s.reset_view();
    await view.draw();
    for (;;) {
      const t = view.meta.tracks.find((t) => t.kind === "lane" && t.all_rows > t.rows);
      if (!t) break;
      s.click(-10, t.y + 5);
      await view.draw();
    }
  };
  window.benchPage = { stats, unfoldedZoomedOut };
}

/** Opens `trace` in a fresh page and measures it; see the file's header. */
export async function measure({ browser, server, workers, busyFrames = true, query }, trace, frames = 120) {
  const page = await viewerPage({ browser, server, query });
  try {
    await parseWorkers(page, workers);
    // Sample the JS heap while loading: Chromium's performance.memory is the only window on it.
    await page.evaluate((busyFrames) => {
      window.__peakHeap = 0;
      window.__heapTimer = setInterval(() => {
        window.__peakHeap = Math.max(window.__peakHeap, performance.memory ? performance.memory.usedJSHeapSize : 0);
      }, 50);
      window.__longest = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
      }).observe({ type: "longtask" });
      // Frames painted while the background analyses run (the timeline is shown meanwhile).
      window.__busyFrames = [];
      if (busyFrames) {
        new MutationObserver((_, obs) => {
          if (document.body.dataset.state !== "ready" || document.body.dataset.analyses !== "running") return;
          obs.disconnect();
          const { view } = window.sightline;
          const tick = async () => {
            if (document.body.dataset.analyses !== "running") return;
            view.call(() => view.session.pan(1, 0));
            window.__busyFrames.push(await view.draw());
            requestAnimationFrame(tick);
          };
          requestAnimationFrame(tick);
        }).observe(document.body, { attributes: true, attributeFilter: ["data-state", "data-analyses"] });
      }
    }, busyFrames);
    const chosen = Date.now();
    await page.setInputFiles("#file-input", trace);
    await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state), null, { timeout: 900000 });
    const wallMs = Date.now() - chosen;
    if ((await page.evaluate(() => document.body.dataset.state)) !== "ready") throw new Error(await page.textContent("#error"));
    await page.waitForFunction(() => document.body.dataset.analyses === "ready" || document.body.dataset.state !== "ready", null, { timeout: 900000 });
    const analysedWallMs = Date.now() - chosen;
    const result = await page.evaluate(framesInPage, frames);
    return { trace, file_chosen_to_ready_ms_wall: wallMs, file_chosen_to_analysed_ms_wall: analysedWallMs, ...result };
  } finally {
    await page.close();
  }
}

/**
 * Cancel latency: loads `trace` once per point and clicks Cancel (a real click) when the load
 * reaches it: a fraction of the bytes read, or "building" (the model build in the worker).
 * The latency is the click event's timestamp to the end of the page's cancel handler, which is
 * where the page is back in its previous state; the longest page task during each load is kept.
 */
export async function cancelLatency({ browser, server, workers }, trace, points = [0.25, 0.5, 0.75, "building"]) {
  const out = [];
  for (const point of points) {
    const page = await viewerPage({ browser, server });
    try {
      await parseWorkers(page, workers);
      await page.evaluate(() => {
        window.__longest = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
        }).observe({ type: "longtask" });
      });
      await page.setInputFiles("#file-input", trace);
      if (point === "building") await page.waitForFunction(() => document.body.dataset.stage === "building", null, { polling: "raf", timeout: 900000 });
      else await page.waitForFunction((p) => document.getElementById("progress").value >= p, point, { polling: "raf", timeout: 900000 });
      await page.click("#cancel");
      await page.waitForFunction(() => document.body.dataset.state === "empty");
      const r = await page.evaluate(() => ({ ...window.sightline.app.lastCancel, longest_task_ms: window.__longest }));
      out.push({ at: point, ...r });
    } finally {
      await page.close();
    }
  }
  return out;
}

/** Sets how many workers parse a file (www/js/worker/parallel.js); undefined keeps the page's. */
async function parseWorkers(page, n) {
  if (!n) return;
  await page.evaluate(async (n) => {
    const m = await import(new URL("js/worker/parallel.js", document.baseURI).href);
    m.settings.workers = n;
  }, n);
}

async function framesInPage(n) {
  const { view, app } = window.sightline;
  clearInterval(window.__heapTimer);
  const longestTask = window.__longest;
  const s = view.session;
  const { stats, unfoldedZoomedOut } = window.benchPage;
  const rects = async () => (await s.frame()).rects.length / view.k.rect_stride;
  await unfoldedZoomedOut();
  const out = [];
  for (let i = 0; i < n; i++) out.push(await view.draw());
  const zoomedOut = { ...stats(out), rects: await rects() };
  // Zoomed out, dragged sideways as a user drags: a pan and a request every animation frame for
  // two seconds, the way the page's pointer handler does it. Intervals between painted frames.
  const painted = [];
  const onFrame = view.cb.onFrame;
  view.cb.onFrame = (meta) => {
    painted.push(performance.now());
    if (onFrame) onFrame(meta);
  };
  await new Promise((done) => {
    const until = performance.now() + 2000;
    const tick = (t) => {
      s.pan(-4, 0);
      view.request();
      if (t < until) requestAnimationFrame(tick);
      else done();
    };
    requestAnimationFrame(tick);
  });
  await view.idle();
  view.cb.onFrame = onFrame;
  const gaps = painted.slice(1).map((t, i) => t - painted[i]);
  const dragging = { ...stats(gaps), painted_per_s: +(painted.length / ((painted[painted.length - 1] - painted[0]) / 1000)).toFixed(1) };
  s.reset_view();
  // Zoomed out, scrolling through every lane top to bottom.
  const scroll = [];
  let most = 0;
  for (let i = 0; i < 40; i++) {
    s.pan(0, view.meta.content_px / 40);
    scroll.push(await view.draw());
    most = Math.max(most, await rects());
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
    zoom.push(await view.draw());
  }
  const deepRects = await rects();
  for (let i = 0; i < steps; i++) {
    s.zoom_at(w * 0.37, 1 / factor);
    s.pan(-3, 0);
    zoom.push(await view.draw());
  }
  // The same zoom, one step per animation frame: intervals between frames.
  const raf = [];
  await new Promise((done) => {
    let i = 0;
    let last = performance.now();
    const tick = async (t) => {
      raf.push(t - last);
      last = t;
      s.zoom_at(w * 0.37, i < steps ? factor : 1 / factor);
      await view.draw();
      if (++i < 2 * steps) requestAnimationFrame(tick);
      else done();
    };
    requestAnimationFrame((t) => {
      last = t;
      requestAnimationFrame(tick);
    });
  });
  const summary = app.active.summary;
  const busy = window.__busyFrames;
  return {
    timings: app.timings,
    peak_js_heap_bytes: window.__peakHeap,
    wasm_memory_bytes: await app.active.worker.module.memory_bytes(),
    // Workers that parsed a part: their wasm memory at its peak and the part buffer each sent.
    parse_workers: app.active.worker.parts || 1,
    helpers: app.active.worker.partStats || [],
    inflater: app.active.worker.inflater || null,
    part_times_ms: app.active.worker.partTimes || null,
    longest_main_thread_task_ms: longestTask,
    frames_during_analysis: busy.length ? stats(busy) : null,
    zoomed_out: zoomedOut,
    zoomed_out_dragging: dragging,
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
  const given = process.argv.slice(2).find((a, i, all) => !a.startsWith("--") && all[i - 1] !== "--workers");
  const trace = resolve(given || join(fixtures, "real/tracelens_h100_owlv2_stack_mem.json.gz"));
  const env = await start();
  const w = process.argv.indexOf("--workers");
  if (w > 0) env.workers = Number(process.argv[w + 1]);
  if (process.argv.includes("--no-busy-frames")) env.busyFrames = false;
  try {
    const result = await measure(env, trace);
    if (process.argv.includes("--cancel")) result.cancel = await cancelLatency(env, trace);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await env.browser.close();
    await env.server.close();
  }
}
