#!/usr/bin/env node
// Whether each FILE opens in Sightline's page in headless Chromium, as a user opens it (the file
// input, the page's own choice of workers), with every analysis and table: the state it ends in
// (ready, or error with the message the page shows), seconds from the file chosen to the timeline
// drawn (drawn_s) and to every analysis done (analysed_s), the operator and kernel tables' rows,
// the session worker's wasm memory when drawn and at the end, each parse worker's, and the slices
// read. For the largest trace that opens (BENCHMARKS.md). One JSON object per FILE, one per line.
//
//   node bench/opens.mjs FILE...

import { statSync } from "node:fs";
import { basename } from "node:path";
import { start, viewerPage } from "./viewer.mjs";

const env = await start();
try {
  for (const file of process.argv.slice(2)) {
    const page = await viewerPage(env);
    try {
      const chosen = Date.now();
      await page.setInputFiles("#file-input", file);
      const wait = (test) => page.waitForFunction(test, null, { timeout: 1800000, polling: 500 });
      await wait(() => ["ready", "error"].includes(document.body.dataset.state));
      const drawn = (Date.now() - chosen) / 1000;
      const memory = () => page.evaluate(() => window.sightline.app.active.worker.module.memory_bytes()).catch(() => null);
      const atDrawn = (await page.evaluate(() => document.body.dataset.state)) === "ready" ? await memory() : null;
      await wait(() => document.body.dataset.state !== "ready" || document.body.dataset.analyses === "ready");
      const analysed = (Date.now() - chosen) / 1000;
      const r = await page.evaluate(async () => {
        const state = document.body.dataset.state;
        const a = window.sightline.app.active;
        const loaded = state === "ready" && a;
        const rows = async (k) => {
          const v = await (k === "ops" ? a.session.ops(false) : a.session[k]());
          return (v.rows || v).length;
        };
        return {
          state,
          error: state === "error" ? document.getElementById("error").textContent.trim() : null,
          slices: loaded ? a.summary.model.slices : null,
          table_rows: loaded ? { ops: await rows("ops"), kernels: await rows("kernels") } : null,
          parse_workers: loaded ? a.worker.parts || 1 : null,
          helpers: loaded ? a.worker.partStats || [] : null,
        };
      });
      const end = r.state === "ready" ? await memory() : null;
      console.log(JSON.stringify({ file: basename(file), mb: statSync(file).size / 1e6, drawn_s: drawn, analysed_s: analysed, wasm_memory_drawn: atDrawn, wasm_memory_end: end, ...r }));
    } finally {
      await page.close();
    }
  }
} finally {
  await env.browser.close();
  await env.server.close();
}
