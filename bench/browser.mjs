#!/usr/bin/env node
// The browser part of bench/run: Sightline's page in headless Chromium on each FILE, --runs times
// (median), through bench/viewer.mjs. Prints {"sightline": [...], "speedscope": [...]} as bench.py
// reads it.
//
// sightline: file, mb, ready_s (file chosen to every table ready), drawn_s (to the timeline drawn),
// longest_task_ms (the page thread's longest task during the load), js_heap and wasm_memory (bytes),
// held (the most memory held at once: JS heap plus every worker's wasm memory, parse workers and
// their part buffers in transit included), frame_idle_p50/p95 (zoomed out), frame_zoom_p50/p95
// (zooming and panning) and frame_busy_p50/p95 (frames drawn while the background analyses run),
// in ms, and drag_fps (frames painted per second while dragged zoomed out).
//
// speedscope: when node_modules/speedscope is installed (bench/run installs it) and the smallest
// FILE is at most 100 MB. speedscope rejects Kineto traces for the one span whose pid/tid are
// strings ("Spans"/"PyTorch Profiler"), so it gets a copy under bench-out/ with every string
// pid/tid made a number (written line by line). Its own dist/release/ is served on 127.0.0.1 and
// the copy chosen through its file input; ready_s runs from the input's change event to the page
// title naming the file with the flame chart canvases laid out, plus two animation frames (it draws
// them in one). Sightline opens the same copy in the same runs, alternating with speedscope, for
// sightline_ready_s and ratio (speedscope / Sightline). One entry: version, file, mb, ready_s,
// sightline_ready_s, ratio, runs, ids_made_numbers, blocked (requests that would have left
// 127.0.0.1: none is let through), note.
//
//   node bench/browser.mjs [--runs N] [--no-speedscope] FILE...

import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import { isLocalUrl, startStaticServer } from "../tests/e2e/lib.mjs";
import { measure, root, start } from "./viewer.mjs";

const args = process.argv.slice(2);
let runs = 1;
const at = args.indexOf("--runs");
if (at >= 0) runs = Math.max(1, Number(args.splice(at, 2)[1]) || 1);
const noSpeedscope = args.indexOf("--no-speedscope");
if (noSpeedscope >= 0) args.splice(noSpeedscope, 1);
/**
 * The most memory one load held at once: the session worker's wasm memory at the end, or, when
 * parse workers ran, their wasm memory at its peak with the part buffers in transit and the session
 * worker's memory at that moment, whichever is more; plus the page's JS heap.
 */
function heldAtOnce(r) {
  const helpers = r.helpers || [];
  const atHandOver = helpers.reduce((sum, h) => sum + h.wasm_memory_bytes + h.part_bytes, 0) + Math.max(0, ...helpers.map((h) => h.loading_wasm_memory_bytes));
  return Math.max(r.wasm_memory_bytes, atHandOver) + r.peak_js_heap_bytes;
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const SPEEDSCOPE = join(root, "node_modules", "speedscope");
const SPEEDSCOPE_MAX_BYTES = 100e6;
// speedscope needed ~17 s for the 56 MB trace and 18 minutes for a 323 MB one on a 2-core machine.
const SPEEDSCOPE_TIMEOUT_MS = 600000;

/**
 * Copies trace `src` (JSON, or gzipped JSON) to `dst` with every string "pid"/"tid" value made a
 * number (one number per distinct string, from 900000000 up), line by line. Reuses `dst` when it is
 * newer than `src`. Returns how many values it changed, or null when the copy would pass `maxBytes`.
 */
async function numericIds(src, dst, maxBytes) {
  const stamp = dst + ".ids";
  if (existsSync(dst) && existsSync(stamp) && statSync(dst).mtimeMs >= statSync(src).mtimeMs) {
    return Number(readFileSync(stamp, "utf8"));
  }
  if (!src.endsWith(".gz") && statSync(src).size > maxBytes) return null;
  const tmp = dst + ".tmp";
  let input = createReadStream(src);
  if (src.endsWith(".gz")) input = input.pipe(createGunzip());
  const out = createWriteStream(tmp);
  const ids = new Map();
  let changed = 0;
  let bytes = 0;
  // A string value of a "pid" or "tid" key (not one inside another string: no backslash before it).
  const re = /(?<!\\)("[pt]id"\s*:\s*)"((?:[^"\\]|\\.)*)"/g;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    const fixed = line.replace(re, (_, key, s) => {
      if (!ids.has(s)) ids.set(s, 900000000 + ids.size);
      changed += 1;
      return key + ids.get(s);
    });
    bytes += fixed.length + 1;
    if (bytes > maxBytes) {
      input.destroy();
      out.destroy();
      return null;
    }
    if (!out.write(fixed + "\n")) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  renameSync(tmp, dst);
  writeFileSync(stamp, String(changed));
  return changed;
}

