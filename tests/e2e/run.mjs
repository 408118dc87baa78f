#!/usr/bin/env node
// End-to-end browser tests for the built viewer (dist/, from `trunk build`).
//
//   node tests/e2e/run.mjs [FILTER...]
//
// Serves dist/ on 127.0.0.1 (random port) under a subpath, launches headless
// Debian chromium via playwright-core, and runs every exported async function
// of every tests/e2e/*.test.mjs file (names starting with "_" are skipped).
// Each test gets a fresh browser context and one argument:
//   { page, context, baseUrl, otherBaseUrl, fixturesDir, samplesDir, requests, screenshot(name),
//     ignore(kind, re) }
// otherBaseUrl serves tests/e2e/pages/ from a second port of 127.0.0.1: another origin, for pages
// that embed the viewer the way another site would.
// A test fails if it throws, times out, or if the page made a request to a host
// other than 127.0.0.1, logged a console error, threw a page error, or got an
// HTTP error / failed request. Screenshots go to target/e2e/.
//
// FILTER arguments keep only tests whose "file › name" contains one of them.
// Environment: SIGHTLINE_DIST (default dist), SIGHTLINE_BASE_PATH (default
// /docs/sightline/), SIGHTLINE_FIXTURES (default: the nearest shared/fixtures above the checkout),
// E2E_TIMEOUT_MS (per test, default 60000), CHROMIUM (default /usr/bin/chromium), E2E_JOBS (tests
// run at once, each in its own browser context of the one chromium; default 2).

import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createTestContext, launchBrowser, startStaticServer } from "./lib.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const distDir = resolve(root, process.env.SIGHTLINE_DIST || "dist");
const basePath = process.env.SIGHTLINE_BASE_PATH || "/docs/sightline/";
// Real traces: $SIGHTLINE_FIXTURES, else the nearest shared/fixtures above the
// checkout (as tests/common/mod.rs finds them); null when there is none.
function findFixtures() {
  if (process.env.SIGHTLINE_FIXTURES) return resolve(process.env.SIGHTLINE_FIXTURES);
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "shared", "fixtures"))) return join(dir, "shared", "fixtures");
    if (dirname(dir) === dir) return null;
  }
}
const fixturesDir = findFixtures();
const samplesDir = join(root, "www", "samples");
const screenshotDir = join(root, "target", "e2e");
const timeoutMs = Number(process.env.E2E_TIMEOUT_MS || 60000);
const filters = process.argv.slice(2);

function fail(message) {
  console.error(`e2e: ${message}`);
  process.exit(1);
}

if (!existsSync(join(distDir, "index.html"))) {
  fail(`${distDir}/index.html not found; build the page first (trunk build --release)`);
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Collect tests: files sorted by name, then each module's exports (alphabetical).
const files = readdirSync(here)
  .filter((name) => name.endsWith(".test.mjs"))
  .sort();
const tests = [];
for (const file of files) {
  const mod = await import(pathToFileURL(join(here, file)).href);
  for (const [name, fn] of Object.entries(mod)) {
    if (typeof fn !== "function" || name.startsWith("_")) continue;
    const id = `${file.replace(/\.test\.mjs$/, "")} › ${name}`;
    if (filters.length && !filters.some((f) => id.includes(f))) continue;
    tests.push({ id, file, name, fn });
  }
}
if (tests.length === 0) fail(`no tests found in ${here}/*.test.mjs${filters.length ? ` matching ${filters.join(", ")}` : ""}`);

const server = await startStaticServer({ root: distDir, prefix: basePath });
const otherServer = await startStaticServer({ root: join(here, "pages"), prefix: "/" });
let browser;
try {
  browser = await launchBrowser();
} catch (err) {
  await server.close();
  await otherServer.close();
  fail(`could not launch chromium: ${err.message}`);
}
console.log(`e2e: serving ${distDir} at ${server.baseUrl}; chromium ${browser.version()}; ${tests.length} test(s)`);

// Tests run E2E_JOBS at a time (scripts/test's time budget), each in a browser context of its own:
// they share only the browser process and the two static servers.
const jobs = Math.max(1, Number(process.env.E2E_JOBS || 2));
const failures = [];
const queue = [...tests];
async function worker() {
  for (let test = queue.shift(); test; test = queue.shift()) await runTest(test);
}
await Promise.all(Array.from({ length: Math.min(jobs, tests.length) }, worker));

async function runTest(test) {
  const started = Date.now();
  const testId = `${test.file.replace(/\.test\.mjs$/, "")}-${test.name}`;
  let ctx;
  const errors = [];
  try {
    ctx = await createTestContext(browser, {
      baseUrl: server.baseUrl,
      otherBaseUrl: otherServer.baseUrl,
      fixturesDir,
      samplesDir,
      screenshotDir,
      testId,
    });
    await withTimeout(Promise.resolve().then(() => test.fn(ctx)), timeoutMs, test.id);
  } catch (err) {
    errors.push(err && err.stack ? err.stack : String(err));
  }
  if (ctx) {
    // Let late console messages and requests arrive before judging.
    await ctx.page.waitForTimeout(100).catch(() => {});
    errors.push(...ctx.problems());
    if (errors.length) {
      const shot = await ctx.screenshot(`${testId}-FAILED`).catch(() => null);
      if (shot) errors.push(`screenshot: ${shot}`);
    }
    await ctx.context.close().catch(() => {});
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (errors.length) {
    failures.push(test.id);
    console.log(`FAIL ${test.id} (${secs}s)`);
    for (const e of errors) console.log(`     ${String(e).replace(/\n/g, "\n     ")}`);
  } else {
    console.log(`ok   ${test.id} (${secs}s)`);
  }
}

await browser.close().catch(() => {});
await server.close();
await otherServer.close();

if (failures.length) {
  console.log(`e2e: ${failures.length} of ${tests.length} failed: ${failures.join(", ")}`);
  process.exit(1);
}
console.log(`e2e: all ${tests.length} passed`);
