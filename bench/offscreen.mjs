#!/usr/bin/env node
// How frames would reach the canvas if the worker painted them (an OffscreenCanvas) rather than
// posting draw lists for the page to paint: measures the page's own painter
// (TimelineView.paint) on the page's canvas and, in a worker, on an OffscreenCanvas of the same
// size, with the same real frame of TRACE (zoomed out, every lane unfolded: the costliest frame),
// one paint per animation frame; and the Session's layout of that frame in its worker.
//
//   node bench/offscreen.mjs [TRACE]
//
// Prints one JSON object: layout_ms (the worker's frame() round trip), page_paint_ms and
// worker_paint_ms (p50/p95/max of the paint call), page_raf_ms and worker_raf_ms (intervals between
// animation frames while painting one per frame). ARCHITECTURE.md says what was chosen from it.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { openAnalysed, root, start, viewerPage } from "./viewer.mjs";

const N = 120;

export async function offscreen({ browser, server }, trace) {
  const worker = readFileSync(join(root, "bench", "offscreen-worker.js"), "utf8");
  const page = await viewerPage({ browser, server }, (page) =>
    page.route("**/js/bench-offscreen-worker.js", (route) => route.fulfill({ contentType: "text/javascript", body: worker })),
  );
  try {
    await openAnalysed(page, trace);
    return await page.evaluate(async (n) => {
      const { view } = window.sightline;
      const s = view.session;
      const { stats, unfoldedZoomedOut } = window.benchPage;
      await unfoldedZoomedOut();
      const layout = [];
      let frame;
      for (let i = 0; i < 40; i++) {
        const t0 = performance.now();
        frame = await s.frame();
        layout.push(performance.now() - t0);
      }
      const layers = await Promise.all(view.layers.map((l) => l.fetch(s)));
      // The page: the same painter on its own canvas, one paint per animation frame.
      const pagePaint = [];
      const pageRaf = [];
      let last = 0;
      for (let i = 0; i < n; i++) {
        const t = await new Promise((r) => requestAnimationFrame(r));
        if (last) pageRaf.push(t - last);
        last = t;
        const t0 = performance.now();
        view.paint({ session: s, t0, seq: view.asked + 1 + i }, [{ rects: frame.rects.slice(), meta: frame.meta }, layers]);
        pagePaint.push(performance.now() - t0);
      }
      // A worker: an OffscreenCanvas the size of the timeline's, the same frame and theme.
      const canvas = document.createElement("canvas");
      canvas.width = view.canvas.width;
      canvas.height = view.canvas.height;
      const overview = document.createElement("canvas");
      overview.width = view.overviewCanvas.width;
      overview.height = view.overviewCanvas.height;
      const [oc, oo] = [canvas.transferControlToOffscreen(), overview.transferControlToOffscreen()];
      const state = { theme: view.theme, palette: view.palette, k: view.k, dpr: view.dpr, cssW: view.cssW, cssH: view.cssH, overviewData: view.overviewData };
      const w = new Worker(new URL("js/bench-offscreen-worker.js", document.baseURI), { type: "module" });
      const out = await new Promise((resolve, reject) => {
        w.onmessage = (e) => resolve(e.data);
        w.onerror = (e) => reject(new Error(e.message));
        w.postMessage({ canvas: oc, overview: oo, state, frame: { rects: frame.rects, meta: frame.meta }, layers: [], n }, [oc, oo]);
      });
      w.terminate();
      return {
        rects: frame.rects.length / view.k.rect_stride,
        layout_ms: stats(layout),
        page_paint_ms: stats(pagePaint),
        page_raf_ms: stats(pageRaf),
        worker_paint_ms: stats(out.paint),
        worker_raf_ms: stats(out.intervals),
      };
    }, N);
  } finally {
    await page.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const trace = resolve(process.argv[2] || join(root, "../shared/fixtures/real/tracelens_h100_owlv2_stack_mem.json.gz"));
  const env = await start();
  try {
    console.log(JSON.stringify({ trace, ...(await offscreen(env, trace)) }, null, 2));
  } finally {
    await env.browser.close();
    await env.server.close();
  }
}
