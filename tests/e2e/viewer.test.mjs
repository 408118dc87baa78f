// End-to-end tests of the viewer page: opening traces (file input, drop, sample link; also one
// chosen or dropped while the page is still starting), the timeline responding to keys, wheel,
// drag and clicks (the hover tooltip going when the view moves), tables, search, range
// selection, damaged and non-trace files. The runner (run.mjs) fails any test whose page requests a host other than
// 127.0.0.1 or logs an error. Screenshots land in target/e2e/ for people to look at.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { gunzipSync } from "node:zlib";

const FIXTURES = [
  "real/tracelens_h100_bert_small_stack_mem.json.gz",
  "real/hta_a100_alexnet_cuda_sync.json.gz",
  "real/param_dlrm_v100_rank3of8.pt.trace.json.gz",
  "pytorch-cpu/cnn_dataloader_sched.pt.trace.json.gz",
  "real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz",
];

/** Waits for the trace to be shown and its analyses and first table to be in (or for an error). */
async function ready(page, timeout = 60000) {
  await page.waitForFunction(
    () => {
      const b = document.body.dataset;
      return b.state === "error" || (b.state === "ready" && b.analyses === "ready" && !document.querySelector(".analysing"));
    },
    null,
    { timeout },
  );
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state !== "ready") {
    const error = await page.evaluate(() => document.getElementById("error").textContent);
    throw new Error(`state ${state}: ${error}`);
  }
}

/**
 * The runner intercepts every request (to block other hosts), and Chromium then reports a
 * response body read as a stream as `net::ERR_ABORTED` although every byte arrived (it does not
 * without interception). The page streams `?url=` and sample traces, so tests that load one accept
 * that report for the traces under samples/ (and prove the load by waiting for `ready`).
 */
function acceptStreamedFetch(ignore) {
  ignore("http", /\/samples\/[^ ]+: net::ERR_ABORTED$/);
}

async function open(page, baseUrl) {
  await page.goto(baseUrl);
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 15000 });
}

/** The view's time window: what the last frame showed. */
function viewOf(page) {
  return page.evaluate(() => {
    const m = window.sightline.view.meta;
    return { start: m.start_ns, npp: m.ns_per_px, scroll: m.scroll_px };
  });
}

/** Waits for the frames asked for (drawn from the worker's draw lists) to have been painted. */
function painted(page) {
  return page.evaluate(async () => {
    // A frame asked for in the last animation frame is requested from the worker in the next.
    await new Promise((r) => requestAnimationFrame(r));
    await window.sightline.view.idle();
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  });
}

/** Client coordinates of the middle of a drawn slice box at least `minW` px wide. */
async function someBox(page, minW = 6) {
  return page.evaluate(async (minW) => {
    const { view } = window.sightline;
    const f = await view.session.frame();
    const r = f.rects;
    const k = view.k;
    const box = view.canvas.getBoundingClientRect();
    for (let o = 0; o < r.length; o += k.rect_stride) {
      const flags = r[o + 4] >> 8;
      if (flags & (k.flag_mark | k.flag_selected)) continue;
      const [x, y, w] = [r[o], r[o + 1], r[o + 2]];
      if (w < minW || x < 0 || y < 0 || y > box.height - 60) continue;
      return { x: box.left + 190 + x + w / 2, y: box.top + 26 + y + 8 };
    }
    return null;
  }, minW);
}

/** Zooms into the middle of the timeline until single slices show; one to click (`someBox`). */
async function zoomToASlice(page) {
  for (let i = 0; i < 12; i++) await page.keyboard.press("w");
  await painted(page);
  let target = await someBox(page);
  for (let i = 0; !target && i < 10; i++) {
    await page.keyboard.press("s");
    await painted(page);
    target = await someBox(page);
  }
  assert.ok(target, "a slice box to click");
  return target;
}

export async function opensFixturesByFileInput({ page, baseUrl, fixturesDir, screenshot }) {
  await open(page, baseUrl);
  for (const rel of FIXTURES) {
    await page.setInputFiles("#file-input", join(fixturesDir, rel));
    await ready(page);
    const info = await page.evaluate(() => ({
      name: document.getElementById("file-name").textContent,
      ops: document.querySelectorAll("#ops-table tbody tr").length,
      rects: window.sightline.view.frameTimes.length,
      timings: window.sightline.app.timings,
    }));
    assert.equal(info.name, basename(rel));
    assert.ok(info.ops > 0, `${rel}: operator rows`);
    assert.ok(info.timings.readyMs > 0);
    await painted(page);
    await screenshot(`viewer-${basename(rel).replace(/\..*$/, "")}`);
  }
}

