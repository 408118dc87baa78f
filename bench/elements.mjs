#!/usr/bin/env node
// What one Web Worker per <sightline-trace> element costs, to weigh it against a shared pool of
// workers: a page on the viewer's origin with N elements of the bundled sample (N = 1, 2, 4, 8),
// time from the page's start to every element drawn (`state="ready"`), and the wasm memory of each
// element's worker. A pool would save the workers' start and fixed memory; the per-worker figures
// below are what it could save at most.
//
//   node bench/elements.mjs
//
// Prints one JSON object: for each N, all_ready_ms, and per element its worker's wasm memory.

import { pathToFileURL } from "node:url";
import { start } from "./viewer.mjs";

const SAMPLE = "samples/tracelens_h100_bert_small_stack_mem.json.gz";

export async function elements({ browser, server }, counts = [1, 2, 4, 8]) {
  const out = [];
  for (const n of counts) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      const body = `<!doctype html><meta charset="utf-8"><script type="module" src="js/sightline-trace.js"></script>` +
        Array.from({ length: n }, () => `<sightline-trace src="${SAMPLE}" height="200"></sightline-trace>`).join("");
      await page.route("**/bench-elements.html", (route) => route.fulfill({ contentType: "text/html", body }));
      await page.goto(new URL("bench-elements.html", server.baseUrl).href);
      await page.waitForFunction((n) => {
        const els = [...document.querySelectorAll("sightline-trace")];
        return els.length === n && els.every((e) => ["ready", "error"].includes(e.getAttribute("state")));
      }, n, { timeout: 120000 });
      const r = await page.evaluate(async () => {
        const els = [...document.querySelectorAll("sightline-trace")];
        const states = els.map((e) => e.getAttribute("state"));
        const memory = await Promise.all(els.map((e) => e.worker.module.memory_bytes()));
        return { all_ready_ms: Math.round(performance.now()), states, wasm_memory_bytes: memory, js_heap_bytes: performance.memory ? performance.memory.usedJSHeapSize : null };
      });
      out.push({ elements: n, ...r });
    } finally {
      await page.close();
    }
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = await start();
  try {
    console.log(JSON.stringify(await elements(env), null, 2));
  } finally {
    await env.browser.close();
    await env.server.close();
  }
}
