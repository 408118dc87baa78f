// Helpers for the end-to-end browser tests (see run.mjs).
//
// - startStaticServer: a tiny static file server for dist/ on 127.0.0.1, under
//   an optional subpath, so the tests prove the page only uses relative URLs.
// - launchBrowser: Debian's headless chromium through playwright-core.
// - createTestContext: a fresh browser context + page for one test, with a
//   guard that blocks and records any request leaving 127.0.0.1, and with
//   console errors, page errors and failed/HTTP-error requests collected.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createReadStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";

export const LOCAL_HOST = "127.0.0.1";

export const CHROMIUM_PATH = process.env.CHROMIUM || "/usr/bin/chromium";

// Flags for chromium as root in a headless, offline-friendly run. playwright adds
// --headless itself and always starts chromium with a fresh temporary
// --user-data-dir (it refuses one in `args`), removed when the browser closes.
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

const CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".gz": "application/gzip",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json",
};

/**
 * Serve `root` read-only on 127.0.0.1 at a random free port, under `prefix`
 * (e.g. "/docs/sightline/"). Anything outside the prefix is a 404.
 * Returns { baseUrl, port, close() }.
 */
export async function startStaticServer({ root, prefix = "/" }) {
  if (!prefix.startsWith("/") || !prefix.endsWith("/")) {
    throw new Error(`prefix must start and end with "/": ${prefix}`);
  }
  const rootDir = resolve(root);
  const server = createServer(async (req, res) => {
    try {
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { Allow: "GET, HEAD" }).end();
        return;
      }
      const url = new URL(req.url, `http://${LOCAL_HOST}`);
      const path = decodeURIComponent(url.pathname);
      if (path === prefix.slice(0, -1)) {
        res.writeHead(301, { Location: prefix + url.search }).end();
        return;
      }
      if (!path.startsWith(prefix)) {
        res.writeHead(404).end("not found");
        return;
      }
      let file = normalize(join(rootDir, path.slice(prefix.length)));
      if (file !== rootDir && !file.startsWith(rootDir + sep)) {
        res.writeHead(403).end("forbidden");
        return;
      }
      let info = await stat(file).catch(() => null);
      if (info && info.isDirectory()) {
        file = join(file, "index.html");
        info = await stat(file).catch(() => null);
      }
      if (!info || !info.isFile()) {
        res.writeHead(404).end("not found");
        return;
      }
      res.writeHead(200, {
        "Content-Type": CONTENT_TYPES[extname(file)] || "application/octet-stream",
        "Content-Length": info.size,
        "Cache-Control": "no-store",
      });
      if (req.method === "HEAD") {
        res.end();
        return;
      }
      createReadStream(file).pipe(res);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(0, LOCAL_HOST, ok);
  });
  const { port } = server.address();
  return {
    port,
    baseUrl: `http://${LOCAL_HOST}:${port}${prefix}`,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections?.();
        server.close(() => ok());
      }),
  };
}

/** Launch headless Debian chromium through playwright-core; `more`: further launch options (a logger, say). */
export async function launchBrowser(more = {}) {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    ...more,
  });
}

/** True for URLs the page may load: same machine (127.0.0.1) or inline data. */
export function isLocalUrl(raw) {
  let url;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol === "data:" || url.protocol === "blob:" || url.protocol === "about:") {
    return true;
  }
  return ["http:", "https:", "ws:", "wss:"].includes(url.protocol) && url.hostname === LOCAL_HOST;
}

/**
 * Opens the trace at `path` through the page's file input (navigating to `baseUrl` first unless the
 * page is there) and waits until it is shown; with `analyses`, also until its analyses are ready.
 */
export async function openTrace(page, baseUrl, path, { analyses = false } = {}) {
  if (!page.url().startsWith(baseUrl)) await page.goto(baseUrl);
  // A file set before the page is ready waits for it (starting.js); waiting here first keeps the
  // load's timings the load's own.
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
  await page.setInputFiles("#file-input", path);
  await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), "ready");
  if (analyses) await page.waitForFunction(() => document.body.dataset.analyses === "ready", null, { timeout: 60000 });
}

/**
 * A fresh context and page for one test. The returned object is what test
 * functions receive, plus `problems()` for the runner.
 */
export async function createTestContext(browser, { baseUrl, otherBaseUrl, fixturesDir, samplesDir, screenshotDir, testId }) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();

  const requests = [];
  const blocked = new Set();
  const consoleErrors = [];
  const pageErrors = [];
  const failedRequests = [];
  const httpErrors = [];
  const ignored = { console: [], pageerror: [], http: [] };

  // Every request goes through this route: local ones continue, anything else
  // is aborted (so nothing leaves the machine) and recorded as a failure.
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (isLocalUrl(url)) return route.continue();
    blocked.add(url);
    return route.abort("blockedbyclient");
  });
  page.on("request", (req) => {
    requests.push({ method: req.method(), url: req.url(), type: req.resourceType() });
    if (!isLocalUrl(req.url())) blocked.add(req.url());
  });
  page.on("websocket", (ws) => {
    requests.push({ method: "WS", url: ws.url(), type: "websocket" });
    if (!isLocalUrl(ws.url())) blocked.add(ws.url());
  });
  page.on("console", (msg) => {
    if (msg.type() === "error") {
      const loc = msg.location();
      consoleErrors.push(`${msg.text()}${loc && loc.url ? ` (${loc.url}:${loc.lineNumber})` : ""}`);
    }
  });
  page.on("pageerror", (err) => pageErrors.push(err.stack || String(err)));
  page.on("requestfailed", (req) => {
    if (isLocalUrl(req.url())) {
      failedRequests.push(`${req.method()} ${req.url()}: ${req.failure()?.errorText}`);
    }
  });
  page.on("response", (resp) => {
    if (resp.status() >= 400) httpErrors.push(`${resp.status()} ${resp.request().method()} ${resp.url()}`);
  });

  let shots = 0;
  const ctx = {
    page,
    context,
    baseUrl,
    /** Another origin (a second port of 127.0.0.1) serving tests/e2e/pages/. */
    otherBaseUrl,
    fixturesDir,
    samplesDir,
    /** Every request the page made so far: {method, url, type}. */
    requests,
    /** Save a full-page screenshot as target/e2e/<name>.png; returns its path. */
    async screenshot(name) {
      shots += 1;
      const safe = String(name || `${testId}-${shots}`).replace(/[^A-Za-z0-9._-]+/g, "_");
      await mkdir(screenshotDir, { recursive: true });
      const path = join(screenshotDir, `${safe}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    /**
     * Accept problems this test provokes on purpose:
     * kind is "console", "pageerror" or "http"; pattern a RegExp.
     */
    ignore(kind, pattern) {
      if (!ignored[kind]) throw new Error(`unknown kind to ignore: ${kind}`);
      ignored[kind].push(pattern);
    },
    /** Failures the runner reports after the test body returns. */
    problems() {
      const keep = (list, kind) => list.filter((text) => !ignored[kind].some((re) => re.test(text)));
      const out = [];
      for (const url of blocked) out.push(`request to a host other than ${LOCAL_HOST} (blocked): ${url}`);
      for (const text of keep(consoleErrors, "console")) out.push(`console error: ${text}`);
      for (const text of keep(pageErrors, "pageerror")) out.push(`page error: ${text}`);
      for (const text of keep(httpErrors, "http")) out.push(`HTTP error: ${text}`);
      for (const text of keep(failedRequests, "http")) out.push(`request failed: ${text}`);
      return out;
    },
  };
  return ctx;
}