export async function opensADroppedFile({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  const bytes = readFileSync(join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz")).toString("base64");
  await page.evaluate((b64) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bin], "dropped.json.gz"));
    for (const type of ["dragenter", "dragover", "drop"]) {
      document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, bytes);
  await ready(page);
  assert.equal(await page.textContent("#file-name"), "dropped.json.gz");
  assert.ok(await page.isHidden("#drop-overlay"));
}

/**
 * Holds the page's .wasm request until `release()`, as a slow network would: the page cannot start
 * its workers meanwhile. `requested` resolves once the page has asked for it (the page's head
 * preloads it, so this can be before the page's script runs).
 */
async function holdTheWasm(page) {
  let release;
  const released = new Promise((resolve) => (release = resolve));
  let asked;
  const requested = new Promise((resolve) => (asked = resolve));
  await page.route("**/*.wasm", async (route) => {
    asked();
    await released;
    await route.continue();
  });
  return { requested, release };
}

/** While the page starts: the progress box says so, with the name of the trace it will open. */
async function startingWith(page, name) {
  await page.waitForFunction((name) => document.body.dataset.stage === "starting" && document.getElementById("progress-name").textContent === name, name, { timeout: 5000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), "loading");
  assert.ok(await page.isVisible("#loading"));
  assert.match(await page.textContent("#progress-stage"), /^Starting/);
  assert.equal(await page.evaluate(() => window.sightlineReady), undefined, "the page is not ready yet");
}

export async function aFileChosenWhileThePageStartsOpensWhenReady({ page, baseUrl, fixturesDir }) {
  const wasm = await holdTheWasm(page);
  // DOMContentLoaded comes once the page's module script runs (it then waits for the wasm).
  await page.goto(baseUrl, { waitUntil: "domcontentloaded" });
  await wasm.requested;
  await page.setInputFiles("#file-input", join(fixturesDir, FIXTURES[0]));
  await startingWith(page, basename(FIXTURES[0]));
  // The latest choice wins.
  await page.setInputFiles("#file-input", join(fixturesDir, FIXTURES[1]));
  await startingWith(page, basename(FIXTURES[1]));
  await page.waitForTimeout(1500);
  wasm.release();
  await ready(page);
  assert.equal(await page.textContent("#file-name"), basename(FIXTURES[1]));
  assert.ok((await page.$$("#ops-table tbody tr")).length > 0, "operator rows");
  const { loads, rects } = await page.evaluate(async () => {
    const f = await window.sightline.view.session.frame();
    return { loads: window.sightline.app.loadToken, rects: f.rects.length };
  });
  assert.equal(loads, 1, "only the latest choice was read");
  assert.ok(rects > 0, "the timeline is drawn");
}

export async function aFileDroppedWhileThePageStartsOpensWhenReady({ page, baseUrl, fixturesDir }) {
  const wasm = await holdTheWasm(page);
  // DOMContentLoaded comes once the page's module script runs (it then waits for the wasm).
  await page.goto(baseUrl, { waitUntil: "domcontentloaded" });
  await wasm.requested;
  const bytes = readFileSync(join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz")).toString("base64");
  await page.evaluate((b64) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bin], "dropped-early.json.gz"));
    for (const type of ["dragenter", "dragover", "drop"]) {
      document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, bytes);
  await startingWith(page, "dropped-early.json.gz");
  await page.waitForTimeout(1500);
  wasm.release();
  await ready(page);
  assert.equal(await page.textContent("#file-name"), "dropped-early.json.gz");
  assert.ok((await page.$$("#ops-table tbody tr")).length > 0, "operator rows");
  assert.ok(await page.isHidden("#drop-overlay"));
}

