// The first trace a fresh page opens, from two builds of the page side by side: each run opens a
// new page of one build, waits 2 s after it is ready (a person choosing a file), opens FILE and
// records the time to the timeline drawn (`readMs + finishMs`) and to every analysis
// (`analyseMs`), alternating the builds run by run. A fresh page matters: the browser optimizes
// the module's code as it runs, so a page's first trace is read by less optimized code than later
// ones (src/web/warm.rs).
//
//   node bench/first-open.mjs DIST_A DIST_B FILE [RUNS]
//
// DIST_*: `trunk build --release` outputs (dist/, or another build's, e.g. a worktree's
// `trunk build --release --dist /tmp/dist-base`). Prints one JSON object: per build, a
// [drawn_ms, analysed_ms] pair per run.

import { resolve } from "node:path";
import { launchBrowser, startStaticServer } from "../tests/e2e/lib.mjs";

const [a, b, file, runsArg] = process.argv.slice(2);
if (!file) throw new Error("usage: node bench/first-open.mjs DIST_A DIST_B FILE [RUNS]");
const runs = Number(runsArg || 4);
const browser = await launchBrowser();
const builds = { [a]: await startStaticServer({ root: resolve(a), prefix: "/" }), [b]: await startStaticServer({ root: resolve(b), prefix: "/" }) };
const out = { file, [a]: [], [b]: [] };
try {
  for (let r = 0; r < runs; r++) {
    for (const dist of [a, b]) {
      const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
      await page.goto(builds[dist].baseUrl);
      await page.waitForFunction(() => window.sightlineReady === true);
      await page.waitForTimeout(2000);
      await page.setInputFiles("#file-input", file);
      await page.waitForFunction(() => window.sightline.app.timings && document.body.dataset.analyses === "ready", null, { timeout: 600000 });
      const t = await page.evaluate(() => window.sightline.app.timings);
      out[dist].push([Math.round(t.readMs + t.finishMs), Math.round(t.analyseMs)]);
      await page.close();
    }
  }
} finally {
  await browser.close();
  for (const s of Object.values(builds)) s.close();
}
console.log(JSON.stringify(out));
