// <sightline-trace>: a trace's timeline inline in any page, without an iframe.
//
//   <script type="module" src="https://HOST/PATH/js/sightline-trace.js"></script>
//   <sightline-trace src="runs/step42.pt.trace.json.gz" height="480"></sightline-trace>
//
// Attributes: `src` (resolved against the page, like an <img>'s; same site, or a site that sends
// CORS headers), `height` (px, or any CSS length; default 420), `t0`/`t1` (µs from the trace
// start: opens at that time range, like a link's), `loading="lazy"` (reads the trace only when the
// element comes near the viewport). Each element owns its own wasm Session, in its own Web Worker
// when the page is on the viewer's origin (a worker's script must be same-origin; on another
// origin the Session runs on the page's thread, behind the same async calls), and its own canvas;
// several on one page are independent, and they share one compiled module. The
// element mirrors its state in a `state` attribute (loading, ready, error) and fires a
// `sightline-state` event on each change.
//
// It renders the timeline (wheel to zoom, drag to pan, click to select, W/A/S/D when focused), an
// overview strip and a compact strip of the trace's top findings (a click shows the evidence) and
// what it holds, with a link that opens the same trace in the full viewer. Styles live in a shadow root as a constructed
// stylesheet, so a host page's strict Content-Security-Policy (no inline styles) does not block
// them; the host needs script-src and connect-src for this site and 'wasm-unsafe-eval'.
//
// The module finds the wasm-bindgen glue next to the built page (Trunk.toml sets filehash =
// false, so its names are stable: sightline.js and sightline_bg.wasm, or sightline_plain.js and
// sightline_plain_bg.wasm where the browser has no wasm SIMD or the host page sets
// `globalThis.sightlineWasm = "plain"` first, see wasm-choice.js), and the viewer's colours in
// style.css there. All elements of a page run the same build: `customElements.get("sightline-trace").wasmBuild`.

import { TimelineView } from "./timeline.js";
import { count, duration, mb } from "./format.js";
import { Bindings, LocalSession, SessionWorker, workersAllowed } from "./worker/client.js";
import { responseChunks, readInto, urlName } from "./load.js";
import { analyse } from "./analyses.js";
import { el } from "./dom.js";

const BINDINGS = new Bindings(new URL("../sightline.js", import.meta.url).href, new URL("../sightline_bg.wasm", import.meta.url));
const VIEWER = new URL("../index.html", import.meta.url);

/** A Session for one element: in a worker where this page may start one. */
function startSession() {
  return workersAllowed() ? SessionWorker.start(BINDINGS) : LocalSession.start(BINDINGS);
}

let loadingStatics = null;
/** The painter's constants and palette, asked once of the first element's session. */
function statics(s) {
  loadingStatics ??= Promise.all([s.module.constants(), s.module.palette()])
    .then(([constants, palette]) => ({ constants, palette }))
    .catch((err) => {
      // That element's worker ended first (it was removed, say): the next element asks its own.
      loadingStatics = null;
      throw err;
    });
  return loadingStatics;
}

// The element's layout. Its colours are the viewer's own variables (see themeSheet).
const CSS = `
:host { display: block; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
[hidden] { display: none !important; }
.frame { display: flex; flex-direction: column; gap: 4px; height: 100%; box-sizing: border-box;
  border: 1px solid var(--line); border-radius: 6px; background: var(--bg); padding: 6px; }
.head { display: flex; gap: 8px; align-items: baseline; min-width: 0; }
.name { font-family: ui-monospace, Menlo, monospace; font-size: 12px; font-weight: 600; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
.info, .muted { color: var(--muted); font-size: 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.grow { flex: 1; }
a { color: var(--accent); font-size: 12px; white-space: nowrap; }
.overview { display: block; width: 100%; height: 22px; border: 1px solid var(--line); border-radius: 3px;
  box-sizing: border-box; cursor: pointer; }
.box { position: relative; flex: 1; min-height: 120px; border: 1px solid var(--line); border-radius: 3px; overflow: hidden; }
.timeline { display: block; width: 100%; height: 100%; outline: none; }
.timeline:focus-visible { box-shadow: inset 0 0 0 2px var(--accent); }
.timeline.dragging { cursor: grabbing; }
.tooltip { position: absolute; pointer-events: none; background: var(--panel); border: 1px solid var(--line);
  border-radius: 5px; padding: 4px 8px; font-size: 12px; max-width: 30rem; z-index: 3;
  box-shadow: 0 2px 8px rgba(0, 0, 0, 0.18); }
.tooltip .name { word-break: break-all; white-space: normal; }
.progress { display: flex; gap: 8px; align-items: center; flex: 1; justify-content: center; }
.progress progress { width: min(20rem, 60%); }
.error { flex: 1; background: var(--error-bg); border: 1px solid var(--error-line); border-radius: 4px;
  padding: 8px 10px; white-space: pre-wrap; overflow: auto; }
.strip { display: flex; gap: 6px; flex-wrap: nowrap; overflow-x: auto; list-style: none; margin: 0; padding: 0; min-height: 1.6em; }
.strip li { border: 1px solid var(--line); border-left: 3px solid var(--accent); border-radius: 3px; padding: 1px 8px;
  font-size: 12px; white-space: nowrap; background: var(--panel); }
.strip li.warning, .strip li.critical { border-left-color: var(--warn-line); }
.strip li.critical { font-weight: 600; }
.strip li.fact { border-left-color: var(--line); color: var(--muted); }
.strip li.finding { cursor: pointer; }
.strip li.finding:hover { border-color: var(--accent); }
`;