export async function opensTheSampleAndNavigates({ page, baseUrl, screenshot, ignore }) {
  acceptStreamedFetch(ignore);
  await open(page, baseUrl);
  assert.equal(await page.evaluate(() => document.body.dataset.state), "empty");
  await screenshot("viewer-empty");
  await page.click("#sample-link");
  await ready(page);
  await painted(page);
  const canvas = await page.$("#timeline");
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);

  const v0 = await viewOf(page);
  await page.keyboard.press("w");
  await painted(page);
  const v1 = await viewOf(page);
  assert.ok(v1.npp < v0.npp, "W zooms in");
  await page.keyboard.press("d");
  await painted(page);
  const v2 = await viewOf(page);
  assert.ok(v2.start > v1.start, "D pans right");
  await page.keyboard.press("a");
  await painted(page);
  assert.ok((await viewOf(page)).start < v2.start, "A pans left");
  await page.keyboard.press("s");
  await painted(page);
  assert.ok((await viewOf(page)).npp > v1.npp, "S zooms out");
  await page.mouse.wheel(0, -400);
  await painted(page);
  const v3 = await viewOf(page);
  assert.ok(v3.npp < v1.npp, "wheel up zooms in");
  // Drag pans.
  await page.mouse.move(box.x + 600, box.y + 200);
  await page.mouse.down();
  await page.mouse.move(box.x + 400, box.y + 200, { steps: 5 });
  await page.mouse.up();
  await painted(page);
  assert.ok((await viewOf(page)).start > v3.start, "dragging left shows later times");
  await page.keyboard.press("0");
  await painted(page);
  const v4 = await viewOf(page);
  assert.ok(Math.abs(v4.npp - v0.npp) / v0.npp < 1e-6, "0 resets the view");

  // Zoom into the middle until single slices show, then click one.
  const target = await zoomToASlice(page);
  // Hover shows a tooltip.
  await page.mouse.move(target.x, target.y);
  await page.waitForSelector("#tooltip:not([hidden])");
  await page.mouse.click(target.x, target.y);
  await page.waitForSelector("#details .slice-name");
  const name = await page.textContent("#details .slice-name");
  assert.ok(name.length > 0);
  await page.keyboard.press("f");
  await painted(page);
  await screenshot("viewer-sample-selected");

  // Search: '/' focuses it, Enter selects a match and shows it.
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "search");
  await page.keyboard.type("aten::");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => /match/.test(document.getElementById("search-count").textContent));
  await page.waitForFunction(() => (document.querySelector("#details .slice-name")?.textContent || "").includes("aten::"));
  const first = await page.textContent("#details .slice-name");
  await page.click("#search-next");
  await painted(page);
  assert.ok((await page.textContent("#search-count")).match(/^\d[\d,]* matches$/), await page.textContent("#search-count"));
  assert.ok((await page.textContent("#details .slice-name")).includes("aten::"), first);
  await screenshot("viewer-sample-search");

  // '?' shows the keys, and links to the guides, which the built page carries beside it.
  await page.click("#timeline", { position: { x: 5, y: 5 } });
  await page.keyboard.press("?");
  assert.ok(await page.isVisible("#help"));
  const guides = await page.$$eval("#help-docs a", (links) => links.map((a) => [a.textContent, a.href]));
  assert.ok(guides.length >= 7, JSON.stringify(guides));
  for (const [text, href] of guides) {
    const got = await page.evaluate(async (url) => {
      const r = await fetch(url);
      return { status: r.status, type: r.headers.get("content-type"), head: (await r.text()).split("\n")[0] };
    }, href);
    assert.equal(got.status, 200, `${text}: ${href}`);
    assert.match(got.head, /^# /, `${text}: ${href} starts with ${got.head}`);
  }
  await page.click("#help-close");
}

