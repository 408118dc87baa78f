// Links: the address opens a trace and reproduces a view.
//
//   ?url=runs/step42.pt.trace.json.gz     (or #url=...) opens that trace, streamed with progress;
//   &capture=runs/capture_traces/bs_32.json.gz  (repeatable) the graph captures its Graphs tab reads;
//   &t0=1200&t1=3400                      opens it at that time range (µs from the trace start,
//                                         as the ruler counts);
//   &sel=LANE.INDEX                       selects a slice (as numbered by this viewer: stable for
//                                         a given file);
//   &r0=..&r1=..                          selects a time range (µs) and aggregates it.
//
// While a trace is shown, its time range and selection are written back to the hash
// (history.replaceState, so no history entries pile up) and the trace's URL with them when it
// came from a URL, so copying the address reproduces the view. Never the trace's bytes: a trace
// that came from a file or a postMessage leaves no link. The view is also mirrored on <body> as
// data-view-t0 / data-view-t1 (µs), for tests and embedding pages.
//
// URLs on this site always open; another site's only when the page's Content-Security-Policy
// lists it in connect-src (and that site answers with CORS headers): see connectAllowed.

const LINK_KEYS = ["url", "t0", "t1", "sel", "r0", "r1"];
const RANGE_ROWS = 500; // rows of a restored range's table, as a shift-drag gets
const WRITE_DELAY_MS = 250;

/** Microseconds from ns, to the nanosecond, as short decimal text. */
export function us(ns) {
  return String(Number((ns / 1e3).toFixed(3)));
}

function num(v) {
  if (v === null || v === undefined || v.trim() === "") return null;
  const x = Number(v);
  return Number.isFinite(x) ? x : null;
}

/** The link fields of the address: the hash's win over the query's (the hash is what we write). */
export function readLink(loc = location) {
  const query = new URLSearchParams(loc.search);
  const hash = new URLSearchParams(loc.hash.slice(1));
  const get = (k) => (hash.has(k) ? hash.get(k) : query.get(k));
  const sel = /^(\d+)\.(\d+)$/.exec(get("sel") || "");
  return {
    url: get("url") || null,
    urlInHash: hash.has("url"),
    t0: num(get("t0")),
    t1: num(get("t1")),
    sel: sel ? [Number(sel[1]), Number(sel[2])] : null,
    r0: num(get("r0")),
    r1: num(get("r1")),
  };
}

/**
 * Whether the page's Content-Security-Policy (the <meta> in index.html) lets fetch() reach `url`'s
 * origin: a host that wants traces from another site adds it to connect-src there. Understands
 * the source forms a host would write: `*`, `https:`, `https://traces.example.com[:port]`,
 * `*.example.com`. 'self' is this page's origin.
 */
export function connectAllowed(url, doc = document) {
  const meta = /** @type {HTMLMetaElement | null} */ (doc.querySelector('meta[http-equiv="Content-Security-Policy" i]'));
  if (!meta) return true;
  const policy = meta.content.split(";").map((d) => d.trim().split(/\s+/));
  const directive = policy.find((d) => d[0] === "connect-src") || policy.find((d) => d[0] === "default-src");
  if (!directive) return true;
  return directive.slice(1).some((src) => sourceMatches(src, url));
}

function sourceMatches(src, url) {
  if (src === "'self'") return url.origin === location.origin;
  if (src.startsWith("'")) return false;
  if (src === "*") return ["http:", "https:"].includes(url.protocol);
  if (/^[a-z][a-z0-9+.-]*:$/i.test(src)) return url.protocol === src.toLowerCase();
  const m = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*\.)?([^/:]+)(?::(\d+|\*))?/i.exec(src);
  if (!m) return false;
  const [, scheme, wild, host, port] = m;
  if (scheme && `${scheme.toLowerCase()}:` !== url.protocol) return false;
  const h = url.hostname.toLowerCase();
  const want = host.toLowerCase();
  if (wild ? !h.endsWith(`.${want}`) : h !== want) return false;
  const defaultPort = url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : "";
  return port === "*" || (port || defaultPort) === (url.port || defaultPort);
}

/** The time range is ns from the trace start; shows it edge to edge. */
export function showWindow(h, t0ns, t1ns) {
  const s = h.app.active && h.app.active.session;
  if (!s) return false;
  h.view.call(() => s.set_window(t0ns, t1ns));
  h.view.request();
  return true;
}