const STYLE = new URL("../style.css", import.meta.url);
let loadingTheme = null;
/**
 * The viewer's colour variables, light and dark, as they are in style.css (its `:root` rules,
 * also inside media queries), restated for `:host`: the painter reads them from the canvas, and
 * there is one list of them, not a copy here that could drift.
 */
function themeSheet() {
  loadingTheme ??= fetch(STYLE)
    .then((resp) => {
      if (!resp.ok) throw new Error(`could not load the viewer's styles (${STYLE.href}): HTTP ${resp.status}`);
      return resp.text();
    })
    .then(async (text) => {
      const all = new CSSStyleSheet();
      await all.replace(text);
      const isRoot = (r) => r instanceof CSSStyleRule && r.selectorText === ":root";
      const vars = (r) => [...r.style].filter((p) => p.startsWith("--")).map((p) => `${p}: ${r.style.getPropertyValue(p)};`).join(" ");
      let css = "";
      for (const rule of all.cssRules) {
        if (isRoot(rule)) css += `:host { ${vars(rule)} }\n`;
        else if (rule instanceof CSSMediaRule) {
          const inner = [...rule.cssRules].filter(isRoot).map((r) => `:host { ${vars(r)} }`).join(" ");
          if (inner) css += `@media ${rule.media.mediaText} { ${inner} }\n`;
        }
      }
      const theme = new CSSStyleSheet();
      theme.replaceSync(css);
      return theme;
    });
  return loadingTheme;
}

let sheet = null;
function styles() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}

export class SightlineTrace extends HTMLElement {
  static observedAttributes = ["src", "height"];
  /** Which wasm build the elements of this page run: "simd128" or "plain" (wasm-choice.js). */
  static wasmBuild = BINDINGS.build;

  constructor() {
    super();
    /** The worker (or page-thread stand-in) that holds this element's Session, and its calls. */
    this.worker = null;
    this.session = null;
    this.view = null;
    this.loadToken = 0;
    /** Figures of the last load: { bytes, readyMs }. */
    this.timings = null;
    const root = this.attachShadow({ mode: "open" });
    root.adoptedStyleSheets = [styles()];
    const $ = {};
    $.frame = el("div", "frame");
    $.head = el("div", "head");
    $.name = el("span", "name");
    $.info = el("span", "info");
    $.open = el("a", null, "Open in Sightline ↗");
    $.open.target = "_blank";
    $.open.rel = "noopener";
    $.open.hidden = true;
    $.head.append($.name, $.info, el("span", "grow"), $.open);
    $.progress = el("div", "progress");
    $.bar = el("progress");
    $.bar.max = 1;
    $.progressText = el("span", "muted");
    $.progress.append($.bar, $.progressText);
    $.error = el("div", "error");
    $.error.setAttribute("role", "alert");
    $.overview = el("canvas", "overview");
    $.overview.title = "Click to jump";
    $.box = el("div", "box");
    $.canvas = el("canvas", "timeline");
    $.canvas.tabIndex = 0;
    $.tooltip = el("div", "tooltip");
    $.tooltip.hidden = true;
    $.box.append($.canvas, $.tooltip);
    $.strip = el("ul", "strip");
    $.strip.setAttribute("aria-label", "What this trace holds");
    $.frame.append($.head, $.progress, $.error, $.overview, $.box, $.strip);
    root.append($.frame);
    this.$ = $;
    // A constructor may not set attributes (document.createElement would throw): the state
    // attribute starts in connectedCallback.
    this.state = "empty";
    for (const part of [$.progress, $.error, $.overview, $.box, $.strip]) part.hidden = true;
    this.applyHeight();
  }