export async function theTooltipGoesWhenTheViewChanges({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz"));
  await ready(page);
  await painted(page);
  const hoverASlice = async () => {
    const target = await someBox(page);
    assert.ok(target, "a slice box to hover");
    await page.mouse.move(target.x, target.y);
    await page.waitForSelector("#tooltip:not([hidden])");
  };
  // The pointer stays where it is in each case: only the view moves under it.
  const hiddenAfter = async (what) => {
    await painted(page);
    assert.ok(await page.isHidden("#tooltip"), `${what} hides the tooltip`);
  };
  await hoverASlice();
  await page.keyboard.press("w");
  await hiddenAfter("W (zoom)");
  await hoverASlice();
  await page.keyboard.press("d");
  await hiddenAfter("D (pan)");
  await hoverASlice();
  await page.mouse.wheel(0, -200);
  await hiddenAfter("the wheel");
  // A search, then F to frame its match.
  await page.fill("#search", "aten::conv2d");
  await page.press("#search", "Enter");
  await page.waitForFunction(() => (document.querySelector("#details .slice-name")?.textContent || "").includes("aten::conv2d"));
  await page.press("#search", "Escape");
  await painted(page);
  await hoverASlice();
  await page.keyboard.press("f");
  await hiddenAfter("F (frame the match)");
  await hoverASlice();
  await page.keyboard.press("0");
  await hiddenAfter("0 (show everything)");
  await hoverASlice();
  await page.setViewportSize({ width: 1100, height: 760 });
  await hiddenAfter("a resize");
}

export async function theTooltipGoesWhenThePageMovesUnderIt({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz"));
  await ready(page);
  await painted(page);
  const hoverASlice = async () => {
    const target = await someBox(page);
    assert.ok(target, "a slice box to hover");
    await page.mouse.move(target.x, target.y);
    await page.waitForSelector("#tooltip:not([hidden])");
  };
  const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  // The view is the same; the page moves: something above the timeline grows by 18 px.
  await hoverASlice();
  await page.evaluate(() => {
    const shift = document.createElement("div");
    shift.id = "shift";
    shift.style.height = "18px";
    document.getElementById("viewer").prepend(shift);
  });
  await frames();
  assert.ok(await page.isHidden("#tooltip"), "a layout shift hides the tooltip");
  // The page scrolled under a still pointer.
  await page.evaluate(() => document.getElementById("shift").remove());
  await hoverASlice();
  await page.evaluate(() => window.scrollBy(0, 40));
  await frames();
  assert.ok(await page.isHidden("#tooltip"), "a scroll hides the tooltip");
  // A tooltip with nothing moving stays.
  await page.evaluate(() => window.scrollTo(0, 0));
  await hoverASlice();
  await frames();
  assert.ok(await page.isVisible("#tooltip"), "the tooltip stays while nothing moves");
}

export async function fAfterAClickOnEmptySpaceKeepsTheView({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz"));
  await ready(page);
  await painted(page);
  const box = await (await page.$("#timeline")).boundingBox();
  // A range selected with shift-drag, then the whole trace shown again.
  await page.keyboard.down("Shift");
  await page.mouse.move(box.x + 400, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 600, box.y + 120, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await page.waitForSelector("#range-table tbody tr");
  await page.keyboard.press("0");
  await painted(page);
  // A click on empty space: in a slice row, right of the trace's end (the fit's margin).
  const target = await someBox(page);
  assert.ok(target, "a slice row");
  await page.mouse.click(box.x + box.width - 4, target.y);
  await painted(page);
  assert.match(await page.textContent("#details"), /Click a slice/);
  const before = await viewOf(page);
  await page.keyboard.press("f");
  await painted(page);
  assert.deepEqual(await viewOf(page), before, "F with nothing selected keeps the view");
}

export async function rangeSelectionShowsItsDurationAndWhatItSums({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz"));
  await ready(page);
  await painted(page);
  const box = await (await page.$("#timeline")).boundingBox();
  await page.keyboard.down("Shift");
  await page.mouse.move(box.x + 300, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 900, box.y + 150, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await page.waitForSelector("#range-table tbody tr");
  await painted(page);
  const t = await page.evaluate(() => window.sightline.app.range);
  const span = t.end_ns - t.start_ns;
  // The duration is written on the timeline, over the range.
  assert.ok(await page.isVisible("#range-duration"), "the range's duration is shown on the timeline");
  const label = await page.textContent("#range-duration");
  const m = /^([0-9.]+) (ns|µs|us|ms|s)$/.exec(label);
  assert.ok(m, label);
  const ns = Number(m[1]) * { ns: 1, µs: 1e3, us: 1e3, ms: 1e6, s: 1e9 }[m[2]];
  assert.ok(Math.abs(ns - span) <= 0.01 * span, `${label} for a range of ${span} ns`);
  const badge = await (await page.$("#range-duration")).boundingBox();
  const mid = badge.x + badge.width / 2;
  assert.ok(mid > box.x + 300 && mid < box.x + 900 && badge.y >= box.y && badge.y < box.y + 60, JSON.stringify(badge));
  // "In range" is the time covered, nested and parallel calls once: never more than the range;
  // the sum of the calls is its own column, and both say so.
  const heads = await page.$$eval("#range-table th", (th) => th.map((x) => [x.textContent.replace(/ [▲▼]$/, ""), x.title]));
  const covered = heads.find(([h]) => h === "In range");
  assert.ok(covered && /counted once/.test(covered[1]), JSON.stringify(heads));
  const summed = heads.find(([h]) => h === "Sum of calls in range");
  assert.ok(summed && /each count/.test(summed[1]), JSON.stringify(heads));
  for (const r of t.rows) {
    assert.ok(r.covered_ns <= span && r.covered_ns <= r.in_range_ns, `${r.name}: covered ${r.covered_ns}, summed ${r.in_range_ns}, range ${span}`);
  }
  // (That nested and parallel calls count once is checked on a made-up trace: src/view/aggregate.rs.)
  // Escape clears the range, and its duration goes with it.
  await page.keyboard.press("Escape");
  await painted(page);
  assert.ok(await page.isHidden("#range-duration"));
}

export async function rangeSelectionAggregatesByName({ page, baseUrl, screenshot, ignore }) {
  acceptStreamedFetch(ignore);
  await open(page, baseUrl);
  await page.click("#sample-link");
  await ready(page);
  await painted(page);
  const box = await (await page.$("#timeline")).boundingBox();
  await page.keyboard.down("Shift");
  await page.mouse.move(box.x + 300, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 800, box.y + 150, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await page.waitForSelector("#range-table tbody tr");
  const rows = await page.$$eval("#range-table tbody tr", (trs) => trs.length);
  assert.ok(rows > 3, `${rows} range rows`);
  // Clicking a row highlights those slices and jumps to the first.
  await page.click("#range-table tbody tr");
  await page.waitForFunction(() => /×/.test(document.getElementById("search-count").textContent));
  await painted(page);
  await screenshot("viewer-range");
}

export async function gpuEventNamesItsLauncher({ page, baseUrl, ignore, screenshot }) {
  acceptStreamedFetch(ignore);
  await open(page, baseUrl);
  await page.click("#sample-link");
  await ready(page);
  // A kernel from the GPU table: its details name the runtime call and the op that launched it.
  await page.click("#tabs button:nth-child(2)");
  await page.click("#kernels-table tbody tr");
  await page.waitForFunction(() => /Launched by/.test(document.getElementById("details").textContent));
  await painted(page);
  const arrows = await page.evaluate(() => window.sightline.view.meta.arrows.length);
  assert.ok(arrows >= 1, "the launch's flow arrow is drawn");
  await screenshot("viewer-kernel-launch");
  const text = await page.textContent("#details");
  assert.match(text, /Launched by(aten::|[a-z_]+::)[^·]+·[^·]+·*.*(cu(da)?LaunchKernel|Memcpy|Memset)/);
}

export async function truncatedTraceShowsItsNotice({ page, baseUrl, fixturesDir, screenshot }) {
  await open(page, baseUrl);
  const json = gunzipSync(readFileSync(join(fixturesDir, "real/tracelens_h100_bert_small_stack_mem.json.gz")));
  const dir = mkdtempSync(join(tmpdir(), "sightline-e2e-"));
  const cut = join(dir, "cut.json");
  writeFileSync(cut, json.subarray(0, Math.floor(json.length * 0.6)));
  await page.setInputFiles("#file-input", cut);
  await ready(page);
  assert.ok(await page.isVisible("#notice"));
  assert.match(await page.textContent("#notice-text"), /truncated/);
  const items = await page.$$eval("#diagnostics li", (lis) => lis.map((li) => li.textContent));
  assert.ok(items.some((t) => /truncated/.test(t)), items.join("\n"));
  assert.ok((await page.$$("#ops-table tbody tr")).length > 0, "what was salvaged is shown");
  await screenshot("viewer-truncated");
}

export async function nonTraceShowsAnErrorAndThePageStaysUsable({ page, baseUrl, fixturesDir, screenshot }) {
  await open(page, baseUrl);
  const dir = mkdtempSync(join(tmpdir(), "sightline-e2e-"));
  const png = join(dir, "picture.png");
  writeFileSync(png, Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"));
  await page.setInputFiles("#file-input", png);
  await page.waitForFunction(() => document.body.dataset.state === "error");
  assert.match(await page.textContent("#error"), /not a trace: a PNG image/);
  await screenshot("viewer-error");
  const other = join(dir, "config.json");
  writeFileSync(other, JSON.stringify({ model: "resnet", lr: 0.1 }));
  await page.setInputFiles("#file-input", other);
  await page.waitForFunction(() => /traceEvents/.test(document.getElementById("error").textContent));
  // The next real trace opens normally.
  await page.setInputFiles("#file-input", join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz"));
  await ready(page);
  assert.ok(await page.isHidden("#error-box"));
}

export async function cancelReturnsToThePreviousState({ page, baseUrl, fixturesDir }) {
  await open(page, baseUrl);
  const file = join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz");
  // Cancel as soon as loading starts: the page goes back to empty and stays usable.
  await page.evaluate(() => {
    new MutationObserver((_, obs) => {
      if (document.body.dataset.state === "loading") {
        document.getElementById("cancel").click();
        obs.disconnect();
      }
    }).observe(document.body, { attributes: true });
  });
  await page.setInputFiles("#file-input", file);
  await page.waitForFunction(() => document.body.dataset.state === "empty");
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => document.body.dataset.state), "empty");
  await page.setInputFiles("#file-input", file);
  await ready(page);
}

export async function urlParameterOpensATraceFromTheSite({ page, baseUrl, ignore }) {
  // Strict about the page's own scripts: no worker is started after the load (only when another
  // load is about to begin), so leaving the page right after it aborts no fetch of a worker script.
  acceptStreamedFetch(ignore);
  await page.goto(`${baseUrl}?url=samples/tracelens_h100_bert_small_stack_mem.json.gz`);
  await ready(page);
  assert.equal(await page.textContent("#file-name"), "tracelens_h100_bert_small_stack_mem.json.gz");
  // Another site is refused before any request is made.
  await page.goto(`${baseUrl}?url=${encodeURIComponent("https://example.com/t.json")}`);
  await page.waitForFunction(() => document.body.dataset.state === "error");
  assert.match(await page.textContent("#error"), /only traces from this site/);
}

export async function darkThemeOnHiDpi({ context, baseUrl, fixturesDir, screenshot }) {
  // A context of its own: dark scheme, device pixel ratio 2. The runner's guard covers only its
  // own context, so this one records its requests and checks them itself.
  const own = await context.browser().newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 2, colorScheme: "dark" });
  try {
    const page = await own.newPage();
    const urls = [];
    page.on("request", (r) => urls.push(r.url()));
    await open(page, baseUrl);
    await page.setInputFiles("#file-input", join(fixturesDir, "real/hta_a100_nccl_rank0of2.json.gz"));
    await ready(page);
    await painted(page);
    const c = await page.evaluate(() => {
      const el = document.getElementById("timeline");
      return { w: el.width, h: el.height, css: el.getBoundingClientRect(), bg: getComputedStyle(document.body).backgroundColor };
    });
    assert.equal(c.w, c.css.width * 2, "canvas backing store at device pixels");
    assert.equal(c.h, c.css.height * 2, "canvas backing store at device pixels");
    assert.equal(c.bg, "rgb(21, 24, 30)", "dark background");
    for (const u of urls) assert.ok(u.startsWith("http://127.0.0.1:") || u.startsWith("data:") || u.startsWith("blob:"), u);
    const path = await screenshot("viewer-dark-hidpi");
    await page.screenshot({ path, fullPage: true });
  } finally {
    await own.close();
  }
}

export async function opensATracePostedByAnEmbeddingPage({ page, baseUrl, otherBaseUrl, fixturesDir }) {
  // The page takes messages only from the window that frames it (www/js/embed.js): a parent page
  // on another origin embeds it, PINGs until PONG, then posts the trace.
  await page.goto(`${otherBaseUrl}blank.html`);
  await page.evaluate(
    (src) =>
      new Promise((resolve) => {
        const f = Object.assign(document.createElement("iframe"), { id: "viewer", src, width: 1000, height: 600 });
        f.addEventListener("load", resolve, { once: true });
        document.body.append(f);
      }),
    baseUrl,
  );
  const frame = await (await page.$("iframe#viewer")).contentFrame();
  const bytes = readFileSync(join(fixturesDir, "real/param_dlrm_v100_rank0of8.pt.trace.json.gz")).toString("base64");
  const pong = await page.evaluate(
    (b64) =>
      new Promise((resolve) => {
        const win = document.getElementById("viewer").contentWindow;
        const origin = new URL(document.getElementById("viewer").src).origin;
        const ping = setInterval(() => win.postMessage("PING", origin), 50);
        window.addEventListener("message", (ev) => {
          if (ev.source !== win || ev.data !== "PONG") return;
          clearInterval(ping);
          const buffer = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
          win.postMessage({ perfetto: { buffer, title: "rank0 (posted)" } }, origin, [buffer]);
          resolve(true);
        });
      }),
    bytes,
  );
  assert.ok(pong);
  await ready(frame);
  assert.equal(await frame.textContent("#file-name"), "rank0 (posted)");
}

export async function analysesShowFindingsStepsIdleAndTables({ page, baseUrl, fixturesDir, screenshot }) {
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", join(fixturesDir, "real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz"));
  await ready(page);
  // Findings: one li each; a click marks the evidence range on the timeline.
  const findings = await page.$$eval("#findings li", (lis) => lis.map((li) => li.dataset.id));
  assert.ok(findings.includes("dataloader_bound"), findings.join(", "));
  await page.click('#findings li[data-id="dataloader_bound"]');
  await painted(page);
  assert.ok(await page.evaluate(() => window.sightline.view.meta.range !== null), "evidence range marked");
  // Steps: one bar per ProfilerStep; idle: what the CPU was doing, the longest gaps.
  assert.equal((await page.$$("#steps-chart .bar-row")).length, 6);
  assert.ok((await page.$$("#idle-chart .bar-row")).length >= 2);
  assert.match(await page.textContent("#idle-chart"), /the DataLoader/);
  // A step's bar selects its ProfilerStep span, the step on the ruler (176.078 ms for
  // ProfilerStep#5), not the plugin's span extended to its device work (it had selected 188 ms).
  await page.click("#steps-chart .bar-row");
  await painted(page);
  assert.equal(await page.evaluate(() => window.sightline.view.meta.range && window.sightline.view.meta.range.label), "176 ms");
  assert.equal(await page.textContent("#steps-chart .bar-row .bar-value"), "176 ms");
  await screenshot("viewer-analyses");

  // Idle gaps are shaded on the GPU lane; hovering one says what the CPU was doing, a click
  // shows the gap in the details panel.
  await page.click("#idle-chart .gap-list li");
  await painted(page);
  const gap = await page.evaluate(() => {
    const g = window.sightline.view.meta.gaps.find((g) => g.x1 - g.x0 > 20);
    const box = window.sightline.view.canvas.getBoundingClientRect();
    return g && { x: box.left + 190 + (g.x0 + g.x1) / 2, y: box.top + 26 + g.y + g.h - 4 };
  });
  assert.ok(gap, "a shaded gap on screen");
  await page.mouse.move(gap.x, gap.y);
  await page.waitForFunction(() => /idle for/.test(document.getElementById("tooltip").textContent));
  assert.match(await page.textContent("#tooltip"), /meanwhile on the CPU/);
  await page.mouse.click(gap.x, gap.y);
  await page.waitForFunction(() => /idle for/.test(document.querySelector("#details .slice-name")?.textContent || ""));

  // Operator table: key_averages columns; grouped by input shape on request.
  const heads = await page.$$eval("#ops-table th", (ths) => ths.map((th) => th.textContent));
  assert.ok(heads.includes("Self CPU %") && heads.includes("# of Calls"), heads.join("|"));
  const plain = (await page.$$("#ops-table tbody tr")).length;
  await page.check("#ops-by-shape");
  await page.waitForFunction(() => [...document.querySelectorAll("#ops-table th")].some((th) => th.textContent === "Input Shapes"));
  assert.ok((await page.$$("#ops-table tbody tr")).length >= plain);
  // Kernels, labels, call tree.
  // A tab's table comes from the worker: it is shown a moment after the click.
  await page.click('#tabs button:text("Kernels")');
  await page.waitForSelector("#kernels-table tbody tr");
  assert.ok((await page.$$("#kernels-table tbody tr")).length > 10);
  await page.click('#tabs button:text("Call tree")');
  await page.waitForSelector("#calltree-table tbody tr");
  const roots = (await page.$$("#calltree-table tbody tr")).length;
  assert.ok(roots > 0);
  await page.click("#calltree-table tbody tr .twisty");
  assert.ok((await page.$$("#calltree-table tbody tr")).length > roots, "a node opens");
  await page.click('#tabs button:text("Labels")');
  await page.waitForSelector("#labels-table", { state: "attached" });
}

export async function pageAllowsOnlyItsOwnScripts({ page, baseUrl, ignore }) {
  // The blocked script below is reported on the console, on purpose.
  ignore("console", /violates the following Content Security Policy directive 'script-src/);
  await open(page, baseUrl);
  const html = await (await page.request.get(baseUrl)).text();
  const csp = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)"/);
  assert.ok(csp, "a CSP meta");
  assert.match(csp[1], /default-src 'self'/);
  assert.match(csp[1], /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
  assert.match(csp[1], /connect-src 'self'/);
  const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].filter(([, attrs, body]) => !/\bsrc=/.test(attrs) || body.trim());
  assert.deepEqual(inline, [], "no inline script");
  // The policy is in force: an inline script injected now does not run.
  const ran = await page.evaluate(() => {
    window.__inline = false;
    const s = document.createElement("script");
    s.textContent = "window.__inline = true";
    document.body.append(s);
    return window.__inline;
  });
  assert.equal(ran, false);
}

export async function aHugeNameIsCutInThePanelsAndWholeOneClickAway({ page, baseUrl }) {
  // A name of 1 MB (no profiler writes one; a hostile file may): the details panel shows its first
  // 64 KiB and says how much is left out, the damage notice tells it, and one click gives it whole.
  const name = `huge_${"n".repeat(1 << 20)}`;
  const events = [
    { ph: "X", name: "ProfilerStep#1", cat: "user_annotation", pid: 1, tid: 1, ts: 0, dur: 1000 },
    { ph: "X", name, cat: "cpu_op", pid: 1, tid: 1, ts: 10, dur: 500 },
  ];
  const dir = mkdtempSync(join(tmpdir(), "sightline-e2e-long-"));
  const path = join(dir, "long_name.json");
  writeFileSync(path, JSON.stringify({ traceEvents: events }));
  await open(page, baseUrl);
  await page.setInputFiles("#file-input", path);
  await ready(page);
  assert.match(await page.textContent("#diagnostics"), /long name × 1: a name of 1048581 bytes/);
  await page.fill("#search", "huge_");
  await page.press("#search", "Enter");
  await page.waitForSelector("#details .full-name");
  const cut = await page.$eval("#details .slice-name", (p) => p.firstChild.textContent);
  assert.ok(cut.length < 66000 && cut.startsWith("huge_nnn") && cut.endsWith(`… (${(1 << 20) + 5 - 65536} more bytes)`), cut.slice(-60));
  assert.equal(await page.textContent("#details .full-name"), "Show the whole name (1,048,581 bytes)");
  await page.click("#details .full-name");
  await page.waitForFunction((n) => document.querySelector("#details .slice-name").textContent.length === n, name.length);
  assert.equal(await page.$("#details .full-name"), null);
}

/** A click on a slice shows its details without scrolling, at 1440x900 and at 1280x720: the
 * panel is docked under the timeline (it had been about 1,000 px below the fold). */
export async function detailsOfAClickedSliceAreInView({ page, baseUrl, ignore }) {
  acceptStreamedFetch(ignore);
  for (const viewport of [{ width: 1440, height: 900 }, { width: 1280, height: 720 }]) {
    await page.setViewportSize(viewport);
    await open(page, baseUrl);
    await page.click("#sample-link");
    await ready(page);
    await painted(page);
    const box = await (await page.$("#timeline")).boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const target = await zoomToASlice(page);
    await page.mouse.click(target.x, target.y);
    await page.waitForSelector("#details .slice-name");
    const r = await page.$eval("#details .slice-name", (e) => {
      const b = e.getBoundingClientRect();
      return { top: b.top, bottom: b.bottom, scrollY: window.scrollY };
    });
    assert.equal(r.scrollY, 0, "nothing scrolled");
    assert.ok(r.top >= 0 && r.bottom <= viewport.height, `the slice's name at ${r.top}-${r.bottom} px in a ${viewport.height} px window`);
  }
}
