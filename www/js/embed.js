// Embedding in an iframe, speaking Perfetto's postMessage protocol, so a page that embeds
// ui.perfetto.dev switches by changing the iframe's src.
//
//   ?mode=embedded       hides what makes no sense in a frame (landing text, drop zone, footer).
//   ?origin=A[,B...]     accepts messages only from these origins (also repeatable: &origin=B).
//
// Messages are accepted only from the parent window (event.source === window.parent), and from
// an allowed origin when ?origin= is given; anything else is ignored without a word. The parent:
//   'PING'                                              answered with 'PONG' once the page is ready;
//   {perfetto: {buffer, title, fileName, url}}          opens the trace in `buffer` (an ArrayBuffer;
//                                                       a typed array or a Blob also do); `title`
//                                                       names the page, `fileName` the trace, `url`
//                                                       is accepted and not fetched;
//   {perfetto: {timeStart, timeEnd}}                    shows that range, in seconds of the file's
//                                                       clock (its `ts` / 1e6), as Perfetto does;
//   {sightline: {...}}                                  the same fields, plus `t0`/`t1`: the range
//                                                       in µs from the trace start (as the ruler and
//                                                       links count).
// A bare ArrayBuffer is taken as a trace, as Perfetto does. A range that arrives before its trace
// is kept until the trace is shown.
//
// Nothing is posted back but 'PONG' and load status, to the origin that last sent 'PING' or a
// trace: {sightline: {status: "loading" | "ready" | "error" | "empty", name, events?, message?}}.

import { showWindow } from "./url.js";

/** The allowed origins of `?origin=` (normalized), or null when any parent origin is accepted. */
export function allowedOrigins(search = location.search) {
  const values = new URLSearchParams(search).getAll("origin").flatMap((v) => v.split(/[\s,]+/)).filter(Boolean);
  if (!values.length) return null;
  const out = new Set();
  for (const v of values) {
    try {
      out.add(new URL(v).origin);
    } catch {
      // Not an origin: it allows nothing (and a list of only such entries allows nothing at all).
    }
  }
  return out;
}

/** Seconds in the file's clock to ns from the trace start, exact to what a double carries. */
function fromFileSeconds(seconds, originNs) {
  const origin = BigInt(originNs);
  const whole = origin / 1000000000n;
  const rest = Number(origin - whole * 1000000000n);
  return (seconds - Number(whole)) * 1e9 - rest;
}

/**
 * Embedding: `?mode=embedded` and the postMessage protocol.
 * @param {import("./context.js").PageContext} h the page's context (context.js)
 */
export function startEmbedding(h) {
  const params = new URLSearchParams(location.search);
  if (params.get("mode") === "embedded") document.body.dataset.mode = "embedded";
  // Not in a frame: no parent to listen to.
  if (window.parent === window) return;
  const allowed = allowedOrigins();
  let replyTo = null; // the origin status goes to
  let pendingRange = null; // a range that came before its trace
  let lastStatus = null;

  const post = (data) => {
    // A sandboxed parent's origin is "null", which postMessage cannot target; the message goes
    // to window.parent either way.
    if (replyTo) window.parent.postMessage(data, replyTo === "null" ? "*" : replyTo);
  };

  function status() {
    const state = document.body.dataset.state;
    const a = h.app.active;
    const name = state === "loading" ? document.getElementById("progress-name").textContent : a ? a.name : "";
    const msg = { status: state, name };
    if (state === "ready" && a) msg.events = a.summary.events.total;
    if (state === "error") msg.message = document.getElementById("error").textContent;
    const key = JSON.stringify(msg);
    if (key === lastStatus) return;
    lastStatus = key;
    post({ sightline: msg });
  }

  /** Applies {timeStart, timeEnd} (s, file clock) or {t0, t1} (µs from the start); false if none. */
  async function applyRange(r) {
    const a = h.app.active;
    if (!a || document.body.dataset.state !== "ready") return false;
    const span = a.summary.span_ns;
    let t0;
    let t1;
    if (r.t0 !== undefined || r.t1 !== undefined) {
      t0 = r.t0 !== undefined ? r.t0 * 1e3 : 0;
      t1 = r.t1 !== undefined ? r.t1 * 1e3 : span;
    } else {
      const origin = await h.view.call(() => a.session.origin_ns());
      if (origin === undefined) return true;
      t0 = r.timeStart !== undefined ? fromFileSeconds(r.timeStart, origin) : 0;
      t1 = r.timeEnd !== undefined ? fromFileSeconds(r.timeEnd, origin) : span;
      // Seconds that cannot be in the file's clock (the range misses the trace) but fit it when
      // counted from the trace start are taken that way: pages written for a rebased trace.
      const rel0 = (r.timeStart ?? 0) * 1e9;
      const rel1 = r.timeEnd !== undefined ? r.timeEnd * 1e9 : span;
      if ((t1 < 0 || t0 > span) && rel1 >= 0 && rel0 <= span) [t0, t1] = [rel0, rel1];
    }
    showWindow(h, t0, t1);
    return true;
  }

  function openPosted(m, raw) {
    const name = String(m.fileName || m.title || "posted trace");
    if (m.title) document.title = `${m.title} · Sightline`;
    if (raw.byteLength === 0 || raw.size === 0) {
      h.fail(new Error("the posted trace is empty"));
      return;
    }
    const started = performance.now();
    const read = raw instanceof Blob ? raw.arrayBuffer() : Promise.resolve(raw);
    read.then((buf) => h.openBuffer(name, buf, started)).catch((err) => h.fail(err));
  }

  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent) return;
    if (allowed && !allowed.has(ev.origin)) return;
    const d = ev.data;
    if (d === "PING") {
      replyTo = ev.origin;
      window.parent.postMessage("PONG", ev.origin === "null" ? "*" : ev.origin);
      return;
    }
    const raw = d instanceof ArrayBuffer ? d : null;
    const m = raw ? { buffer: raw } : d && typeof d === "object" ? d.sightline || d.perfetto : null;
    if (!m || typeof m !== "object") return;
    const buf = m.buffer;
    const trace = buf instanceof ArrayBuffer || ArrayBuffer.isView(buf) || buf instanceof Blob;
    const r = {};
    for (const k of ["timeStart", "timeEnd", "t0", "t1"]) if (Number.isFinite(m[k])) r[k] = m[k];
    const ranged = Object.keys(r).length > 0;
    if (trace) {
      replyTo = ev.origin;
      // A range sent with the trace is for that trace: it waits until it is shown.
      pendingRange = ranged ? r : null;
      openPosted(m, buf);
    } else if (ranged) {
      if (document.body.dataset.state === "loading") pendingRange = r;
      else applyRange(r).then((shown) => {
        if (!shown) pendingRange = r;
      });
    }
  });

  new MutationObserver(() => {
    if (document.body.dataset.state === "ready" && pendingRange) {
      const r = pendingRange;
      pendingRange = null;
      applyRange(r);
    }
    status();
  }).observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
}
