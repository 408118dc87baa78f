#!/usr/bin/env node
// The browser part of bench/run: Sightline's page in headless Chromium on each FILE, --runs times
// (median), through bench/viewer.mjs. Prints {"sightline": [...], "speedscope": []} as bench.py
// reads it: file, mb, ready_s (file chosen to every table ready), js_heap and wasm_memory (bytes),
// frame_idle_p50/p95 (zoomed out) and frame_zoom_p50/p95 (zooming and panning), in ms.
//
//   node bench/browser.mjs [--runs N] FILE...

import { statSync } from "node:fs";
import { basename } from "node:path";
import { measure, start } from "./viewer.mjs";

const args = process.argv.slice(2);
let runs = 1;
const at = args.indexOf("--runs");
if (at >= 0) runs = Math.max(1, Number(args.splice(at, 2)[1]) || 1);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const env = await start();
const sightline = [];
try {
  for (const file of args) {
    const all = [];
    for (let i = 0; i < runs; i++) {
      process.stderr.write(`browser: ${basename(file)} run ${i + 1}/${runs}\n`);
      all.push(await measure(env, file));
    }
    const pick = (f) => median(all.map(f));
    sightline.push({
      file: basename(file),
      mb: statSync(file).size / 1e6,
      ready_s: pick((r) => r.timings.readyMs) / 1000,
      js_heap: pick((r) => r.peak_js_heap_bytes),
      wasm_memory: pick((r) => r.wasm_memory_bytes),
      frame_idle_p50: pick((r) => r.zoomed_out.median_ms),
      frame_idle_p95: pick((r) => r.zoomed_out.p95_ms),
      frame_zoom_p50: pick((r) => r.zooming.median_ms),
      frame_zoom_p95: pick((r) => r.zooming.p95_ms),
    });
  }
} finally {
  await env.browser.close();
  await env.server.close();
}
console.log(JSON.stringify({ sightline, speedscope: [] }, null, 1));
