// End-to-end tests of hosting and embedding: a parent page on another origin (a second port) that
// embeds the viewer in an iframe and speaks Perfetto's postMessage protocol to it; messages from
// windows other than the parent, or from origins outside ?origin=, are ignored; `?url=` / `#url=`
// with t0/t1 open a trace at a range and the view is written back to the hash; the
// <sightline-trace> web component renders two traces independently on one page. The runner fails
// any test whose pages request a host other than 127.0.0.1 or log an error.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const SAMPLE = "tracelens_h100_bert_small_stack_mem.json.gz";
// The sample's first event is at ts = 1419247332500.684 µs in the file (see README); it spans
// 4966.632 µs.
const ORIGIN_S = 1419247.332500684;
const SPAN_US = 4966.632;
const EVENTS = 2551;

/** Streamed fetches of samples/ are reported as ERR_ABORTED under interception (viewer.test.mjs). */
function acceptStreamedFetch(ignore) {
  ignore("http", /\/samples\/[^ ]+: net::ERR_ABORTED$/);
}

function near(actual, expected, tol, what) {
  assert.ok(Math.abs(Number(actual) - expected) <= tol, `${what}: ${actual}, expected ${expected} ± ${tol}`);
}

/** Waits until `target`'s body has data-state ready (or fails with its error). */
async function ready(target, timeout = 60000) {
  await target.waitForFunction(
    () => document.body.dataset.state === "error" || (document.body.dataset.state === "ready" && document.body.dataset.analyses === "ready"),
    null,
    { timeout },
  );
  const state = await target.evaluate(() => document.body.dataset.state);
  if (state !== "ready") throw new Error(`state ${state}: ${await target.evaluate(() => document.getElementById("error").textContent)}`);
}

/** The view window the frame's body mirrors, µs from the trace start. */
function viewWindow(target) {
  return target.evaluate(() => ({ t0: Number(document.body.dataset.viewT0), t1: Number(document.body.dataset.viewT1) }));
}

/**
 * In the parent page: an iframe of the viewer with id `id`, and a log of every message any
 * window posts to the parent (window.received: [{from, data}], `from` the frame's id or "other").
 */
async function embed(page, id, src) {
  await page.evaluate(
    ({ id, src }) =>
      new Promise((resolve) => {
        if (!window.received) {
          window.received = [];
          window.addEventListener("message", (ev) => {
            const frame = [...document.querySelectorAll("iframe")].find((f) => f.contentWindow === ev.source);
            const data = ev.data && ev.data.sightline ? { sightline: ev.data.sightline } : ev.data;
            window.received.push({ from: frame ? frame.id : "other", data });
          });
        }
        const f = document.createElement("iframe");
        f.id = id;
        f.src = src;
        f.width = "1100";
        f.height = "620";
        f.addEventListener("load", () => resolve(), { once: true });
        document.body.append(f);
      }),
    { id, src },
  );
  const handle = await page.$(`iframe#${id}`);
  return handle.contentFrame();
}

/** Posts 'PING' to the frame every 50 ms until it answers 'PONG'; false after `ms` without one. */
function handshake(page, id, ms = 10000) {
  return page.evaluate(
    ({ id, ms }) =>
      new Promise((resolve) => {
        const win = document.getElementById(id).contentWindow;
        const origin = new URL(document.getElementById(id).src).origin;
        const ping = setInterval(() => win.postMessage("PING", origin), 50);
        const done = (ok) => {
          clearInterval(ping);
          window.removeEventListener("message", onPong);
          resolve(ok);
        };
        function onPong(ev) {
          if (ev.source === win && ev.data === "PONG") done(true);
        }
        window.addEventListener("message", onPong);
        setTimeout(() => done(false), ms);
      }),
    { id, ms },
  );
}

/** Posts `message` to the frame; `withTrace` puts the sample's bytes in message[key].buffer. */
function post(page, id, message, traceBase64 = null) {
  return page.evaluate(
    ({ id, message, traceBase64 }) => {
      const frame = document.getElementById(id);
      const transfer = [];
      if (traceBase64) {
        const bytes = Uint8Array.from(atob(traceBase64), (c) => c.charCodeAt(0));
        const key = Object.keys(message)[0];
        message[key].buffer = bytes.buffer;
        transfer.push(bytes.buffer);
      }
      frame.contentWindow.postMessage(message, new URL(frame.src).origin, transfer);
    },
    { id, message, traceBase64 },
  );
}