/** One speedscope load of `trace` in a fresh context; returns { ms, blocked }. */
async function speedscopeOnce(browser, baseUrl, trace) {
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const blocked = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (isLocalUrl(url)) return route.continue();
    blocked.push(url);
    return route.abort("blockedbyclient");
  });
  try {
    const page = await context.newPage();
    // speedscope reports a file it cannot import with alert(); a load that fails, with its error view.
    const failed = new Promise((_, fail) => {
      page.on("dialog", (d) => {
        d.dismiss().catch(() => {});
        fail(new Error(`speedscope: ${d.message()}`));
      });
      page.on("pageerror", (e) => fail(new Error(`speedscope page error: ${e.message}`)));
    });
    const said = [];
    page.on("console", (m) => said.push(m.text().split("\n")[0]));
    failed.catch(() => {});
    await page.goto(baseUrl);
    await page.waitForSelector("input[type=file]", { state: "attached" });
    await page.evaluate(() => {
      document.addEventListener("change", () => (window.__chosen = performance.now()), true);
    });
    const drawn = page.evaluate(
      () =>
        new Promise((done, fail) => {
          const tick = () => {
            if (window.__chosen !== undefined) {
              if (document.body.textContent.includes("Something went wrong")) return fail(new Error("speedscope: its error view"));
              // The first canvas is the page-wide WebGL one; the flame chart adds its own.
              const canvases = [...document.querySelectorAll("canvas")].slice(1);
              if (
                document.title.endsWith(" - speedscope") &&
                canvases.length > 0 &&
                canvases.every((c) => c.width > 0 && c.height > 0 && c.getBoundingClientRect().height > 0)
              ) {
                return requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - window.__chosen)));
              }
            }
            requestAnimationFrame(tick);
          };
          tick();
        }),
    );
    drawn.catch(() => {});
    let timer;
    const timeout = new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`speedscope: not drawn after ${SPEEDSCOPE_TIMEOUT_MS / 1000} s`)), SPEEDSCOPE_TIMEOUT_MS);
    });
    try {
      await page.setInputFiles("input[type=file]", trace);
      const ms = await Promise.race([drawn, failed, timeout]).catch((err) => {
        throw new Error(`${err.message}; its console: ${said.slice(-3).join(" | ")}`);
      });
      return { ms, blocked };
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await context.close();
  }
}

