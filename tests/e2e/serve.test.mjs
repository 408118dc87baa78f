// End-to-end tests of `sightline serve LOGDIR` (src/cli/serve/) and its start screen
// (www/js/logdir.js): the real binary serves dist/ and a copy of tests/fixtures/logdir on a free
// port of 127.0.0.1; the page lists the runs, workers and spans, opens a worker, a run as one job
// (the ranks view) and two runs side by side, and shows a file written after it started.
// The binary is $SIGHTLINE_BIN, else target/debug/sightline, else target/release/sightline
// (`cargo build` or `cargo test` makes the first).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const distDir = resolve(root, process.env.SIGHTLINE_DIST || "dist");
/** A file name that is HTML if anything treats it as such. */
const HOSTILE = "<img src=x onerror=alert(1)>_1";

function binary() {
  const candidates = [process.env.SIGHTLINE_BIN, join(root, "target/debug/sightline"), join(root, "target/release/sightline")];
  const found = candidates.find((c) => c && existsSync(c));
  if (!found) throw new Error("no sightline binary: run `cargo build` first (or set SIGHTLINE_BIN)");
  return found;
}

/** Starts `sightline serve` on a copy of the fixture logdir; resolves to { url, logdir, stop() }. */
async function serve(prepare = null) {
  const logdir = mkdtempSync(join(tmpdir(), "sightline-e2e-logdir-"));
  cpSync(join(root, "tests/fixtures/logdir"), logdir, { recursive: true });
  if (prepare) prepare(logdir);
  copyFileSync(join(logdir, "cnn/vm_23924.1790857300789.pt.trace.json.gz"), join(logdir, "cnn", `${HOSTILE}.1790857400000.pt.trace.json.gz`));
  const child = spawn(binary(), ["serve", logdir, "--port", "0"], {
    env: { ...process.env, SIGHTLINE_DIST: distDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let said = "";
  const stop = () => {
    child.kill();
    rmSync(logdir, { recursive: true, force: true });
  };
  const url = await new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL in 10 s:\n${said}`)), 10000);
    child.stdout.on("data", (d) => {
      said += d;
      const m = said.match(/http:\/\/127\.0\.0\.1:\d+\//);
      // The last line of what it says on starting.
      if (m && said.includes("Ctrl-C")) {
        clearTimeout(timer);
        resolvePromise(m[0]);
      }
    });
    child.stderr.on("data", (d) => (said += d));
    child.on("exit", (code) => reject(new Error(`serve exited (${code}):\n${said}`)));
  }).catch((err) => {
    stop();
    throw err;
  });
  if (!/Bound to 127\.0\.0\.1 only/.test(said)) {
    stop();
    assert.fail(`serve did not say it is bound to 127.0.0.1 only:\n${said}`);
  }
  return { url, logdir, stop };
}

async function startScreen(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
  await page.waitForFunction(() => document.getElementById("logdir")?.dataset.state === "ready", null, { timeout: 15000 });
}

const rowsOf = (page, run) =>
  page.$$eval(`.logdir-run[data-run="${run}"] tbody tr`, (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));

export async function serveListsTheRunsAndOpensAWorker({ page, screenshot }) {
  const s = await serve();
  try {
    await startScreen(page, s.url);
    assert.deepEqual(await page.$$eval(".logdir-run", (b) => b.map((x) => x.dataset.run)), ["cnn", "gloo4"]);
    await screenshot("serve-start");

    // cnn: the hostile name as text, one worker with two spans, another; no rank.
    const cnn = await rowsOf(page, "cnn");
    assert.deepEqual(
      cnn.map((r) => r[0]),
      [HOSTILE, "vm_14499", "", "vm_23924"],
    );
    assert.deepEqual(cnn.map((r) => r[2]), ["–", "–", "–", "–"]);
    assert.equal(cnn[1][3], "95.8 kB");
    assert.equal(await page.locator("#logdir img").count(), 0);
    // gloo4: four workers, ranks 0..3 from their headers.
    assert.deepEqual((await rowsOf(page, "gloo4")).map((r) => r[2]), ["0", "1", "2", "3"]);

    // A file written now appears without a reload.
    copyFileSync(join(s.logdir, "cnn/vm_23924.1790857300789.pt.trace.json.gz"), join(s.logdir, "cnn/vm_23924.1790857999999.pt.trace.json.gz"));
    await page.waitForFunction(() => document.querySelectorAll('.logdir-run[data-run="cnn"] tbody tr').length === 5, null, { timeout: 15000 });

    // Open the worker with the hostile name: its URL is encoded, its bytes are the file's.
    await page.click(`.logdir-run[data-run="cnn"] tr[data-path^="cnn/<img"] a.logdir-open`);
    await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state), null, { timeout: 60000 });
    assert.equal(await page.evaluate(() => document.body.dataset.state), "ready", await page.textContent("#error"));
    assert.equal(await page.textContent("#file-name"), `${HOSTILE}.1790857400000.pt.trace.json.gz`);
    assert.equal(await page.locator("img").count(), 0);

    // Back on the start screen.
    await page.goBack();
    await page.waitForFunction(() => document.getElementById("logdir")?.dataset.state === "ready", null, { timeout: 15000 });
  } finally {
    s.stop();
  }
}

export async function serveOpensARunAsOneJob({ page }) {
  const s = await serve();
  try {
    await startScreen(page, s.url);
    await page.click('.logdir-run[data-run="gloo4"] .logdir-open-run');
    await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.ranks), null, { timeout: 90000 });
    assert.equal(await page.evaluate(() => document.body.dataset.ranks), "ready", await page.textContent("#ranks-summary"));
    assert.equal(await page.evaluate(() => document.body.dataset.state), "ranks");
    assert.match(await page.textContent("#ranks-title"), /^4 of 4 ranks/);
    assert.deepEqual(await page.$$eval("#ranks-bands .rank-band", (b) => b.map((x) => x.dataset.rank)), ["0", "1", "2", "3"]);
  } finally {
    s.stop();
  }
}

export async function serveComparesTwoRuns({ page }) {
  const s = await serve();
  try {
    await startScreen(page, s.url);
    await page.selectOption("#logdir-before", { label: "gloo4" });
    await page.selectOption("#logdir-after", { label: "cnn" });
    // gloo4 stands for its rank 0; cnn (no ranks) for its first worker's latest span.
    assert.equal(
      await page.textContent(".logdir-compare .muted"),
      `vm_23798.1790857400110.pt.trace.json.gz with ${HOSTILE}.1790857400000.pt.trace.json.gz`,
    );
    await page.click("#logdir-compare");
    await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state), null, { timeout: 60000 });
    assert.equal(await page.evaluate(() => document.body.dataset.state), "ready", await page.textContent("#error"));
    await page.waitForFunction(() => ["ready", "error"].includes(document.getElementById("compare").dataset.state), null, { timeout: 60000 });
    assert.equal(await page.evaluate(() => document.getElementById("compare").dataset.state), "ready", await page.textContent("#compare-headline"));
    assert.equal(await page.textContent("#file-name"), "vm_23798.1790857400110.pt.trace.json.gz");
  } finally {
    s.stop();
  }
}

export async function serveReadsARunsGraphCapturesForItsReplay({ page }) {
  // TraceLens' layout: a run's replay trace, and its captures in capture_traces/ beside it. One
  // capture there is not one (a copy of the replay): it is passed over.
  const graphs = join(root, "tests/fixtures/graphs");
  const s = await serve((logdir) => {
    mkdirSync(join(logdir, "sglang", "capture_traces"), { recursive: true });
    copyFileSync(join(graphs, "sglang_decode.replay.json.gz"), join(logdir, "sglang", "sglang_Qwen3-8B_decode.json.gz"));
    copyFileSync(join(graphs, "sglang_decode.replay.json.gz"), join(logdir, "sglang", "capture_traces", "bs_1_rank0.json.gz"));
    copyFileSync(join(graphs, "sglang_decode.capture.json.gz"), join(logdir, "sglang", "capture_traces", "bs_32_rank0.json.gz"));
  });
  try {
    await startScreen(page, s.url);
    // The captures belong to the run, not a run of their own.
    assert.deepEqual(await page.$$eval(".logdir-run", (b) => b.map((x) => x.dataset.run)), ["cnn", "gloo4", "sglang"]);
    assert.match(await page.textContent('.logdir-run[data-run="sglang"] .logdir-run-head'), /1 worker, 1 file, .*2 graph captures \(capture_traces\/\)/);
    await page.click('.logdir-run[data-run="sglang"] a.logdir-open');
    await page.waitForSelector('#tabs button:text-is("Graphs")', { timeout: 30000 });
    await page.click('#tabs button:text-is("Graphs")');
    await page.waitForFunction(() => /The capture bs_32_rank0\.json\.gz \(1 captures, \d+ dispatches\) names 544 of 544/.test(document.querySelector("#tab-body")?.textContent || ""), null, { timeout: 30000 });
    await page.click('#tabs button:text-is("Operators")');
    await page.waitForFunction(() => document.querySelector("#ops-table tbody tr td")?.textContent === "aten::mm");
  } finally {
    s.stop();
  }
}