function sampleBase64(samplesDir) {
  return readFileSync(join(samplesDir, SAMPLE)).toString("base64");
}

export async function parentOnAnotherOriginPostsATraceAndMovesTheView({ page, baseUrl, otherBaseUrl, samplesDir, screenshot }) {
  assert.notEqual(new URL(otherBaseUrl).origin, new URL(baseUrl).origin, "the parent is on another origin");
  await page.goto(`${otherBaseUrl}blank.html`);
  const frame = await embed(page, "viewer", `${baseUrl}?mode=embedded`);
  assert.ok(await handshake(page, "viewer"), "the frame answered PONG");

  const hidden = await frame.evaluate(() => ({
    mode: document.body.dataset.mode,
    state: document.body.dataset.state,
    dropTarget: getComputedStyle(document.querySelector(".drop-target")).display,
    footer: getComputedStyle(document.querySelector(".foot")).display,
  }));
  assert.deepEqual(hidden, { mode: "embedded", state: "empty", dropTarget: "none", footer: "none" });

  // The trace, as Perfetto's callers send it; a range sent while it loads waits for it.
  const fileName = "step42.pt.trace.json.gz";
  await post(page, "viewer", { perfetto: { title: "BERT step 42", fileName, url: "https://example.invalid/step42.json.gz" } }, sampleBase64(samplesDir));
  await post(page, "viewer", { sightline: { t0: 100, t1: 200 } });
  await ready(frame);
  assert.equal(await frame.textContent("#file-name"), fileName);
  assert.equal(await frame.evaluate(() => document.title), "BERT step 42 · Sightline");
  await frame.waitForFunction(() => document.body.dataset.viewT0 === "100");
  let w = await viewWindow(frame);
  near(w.t0, 100, 0.001, "t0 of the range sent while loading");
  near(w.t1, 200, 0.001, "t1 of the range sent while loading");

  // Perfetto's timeStart/timeEnd: seconds in the file's clock.
  await post(page, "viewer", { perfetto: { timeStart: ORIGIN_S + 0.0009, timeEnd: ORIGIN_S + 0.0013 } });
  await frame.waitForFunction(() => Math.abs(Number(document.body.dataset.viewT0) - 900) < 0.01);
  w = await viewWindow(frame);
  near(w.t0, 900, 0.01, "t0 from timeStart");
  near(w.t1, 1300, 0.01, "t1 from timeEnd");
  // Sightline's own form: µs from the trace start.
  await post(page, "viewer", { sightline: { t0: 2000.5, t1: 2500.25 } });
  await frame.waitForFunction(() => document.body.dataset.viewT0 === "2000.5");
  near((await viewWindow(frame)).t1, 2500.25, 0.001, "t1 from the sightline message");

  // Back: PONGs and load status only, all to the parent.
  const received = await page.evaluate(() => window.received);
  assert.ok(received.every((m) => m.from === "viewer"), JSON.stringify(received.filter((m) => m.from !== "viewer")));
  const statuses = received.filter((m) => m.data !== "PONG").map((m) => m.data.sightline && m.data.sightline.status);
  assert.deepEqual(statuses, ["loading", "ready"], JSON.stringify(received));
  const last = received[received.length - 1].data.sightline;
  assert.equal(last.events, EVENTS);
  assert.equal(last.name, fileName);
  await screenshot("embed-parent-posted");
}