/** speedscope and Sightline on a numeric-id copy of `file`, alternating; an entry or null. */
async function speedscope(env, file) {
  const version = JSON.parse(readFileSync(join(SPEEDSCOPE, "package.json"), "utf8")).version;
  const out = join(root, "bench-out");
  mkdirSync(out, { recursive: true });
  // Not *.speedscope.json: speedscope picks its importer by the name, and that one is its own format.
  const copy = join(out, basename(file).replace(/\.json(\.gz)?$|\.gz$/, "") + ".numeric-ids.json");
  process.stderr.write(`browser: speedscope ${version}: a copy of ${basename(file)} with numeric pid/tid\n`);
  const changed = await numericIds(file, copy, SPEEDSCOPE_MAX_BYTES);
  if (changed === null) {
    process.stderr.write(`browser: ${basename(file)} is over ${SPEEDSCOPE_MAX_BYTES / 1e6} MB of JSON; speedscope skipped\n`);
    return null;
  }
  const server = await startStaticServer({ root: join(SPEEDSCOPE, "dist", "release"), prefix: "/" });
  try {
    const theirs = [];
    const ours = [];
    const blocked = new Set();
    for (let i = 0; i < runs; i++) {
      process.stderr.write(`browser: speedscope on ${basename(copy)} run ${i + 1}/${runs}\n`);
      const r = await speedscopeOnce(env.browser, server.baseUrl, copy);
      theirs.push(r.ms / 1000);
      r.blocked.forEach((u) => blocked.add(u));
      process.stderr.write(`browser: Sightline on ${basename(copy)} run ${i + 1}/${runs}\n`);
      ours.push((await measure(env, copy, 10)).timings.analysedMs / 1000);
    }
    const ready = median(theirs);
    const mine = median(ours);
    return {
      version,
      file: basename(copy),
      mb: statSync(copy).size / 1e6,
      ready_s: ready,
      sightline_ready_s: mine,
      ratio: ready / mine,
      runs,
      ids_made_numbers: changed,
      blocked: [...blocked],
      note:
        `a copy of ${basename(file)} with its ${changed} string pid/tid values made numbers; ` +
        `change event of its file input to the title naming the file with the flame chart canvases laid out, ` +
        `plus two frames; WebGL on SwiftShader; median of ${runs}; ` +
        (blocked.size ? `${blocked.size} request(s) off 127.0.0.1 blocked` : "no request left 127.0.0.1"),
    };
  } finally {
    await server.close();
  }
}

const env = await start();
const sightline = [];
const peers = [];
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
      // File chosen to every analysis and table ready; drawn_s to the timeline drawn.
      ready_s: pick((r) => r.timings.analysedMs) / 1000,
      drawn_s: pick((r) => r.timings.readyMs) / 1000,
      longest_task_ms: pick((r) => r.longest_main_thread_task_ms),
      js_heap: pick((r) => r.peak_js_heap_bytes),
      wasm_memory: pick((r) => r.wasm_memory_bytes),
      frame_idle_p50: pick((r) => r.zoomed_out.median_ms),
      frame_idle_p95: pick((r) => r.zoomed_out.p95_ms),
      frame_zoom_p50: pick((r) => r.zooming.median_ms),
      frame_zoom_p95: pick((r) => r.zooming.p95_ms),
      frame_busy_p50: pick((r) => (r.frames_during_analysis ? r.frames_during_analysis.median_ms : 0)),
      frame_busy_p95: pick((r) => (r.frames_during_analysis ? r.frames_during_analysis.p95_ms : 0)),
      drag_fps: pick((r) => r.zoomed_out_dragging.painted_per_s),
      held: pick(heldAtOnce),
    });
  }
  if (noSpeedscope < 0 && args.length > 0) {
    if (!existsSync(join(SPEEDSCOPE, "dist", "release", "index.html"))) {
      process.stderr.write("browser: no node_modules/speedscope (npm install --no-save speedscope); speedscope skipped\n");
    } else {
      const smallest = args.reduce((a, b) => (statSync(b).size < statSync(a).size ? b : a));
      try {
        const entry = await speedscope(env, smallest);
        if (entry) peers.push(entry);
      } catch (err) {
        process.stderr.write(`browser: speedscope failed: ${err.stack || err}\n`);
      }
    }
  }
} finally {
  await env.browser.close();
  await env.server.close();
}
console.log(JSON.stringify({ sightline, speedscope: peers }, null, 1));