  connectedCallback() {
    if (!this.hasAttribute("state")) this.setAttribute("state", this.state);
    if (this.getAttribute("loading") === "lazy" && !this.session && "IntersectionObserver" in window) {
      this.lazy?.disconnect();
      this.lazy = new IntersectionObserver(
        (entries) => {
          if (!entries.some((e) => e.isIntersecting)) return;
          this.lazy.disconnect();
          this.lazy = null;
          this.load();
        },
        { rootMargin: "400px" },
      );
      this.lazy.observe(this);
    } else if (!this.session && this.state !== "loading") {
      this.load();
    }
  }

  disconnectedCallback() {
    this.lazy?.disconnect();
    this.lazy = null;
    this.loadToken++;
    this.close();
    if (this.state === "loading") this.setState("empty");
  }

  attributeChangedCallback(name, old, value) {
    if (name === "height") this.applyHeight();
    else if (name === "src" && old !== null && old !== value && this.isConnected) this.load();
  }

  applyHeight() {
    const h = (this.getAttribute("height") || "").trim();
    this.$.frame.style.height = /^\d+(\.\d+)?$/.test(h) ? `${h}px` : h || "420px";
  }

  setState(state) {
    this.state = state;
    this.setAttribute("state", state);
    const $ = this.$;
    $.progress.hidden = state !== "loading";
    $.error.hidden = state !== "error";
    $.overview.hidden = state !== "ready";
    $.box.hidden = state !== "ready";
    $.strip.hidden = state !== "ready";
    this.dispatchEvent(new CustomEvent("sightline-state", { detail: { state } }));
  }

  close() {
    if (this.view) this.view.attach(null);
    // Ending the worker frees the trace at once, also in the middle of a load.
    if (this.worker) this.worker.terminate();
    this.worker = null;
    this.session = null;
  }

  fail(err) {
    this.loadToken++;
    this.close();
    this.$.error.textContent = (err && err.message) || String(err);
    this.setState("error");
  }

  progress(read, total, events) {
    if (total > 0) this.$.bar.value = Math.min(1, read / total);
    else this.$.bar.removeAttribute("value");
    this.$.progressText.textContent = `${mb(read)}${total > 0 ? ` of ${mb(total)}` : ""} · ${count(events)} events`;
  }

  /** Reads `src` into a new Session and shows it; a newer load or removal cancels this one. */
  async load() {
    const token = ++this.loadToken;
    const started = performance.now();
    const src = this.getAttribute("src");
    const $ = this.$;
    this.close();
    $.open.hidden = true;
    $.info.textContent = "";
    if (!src) {
      $.name.textContent = "";
      this.setState("empty");
      return;
    }
    const url = new URL(src, document.baseURI);
    const name = urlName(url);
    $.name.textContent = name;
    $.name.title = url.href;
    this.progress(0, 0, 0);
    this.setState("loading");
    let worker = null;
    try {
      const theme = themeSheet();
      worker = await startSession();
      if (token !== this.loadToken) return worker.terminate();
      this.worker = worker;
      worker.onfailure = (message) => {
        if (this.worker === worker) this.fail(new Error(message));
      };
      const painter = statics(worker);
      this.shadowRoot.adoptedStyleSheets = [await theme, styles()];
      if (token !== this.loadToken) return;
      const resp = await fetch(url, { credentials: "same-origin" });
      if (!resp.ok || !resp.body) throw new Error(`could not fetch ${name}: HTTP ${resp.status}`);
      const total = Number(resp.headers.get("content-length")) || 0;
      const { summary, bytes } = await readInto(worker, responseChunks(resp), {
        width: 800,
        height: 300,
        onProgress: (_, read, events) => token === this.loadToken && this.progress(read, total, events),
      });
      if (token !== this.loadToken) return;
      this.session = worker.session;
      await this.show(await painter, summary, url);
      this.timings = { bytes, readyMs: performance.now() - started };
    } catch (err) {
      if (token === this.loadToken) this.fail(err);
      else if (worker && worker !== this.worker) worker.terminate();
    }
  }