export async function messagesFromOtherWindowsAndOriginsAreIgnored({ page, baseUrl, otherBaseUrl, samplesDir }) {
  await page.goto(`${otherBaseUrl}blank.html`);
  const frame = await embed(page, "viewer", `${baseUrl}?mode=embedded`);
  // A sibling frame (the parent's origin, so it can reach the viewer's window) and a popup post
  // PING and a whole trace to the viewer: it answers neither and opens nothing.
  const trace = sampleBase64(samplesDir);
  const foreign = await page.evaluate(
    ({ trace }) =>
      new Promise((resolve) => {
        const viewer = document.getElementById("viewer").contentWindow;
        const origin = new URL(document.getElementById("viewer").src).origin;
        const sibling = document.createElement("iframe");
        sibling.src = "blank.html";
        sibling.addEventListener("load", () => {
          const w = sibling.contentWindow;
          let pongs = 0;
          w.addEventListener("message", (ev) => {
            if (ev.data === "PONG") pongs++;
          });
          const bytes = Uint8Array.from(atob(trace), (c) => c.charCodeAt(0));
          const send = w.eval("(v, o, m) => v.postMessage(m, o)");
          for (let i = 0; i < 5; i++) send(viewer, origin, "PING");
          send(viewer, origin, { perfetto: { buffer: bytes.buffer, title: "from a sibling" } });
          send(viewer, origin, bytes.buffer);
          setTimeout(() => resolve({ pongs }), 1500);
        });
        document.body.append(sibling);
      }),
    { trace },
  );
  assert.equal(foreign.pongs, 0, "no PONG to a sibling frame");
  assert.equal(await frame.evaluate(() => document.body.dataset.state), "empty", "a sibling's trace is not opened");
  const toParent = await page.evaluate(() => window.received.length);
  assert.equal(toParent, 0, "nothing was posted to the parent for a sibling's messages");

  // ?origin= allow-list: a parent outside it gets no answer; one in it does.
  const parentOrigin = new URL(otherBaseUrl).origin;
  await embed(page, "strict", `${baseUrl}?mode=embedded&origin=${encodeURIComponent("https://docs.example.invalid")}`);
  assert.equal(await handshake(page, "strict", 1500), false, "a parent outside ?origin= gets no PONG");
  await embed(page, "allowed", `${baseUrl}?mode=embedded&origin=${encodeURIComponent(`https://docs.example.invalid,${parentOrigin}`)}`);
  assert.equal(await handshake(page, "allowed"), true, "a parent in ?origin= gets PONG");

  // The parent itself still works with the first frame.
  assert.ok(await handshake(page, "viewer"));
  await post(page, "viewer", { perfetto: { title: "from the parent" } }, trace);
  await ready(frame);
  assert.equal(await frame.textContent("#file-name"), "from the parent");
}

export async function urlParameterOpensAtARangeAndTheHashReproducesTheView({ page, baseUrl, ignore }) {
  acceptStreamedFetch(ignore);
  const started = Date.now();
  await page.goto(`${baseUrl}?url=samples/${SAMPLE}&t0=900&t1=1300`);
  await ready(page);
  const wallMs = Date.now() - started;
  await page.waitForFunction(() => document.body.dataset.viewT0 === "900");
  const timings = await page.evaluate(() => window.sightline.app.timings);
  console.log(`     ?url= load of the sample: ${timings.readyMs.toFixed(0)} ms from the start of the load to ready, ${wallMs} ms from navigation (${timings.bytes} bytes)`);
  let w = await viewWindow(page);
  near(w.t0, 900, 0.001, "t0");
  near(w.t1, 1300, 0.001, "t1");
  await page.waitForFunction(() => location.hash.includes("t0=900"));
  assert.equal(new URL(page.url()).hash, "#t0=900&t1=1300");

  // Select a slice and a range, pan: the hash follows, with no trace bytes in it.
  await page.evaluate(async () => {
    const { app, view } = window.sightline;
    view.cb.onSelect(await app.active.session.select(0, 0));
    await app.active.session.select_range_ns(1000e3, 1100e3, 10);
    await app.active.session.set_window(950e3, 1250e3);
    view.request();
  });
  await page.waitForFunction(() => location.hash.includes("t0=950") && location.hash.includes("sel=0.0") && location.hash.includes("r0=1000"));
  const link = page.url();
  assert.match(new URL(link).hash, /^#t0=950&t1=1250&sel=0\.0&r0=1000&r1=1100$/);
  assert.ok(link.length < 300, `a short link: ${link}`);

  // An edited hash moves the view of the same trace without reopening it.
  await page.evaluate(() => {
    window.firstSession = window.sightline.app.active.session;
  });
  await page.evaluate(() => (location.hash = "#t0=100&t1=200"));
  await page.waitForFunction(() => document.body.dataset.viewT0 === "100");
  assert.ok(await page.evaluate(() => window.sightline.app.active.session === window.firstSession), "the same session");
  await page.evaluate((hash) => (location.hash = hash), new URL(link).hash);
  await page.waitForFunction(() => document.body.dataset.viewT0 === "950");

  // The link reproduces the view in a fresh page.
  const again = await page.context().newPage();
  await again.goto(link);
  await ready(again);
  await again.waitForFunction(() => document.body.dataset.viewT0 === "950");
  w = await viewWindow(again);
  near(w.t0, 950, 0.001, "t0 after reload");
  near(w.t1, 1250, 0.001, "t1 after reload");
  const sel = await again.evaluate(() => window.sightline.app.active.session.selection());
  assert.deepEqual(sel, { slice: [0, 0], range: [1000e3, 1100e3] });
  assert.ok(await again.evaluate(() => document.querySelector("#details .slice-name") !== null), "the details show the selected slice");
  await again.close();

  // #url= works the same; the url stays in the hash that it came in.
  await page.goto(`${baseUrl}#url=samples/${SAMPLE}&t0=10&t1=20`);
  await ready(page);
  await page.waitForFunction(() => document.body.dataset.viewT0 === "10");
  w = await viewWindow(page);
  near(w.t0, 10, 0.001, "t0 from #url=");
  await page.waitForFunction(() => location.hash.startsWith(`#url=samples`));
}

export async function sampleLinkWritesAReproducibleLink({ page, baseUrl, ignore }) {
  acceptStreamedFetch(ignore);
  await page.goto(baseUrl);
  await page.waitForFunction(() => window.sightlineReady === true);
  await page.click("#sample-link");
  await ready(page);
  await page.waitForFunction(() => location.hash.startsWith("#url="));
  const hash = new URLSearchParams(new URL(page.url()).hash.slice(1));
  assert.equal(hash.get("url"), `samples/${SAMPLE}`);
  assert.ok(Number(hash.get("t1")) > SPAN_US, "the whole trace with its margin");
}

export async function webComponentRendersTwoTracesIndependently({ page, baseUrl, ignore, screenshot }) {
  acceptStreamedFetch(ignore);
  await page.goto(`${baseUrl}embed-example.html`);
  await page.waitForFunction(() => [...document.querySelectorAll("sightline-trace")].every((e) => ["ready", "error"].includes(e.getAttribute("state"))), null, { timeout: 60000 });
  const info = await page.evaluate(async () => {
    const [a, b] = document.querySelectorAll("sightline-trace");
    const one = async (e) => {
      const f = await e.session.frame();
      const rects = f.rects.length / e.view.k.rect_stride;
      const c = e.shadowRoot.querySelector("canvas.timeline");
      return {
        state: e.getAttribute("state"),
        window: Array.from(await e.session.window_ns()),
        rects,
        canvas: [c.width, c.height],
        strip: e.shadowRoot.querySelectorAll(".strip li").length,
        open: e.shadowRoot.querySelector("a").href,
        unsetColours: Object.entries(e.view.theme).filter(([, v]) => !v).map(([k]) => k),
      };
    };
    return { a: await one(a), b: await one(b), distinct: a.worker !== b.worker && a.view !== b.view };
  });
  assert.equal(info.a.state, "ready");
  assert.equal(info.b.state, "ready");
  assert.ok(info.distinct, "each element has its own session and view");
  assert.deepEqual(info.a.unsetColours, [], "every colour the painter reads is defined in the element");
  assert.ok(info.a.rects > 5 && info.b.rects > 5, `slices drawn: ${info.a.rects}, ${info.b.rects}`);
  assert.ok(info.a.canvas[0] > 300 && info.a.canvas[1] > 100, `canvas ${info.a.canvas}`);
  assert.ok(info.a.strip >= 2, "a findings strip");
  near(info.b.window[0] / 1e3, 900, 0.001, "t0 attribute");
  near(info.b.window[1] / 1e3, 1300, 0.001, "t1 attribute");
  assert.match(info.b.open, /index\.html#url=.*&t0=900&t1=1300$/);

  // Zooming the first with its keys leaves the second where it was.
  const box = await page.evaluateHandle(() => document.querySelector("sightline-trace").shadowRoot.querySelector("canvas.timeline"));
  await box.asElement().focus();
  await page.keyboard.press("w");
  await page.keyboard.press("w");
  const after = await page.evaluate(() => Promise.all([...document.querySelectorAll("sightline-trace")].map(async (e) => Array.from(await e.session.window_ns()))));
  assert.ok(after[0][1] - after[0][0] < info.a.window[1] - info.a.window[0], "the first zoomed in");
  assert.deepEqual(after[1], info.b.window, "the second did not move");

  // The strip lists the sample's findings, worst first; a click shows a finding's evidence.
  await page.waitForFunction(() => document.querySelector("sightline-trace").shadowRoot.querySelector(".strip li.finding"));
  const finding = await page.evaluate(async () => {
    const e = document.querySelector("sightline-trace");
    const li = e.shadowRoot.querySelector(".strip li.finding");
    li.click();
    // Calls run in order in the element's worker: this one sees the evidence shown.
    return { text: li.textContent, cls: li.className, range: e.findings[0].evidence.ranges[0], window: Array.from(await e.session.window_ns()) };
  });
  // The sample's first finding: the operator holding the most of the path (a bound).
  assert.equal(finding.cls, "finding warning", finding.text);
  assert.match(finding.text, /holds the most of the critical path/);
  assert.ok(finding.window[0] <= finding.range.start_ns && finding.window[1] >= finding.range.end_ns, JSON.stringify(finding));
  assert.ok(finding.window[1] - finding.window[0] < 2 * (finding.range.end_ns - finding.range.start_ns), "zoomed to the evidence");

  // An element made by script works too (a constructor may not set attributes).
  await page.evaluate(() => {
    const e = document.createElement("sightline-trace");
    e.id = "scripted";
    e.setAttribute("height", "200");
    e.setAttribute("src", "samples/tracelens_h100_bert_small_stack_mem.json.gz");
    document.querySelector("main").append(e);
  });
  await page.waitForFunction(() => document.getElementById("scripted").getAttribute("state") === "ready");

  // The example's iframes: one opened by ?url=, one fed by postMessage from the button.
  await page.locator("iframe#by-url").scrollIntoViewIfNeeded();
  const byUrl = await (await page.$("iframe#by-url")).contentFrame();
  await ready(byUrl);
  await byUrl.waitForFunction(() => document.body.dataset.viewT0 === "900");
  await page.click("#send");
  const posted = await (await page.$("iframe#posted")).contentFrame();
  await ready(posted);
  await page.waitForFunction(() => document.getElementById("posted-status").textContent.startsWith("ready"));
  await page.click("#zoom-perfetto");
  await posted.waitForFunction(() => Math.abs(Number(document.body.dataset.viewT0) - 900) < 0.01);
  await screenshot("embed-example");
}

export async function anotherSiteOpensByUrlOnlyWhenThePolicyListsIt({ page, baseUrl }) {
  await page.goto(baseUrl);
  await page.waitForFunction(() => window.sightlineReady === true);
  // The check behind `?url=` for other sites reads connect-src from the page's policy <meta>.
  const results = await page.evaluate(async () => {
    const { connectAllowed } = await import("./js/url.js");
    const policy = (p) => new DOMParser().parseFromString(`<meta http-equiv="Content-Security-Policy" content="${p}">`, "text/html");
    const strict = policy("default-src 'self'; connect-src 'self'");
    const listed = policy("default-src 'self'; connect-src 'self' https://traces.example.com *.corp.example:8443 http:");
    const fallback = policy("default-src 'self' https://cdn.example.com");
    const ok = (doc, u) => connectAllowed(new URL(u, location.href), doc);
    return {
      self: ok(strict, "samples/x.json.gz"),
      strictOther: ok(strict, "https://traces.example.com/t.json"),
      listed: ok(listed, "https://traces.example.com/t.json"),
      listedWrongScheme: ok(listed, "ftp://traces.example.com/t.json"),
      wildcard: ok(listed, "https://a.corp.example:8443/t.json"),
      wildcardWrongPort: ok(listed, "https://a.corp.example/t.json"),
      wildcardApex: ok(listed, "https://corp.example:8443/t.json"),
      scheme: ok(listed, "http://anything.example/t.json"),
      defaultSrc: ok(fallback, "https://cdn.example.com/t.json"),
      page: ok(document, "https://traces.example.com/t.json"),
    };
  });
  assert.deepEqual(results, {
    self: true,
    strictOther: false,
    listed: true,
    listedWrongScheme: false,
    wildcard: true,
    wildcardWrongPort: false,
    wildcardApex: false,
    scheme: true,
    defaultSrc: true,
    page: false,
  });
}
