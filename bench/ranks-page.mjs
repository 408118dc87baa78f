#!/usr/bin/env node
// Measures opening a distributed job in the page (www/js/ranks.js) in headless Chromium: the
// job's files chosen together in the file input, then the time from the input's change event to
// every rank digested (each read in its own worker, as many at once as the machine's cores) and to
// the job shown (the cross-rank report, the tables and the bands drawn); memory per rank (the wasm
// heap of each rank that keeps its timeline, and the resident memory of all Chromium processes
// with the job open, divided by the ranks). Needs a release build in dist/.
//
//   node bench/ranks-page.mjs JOB_DIR...
//
// Each JOB_DIR is a folder of one job's traces (bench/ranks.py makes them in bench-out/ranks/).
// Prints one JSON object per job on its own line.

import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { start, viewerPage } from "./viewer.mjs";

/** Resident memory of `pid`'s descendants (Chromium's processes, for this script), bytes (Linux /proc). */
function treeRss(pid) {
  const children = new Map();
  for (const p of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(p));
    } catch {
      // The process ended meanwhile.
    }
  }
  let total = 0;
  const todo = [...(children.get(pid) || [])];
  while (todo.length) {
    const p = todo.pop();
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, "utf8"));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      continue;
    }
    todo.push(...(children.get(p) || []));
  }
  return total;
}

async function measureJob(ctx, dir) {
  const files = readdirSync(dir)
    .filter((f) => /\.json(\.gz)?$/.test(f))
    .sort()
    .map((f) => join(dir, f));
  const page = await viewerPage(ctx);
  try {
    const idle = treeRss(process.pid);
    await page.setInputFiles("#file-input", files);
    await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.ranks), null, { timeout: 600000 });
    const r = await page.evaluate(() => {
      const { ranks } = window.sightline;
      const kept = ranks.traces.filter((t) => t.session);
      return {
        state: document.body.dataset.ranks,
        ranks: ranks.report ? ranks.report.ranks.length : 0,
        digested_ms: Math.round(ranks.timings.digestedMs),
        ready_ms: Math.round(ranks.timings.readyMs),
        timelines: kept.length,
        wasm_heap_per_timeline_mb: kept.length ? +(kept.reduce((a, t) => a + t.heapBytes, 0) / kept.length / 1e6).toFixed(1) : 0,
        digest_kb_per_rank: +(ranks.traces.reduce((a, t) => a + (t.digest ? t.digest.length : 0), 0) / ranks.traces.length / 1e3).toFixed(1),
      };
    });
    const open = treeRss(process.pid);
    const mb = files.reduce((a, f) => a + readFileSync(f).length, 0) / 1e6;
    return {
      job: dir,
      files: files.length,
      total_mb: +mb.toFixed(1),
      cores: cpus().length,
      ...r,
      chromium_rss_mb: +(open / 1e6).toFixed(0),
      chromium_rss_added_per_rank_mb: +((open - idle) / 1e6 / files.length).toFixed(1),
    };
  } finally {
    await page.close();
  }
}

const dirs = process.argv.slice(2);
if (!dirs.length) {
  console.error("usage: node bench/ranks-page.mjs JOB_DIR...");
  process.exit(2);
}
const ctx = await start();
try {
  for (const d of dirs) console.log(JSON.stringify(await measureJob(ctx, d)));
} finally {
  await ctx.browser.close();
  await ctx.server.close();
}