  async show(painter, summary, url) {
    const $ = this.$;
    this.setState("ready");
    if (!this.view) {
      this.view = new TimelineView($.canvas, $.overview, painter, {
        tooltip: $.tooltip,
        onSelect: (d) => this.selected(d),
        onRange: (t) => {
          $.info.textContent = `range ${duration(t.end_ns - t.start_ns)}: ${count(t.slices)} slices`;
        },
        onError: (err) => this.fail(err),
      });
      $.canvas.addEventListener("keydown", (ev) => {
        if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
        if (this.view.key(ev)) ev.preventDefault();
      });
    }
    const attached = this.view.attach(this.session);
    this.view.call(() => this.session.reset_view());
    const t0 = Number(this.getAttribute("t0"));
    const t1 = Number(this.getAttribute("t1"));
    const ranged = this.hasAttribute("t0") && this.hasAttribute("t1") && Number.isFinite(t0) && Number.isFinite(t1);
    if (ranged) this.view.call(() => this.session.set_window(t0 * 1e3, t1 * 1e3));
    await attached;
    await this.view.draw();
    $.open.href = `${VIEWER.href}#url=${encodeURIComponent(url.href)}${ranged ? `&t0=${t0}&t1=${t1}` : ""}`;
    $.open.hidden = false;
    $.info.textContent = `${count(summary.events.total)} events · ${duration(summary.span_ns)}`;
    this.renderStrip(summary);
  }

  selected(d) {
    this.$.info.textContent = d ? `${d.name} · ${duration(d.dur_ns)}` : "";
    this.view.request();
  }

  /** What the trace holds, then (after the timeline is drawn: they take a pass over the trace, in
   * the worker) its findings, worst first; a click on a finding shows its evidence. */
  renderStrip(summary) {
    const facts = [];
    const gpu = summary.lanes.filter((l) => l.kind === "gpu" && l.slices > 0).length;
    const cpu = summary.lanes.filter((l) => l.kind !== "gpu" && l.slices > 0).length;
    facts.push({ cls: "fact", text: `${count(summary.model.slices)} slices` });
    facts.push({ cls: "fact", text: `${cpu} CPU lane${cpu === 1 ? "" : "s"}, ${gpu} device stream${gpu === 1 ? "" : "s"}` });
    const notes = (summary.diagnostics || []).reduce((n, d) => n + d.count, 0);
    if (summary.truncated) facts.push({ cls: "warning", text: "truncated: shown up to the cut" });
    else if (notes) facts.push({ cls: "fact", text: `${count(notes)} events repaired or skipped` });
    const paint = (items) =>
      this.$.strip.replaceChildren(
        ...items.map((i) => {
          const li = el("li", i.cls, i.text);
          if (i.title) li.title = i.title;
          if (i.onClick) {
            li.tabIndex = 0;
            li.setAttribute("role", "button");
            li.addEventListener("click", i.onClick);
            li.addEventListener("keydown", (ev) => ev.key === "Enter" && i.onClick());
          }
          return li;
        }),
      );
    paint(facts);
    const session = this.session;
    (async () => {
      // The page's analyses (steps, idle gaps, findings), a slice at a time so frames are drawn
      // meanwhile; they also shade idle gaps on GPU lanes. The tables' forest is not needed here.
      await this.view.call(() => analyse(session, { until: "analyses" }));
      const found = await this.view.call(() => session.findings());
      if (this.session !== session || found === undefined) return;
      this.view.request();
      this.findings = found;
      const shown = found.slice(0, 3).map((f) => ({
        cls: `finding ${f.severity}`,
        text: f.title,
        title: `${f.detail}\n\n${f.advice}`,
        onClick: () => this.showEvidence(f),
      }));
      if (found.length > 3) shown.push({ cls: "fact", text: `+${found.length - 3} more`, title: found.slice(3).map((f) => f.title).join("\n") });
      paint([...shown, ...facts]);
    })();
  }

  /** Brings a finding's first evidence into view: its time range, else its slice. */
  async showEvidence(f) {
    const s = this.session;
    if (!s || !f.evidence) return;
    const range = f.evidence.ranges && f.evidence.ranges[0];
    const slice = f.evidence.slices && f.evidence.slices[0];
    // Both calls are sent before either answer is awaited, so a call made after this one (and
    // the next frame) sees the evidence shown.
    const details = slice ? this.view.call(() => s.select(slice.lane, slice.index)) : null;
    if (range) this.view.call(() => s.show_evidence(range.start_ns, range.end_ns));
    this.view.request();
    const d = details && (await details);
    if (d !== undefined && d !== null && this.session === s) this.selected(d);
  }
}

if (!customElements.get("sightline-trace")) customElements.define("sightline-trace", SightlineTrace);
