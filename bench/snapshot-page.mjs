#!/usr/bin/env node
// A memory snapshot opened in the page in headless Chromium (a release build in dist/): the time
// from the file chosen to the timeline drawn, the worker's wasm memory then beside the pickle's
// size (the goal: at most 1.5 times), and the Active Memory Timeline's layouts (the worker call
// and its transfer, then the paint) zoomed out, while zooming in and out, and a hover's hit test.
//
//   node bench/snapshot-page.mjs FILE.pickle[.gz]
//
// Large snapshots come from `tests/fixtures/snapshot/make.py --large OUT --steps N`. Prints one
// JSON object.

import { resolve } from "node:path";
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

const file = process.argv[2];
if (!file) throw new Error("usage: node bench/snapshot-page.mjs FILE.pickle[.gz]");
const env = await start();
try {
  const page = await viewerPage(env);
  await page.setInputFiles("#file-input", resolve(file));
  await page.waitForFunction(() => ["snapshot", "error", "ready"].includes(document.body.dataset.state), null, { timeout: 0, polling: 500 });
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state !== "snapshot") throw new Error(`not opened as a snapshot: ${state}: ${await page.textContent("#error")}`);
  console.log(JSON.stringify(await page.evaluate(inPage), null, 2));
} finally {
  await env.browser.close();
  await env.server.close();
}
