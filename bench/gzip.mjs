#!/usr/bin/env node
// A `.json.gz` trace in Sightline's page in headless Chromium, inflated both ways, in turns (A B
// A B ...) so a drift of the machine's speed hits both: by the browser's inflater in a worker of
// its own while the Session's worker parses (the page's default), and by the Session's wasm
// inflater in the parsing worker (`?inflate=wasm`, the way every build before did it). Prints one
// JSON object: per way, the median of --runs of the file chosen to the end of reading (read_s),
// the model build after it (finish_s), the file chosen to the timeline drawn (drawn_s) and to
// every table ready (ready_s), MB of JSON per second to drawn, the longest task on the page's
// thread, and which inflater ran; and `inflate_alone_s`, the browser's inflater on the same file
// with nothing else to do (the median of as many runs): the most the parse could be fed.
//
//   node bench/gzip.mjs [--runs N] FILE.json.gz

import { statSync } from "node:fs";
import { basename } from "node:path";
import { measure, start, viewerPage } from "./viewer.mjs";

const args = process.argv.slice(2);
let runs = 3;
const at = args.indexOf("--runs");
if (at >= 0) runs = Math.max(1, Number(args.splice(at, 2)[1]) || 1);
const file = args[0];
if (!file || !file.endsWith(".gz")) throw new Error("usage: node bench/gzip.mjs [--runs N] FILE.json.gz");
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Seconds the page's DecompressionStream takes to inflate `file` to its end, nothing else run. */
async function inflateAlone(env, file) {
  const page = await viewerPage(env);
  try {
    await page.evaluate(() => {
      const input = document.createElement("input");
      input.type = "file";
      input.id = "bench-gz";
      document.body.append(input);
    });
    await page.setInputFiles("#bench-gz", file);
    return await page.evaluate(async () => {
      const t0 = performance.now();
      const reader = document.getElementById("bench-gz").files[0].stream().pipeThrough(new DecompressionStream("gzip")).getReader();
      for (;;) if ((await reader.read()).done) break;
      return (performance.now() - t0) / 1000;
    });
  } finally {
    await page.close();
  }
}

const env = await start();
const ways = { browser: "", wasm: "?inflate=wasm" };
const all = { browser: [], wasm: [] };
const alone = [];
try {
  for (let i = 0; i < runs; i++) {
    alone.push(await inflateAlone(env, file));
    for (const [way, query] of Object.entries(ways)) {
      process.stderr.write(`gzip: ${basename(file)} inflated by ${way}, run ${i + 1}/${runs}\n`);
      all[way].push(await measure({ ...env, query, busyFrames: false }, file, 10));
    }
  }
} finally {
  await env.browser.close();
  await env.server.close();
}
const out = { file: basename(file), gz_mb: statSync(file).size / 1e6, runs, inflate_alone_s: median(alone) };
for (const [way, rs] of Object.entries(all)) {
  const json = rs[0].summary.json_bytes / 1e6;
  const drawn = median(rs.map((r) => r.timings.readyMs)) / 1000;
  out[way] = {
    inflater: [...new Set(rs.map((r) => r.inflater))].join(", "),
    json_mb: json,
    read_s: median(rs.map((r) => r.timings.readMs)) / 1000,
    finish_s: median(rs.map((r) => r.timings.finishMs)) / 1000,
    drawn_s: drawn,
    ready_s: median(rs.map((r) => r.timings.analysedMs)) / 1000,
    json_mb_per_s: json / drawn,
    longest_task_ms: median(rs.map((r) => r.longest_main_thread_task_ms)),
  };
}
console.log(JSON.stringify(out, null, 1));