/** Applies a link's view to the shown trace: selection first (it may scroll), then the window. */
async function applyView(h, link) {
  const s = h.app.active && h.app.active.session;
  if (!s) return;
  if (link.sel) {
    const d = await h.view.call(() => s.select(link.sel[0], link.sel[1]));
    // A slice that is not in this trace: the link is older than the file; nothing to select.
    if (d !== undefined) h.view.cb.onSelect(d);
  }
  if (link.r0 !== null && link.r1 !== null) {
    const table = await h.view.call(() => s.select_range_ns(link.r0 * 1e3, link.r1 * 1e3, RANGE_ROWS));
    if (table !== undefined) h.view.cb.onRange(table);
  }
  if (link.t0 !== null || link.t1 !== null) {
    const span = h.app.active.summary.span_ns;
    showWindow(h, link.t0 !== null ? link.t0 * 1e3 : 0, link.t1 !== null ? link.t1 * 1e3 : span);
  }
}

/** `href` as a link shows it: relative to this page when it is on this site. */
function shortHref(href) {
  const u = new URL(href, location.href);
  if (u.origin !== location.origin) return u.href;
  const dir = location.pathname.replace(/[^/]*$/, "");
  return u.pathname.startsWith(dir) ? u.pathname.slice(dir.length) + u.search : u.pathname + u.search;
}

/**
 * Links: the address opens a trace and follows the view.
 * @param {import("./context.js").PageContext} h the page's context (context.js)
 */
export function startLinks(h) {
  const { app } = h;
  /** The load a link started, so a later hashchange with the same url only moves the view. */
  let linkedHref = null;

  async function open(link) {
    linkedHref = new URL(link.url, location.href).href;
    await h.openUrl(link.url);
    if (app.active && app.active.url === linkedHref) applyView(h, link);
  }

  // ---- the address follows the view ----
  let timer = 0;
  async function write() {
    timer = 0;
    const a = app.active;
    // Nothing shown (loading, failed, cancelled): the address keeps what was asked for.
    if (!a) return;
    const query = new URLSearchParams(location.search);
    const hash = new URLSearchParams(location.hash.slice(1));
    for (const k of LINK_KEYS) hash.delete(k);
    if (a.url) {
      const s = a.session;
      const [win, sel] = await Promise.all([h.view.call(() => s.window_ns()), h.view.call(() => s.selection())]);
      // The trace may have been replaced while the worker answered.
      if (!win || !sel || app.active !== a) return;
      const fromQuery = query.get("url") && new URL(query.get("url"), location.href).href === a.url;
      if (!fromQuery) {
        // The captures named for the address's trace (graphs-view.js) go with it.
        query.delete("url");
        query.delete("capture");
        hash.set("url", shortHref(a.url));
      }
      hash.set("t0", us(win[0]));
      hash.set("t1", us(win[1]));
      if (sel.slice) hash.set("sel", `${sel.slice[0]}.${sel.slice[1]}`);
      if (sel.range) {
        hash.set("r0", us(sel.range[0]));
        hash.set("r1", us(sel.range[1]));
      }
    } else {
      // A trace from a file or a posted buffer: the address must not claim another trace's view.
      for (const k of LINK_KEYS) query.delete(k);
      query.delete("capture");
    }
    const search = query.toString();
    const fragment = hash.toString();
    const next = `${location.pathname}${search ? `?${search}` : ""}${fragment ? `#${fragment}` : ""}`;
    if (next !== location.pathname + location.search + location.hash) history.replaceState(history.state, "", next);
  }
  function schedule() {
    if (!timer) timer = setTimeout(write, WRITE_DELAY_MS);
  }

  const previous = h.view.cb.onFrame;
  h.view.cb.onFrame = (meta) => {
    if (previous) previous(meta);
    const { w } = h.view.areaSize();
    document.body.dataset.viewT0 = us(meta.start_ns);
    document.body.dataset.viewT1 = us(meta.start_ns + meta.ns_per_px * w);
    schedule();
  };
  new MutationObserver(() => {
    if (document.body.dataset.state !== "ready") {
      delete document.body.dataset.viewT0;
      delete document.body.dataset.viewT1;
    }
  }).observe(document.body, { attributes: true, attributeFilter: ["data-state"] });

  // An edited address: another trace, or another view of this one.
  window.addEventListener("hashchange", () => {
    const link = readLink();
    if (!link.url) return;
    const href = new URL(link.url, location.href).href;
    if (app.active && app.active.url === href) applyView(h, link);
    else if (href !== linkedHref || !app.active) open(link);
  });

  const link = readLink();
  // Several `url`s are the ranks of one job, which ranks.js opens.
  // Not when a trace chosen while the page started replaced it, or its opening was cancelled.
  if (link.url && h.openAddress !== false && new URLSearchParams(location.search).getAll("url").length < 2) open(link);
}
