// The wasm parse alone, outside the browser: Node loads a build's module (the wasm-bindgen glue
// and .wasm of `trunk build --release`), feeds FILE to a Session in 16 MB pieces as a worker does
// and builds the model, RUNS times in one process (the later runs use the engine's optimized code).
// The session is told the file's size first, as the page's worker tells it.
// Prints each run's feed and finish wall time and the process's CPU time for it: compare with
// `taskset -c 0 sightline summary FILE --json` for wasm per core against native per core.
// The first run also prints the module's memory (a wasm memory never shrinks, so its size is the
// peak) after the feed and after the finish, and per slice of the finished model.
//
//   node bench/wasm-parse.mjs DIST FILE [RUNS]

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [dist, file, runsArg] = process.argv.slice(2);
if (!file) throw new Error("usage: node bench/wasm-parse.mjs DIST FILE [RUNS]");
const glue = await import(pathToFileURL(resolve(dist, "sightline.js")).href);
glue.initSync({ module: readFileSync(resolve(dist, "sightline_bg.wasm")) });
const bytes = readFileSync(file);
const PIECE = 16 << 20;
for (let r = 0; r < Number(runsArg || 3); r++) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const s = new glue.Session();
  // As the page's worker does: the size known up front (a build without the call doubles).
  if (s.expect_bytes) s.expect_bytes(bytes.length);
  for (let off = 0; off < bytes.length; off += PIECE) s.feed(bytes.subarray(off, off + PIECE));
  const t1 = performance.now();
  const fed = glue.memory_bytes();
  const summary = s.finish(1000, 500);
  const t2 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  if (r === 0) {
    const model = JSON.parse(summary).model;
    const slices = model.slices;
    const mb = (b) => (b / 1e6).toFixed(0);
    const end = glue.memory_bytes();
    console.log(`wasm memory: ${mb(fed)} MB after the feed, ${mb(end)} MB after the finish; ${slices} slices, ${(end / slices).toFixed(0)} bytes per slice (the model itself: ${(model.total_bytes / slices).toFixed(0)})`);
  }
  s.free();
  console.log(`run ${r + 1}: feed ${(t1 - t0).toFixed(0)} ms, finish ${(t2 - t1).toFixed(0)} ms, CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
}
