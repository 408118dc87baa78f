// Sightline page: boots the wasm module, reads a trace in slices into a wasm Session, and wires
// the timeline, tables, details and findings. Loaded by the one <script> Trunk writes (see
// Trunk.toml `pattern_script`), which names the wasm-bindgen module and the .wasm file; there is
// no inline script, so the page's Content-Security-Policy can forbid them.

import { TimelineView } from "./timeline.js";
import { renderDetails, renderGap } from "./details.js";
import { renderTable, renderTree } from "./table.js";
import { renderFindings, renderIdle, renderSteps } from "./charts.js";
import { count, duration, mb } from "./format.js";
import { connectAllowed, startLinks } from "./url.js";
import { startEmbedding } from "./embed.js";
import { showNotice } from "./notice.js";
import { setupPythonToggle } from "./pyframes.js";
import { baseChanged, dropped, startCompare } from "./compare.js";

// Bytes per File slice handed to the parser: 16 MB of JSON parse in about 0.1 s, short enough for
// the page to stay responsive and long enough that the per-slice costs (a read, a copy into wasm
// memory, a yield) stay small: 8 MB slices read the 1 GB trace 3% slower with a larger JS heap. gzip
// slices are smaller because each compressed MB holds 10-20 MB of JSON.
const CHUNK = 16 << 20;
const GZ_CHUNK = 1 << 20;
const boot = document.querySelector("script[data-bindings]");
// The paths are relative to the page, not to this module.
const wasm = await import(new URL(boot.dataset.bindings, document.baseURI).href);
const exports = await wasm.default({ module_or_path: new URL(boot.dataset.wasm, document.baseURI) });

const $ = (id) => document.getElementById(id);
const app = {
  /** The shown trace: { session, name, summary } or null. */
  active: null,
  /** Bumped to cancel or supersede a load in progress. */
  loadToken: 0,
  /** Figures of the last load, for tests and benchmarks. */
  timings: null,
  tab: "ops",
  /** Tables of the shown trace, parsed, by tab: filled when a tab is first opened. */
  tables: {},
  opsByShape: false,
  range: null,
};
const phrases = JSON.parse(wasm.wait_kinds());
const view = new TimelineView($("timeline"), $("overview"), wasm, {
  onSelect: showDetails,
  onRange: (table) => {
    app.range = table;
    selectTab("range");
  },
  onError: fail,
});
// For tests and benchmarks: the page's state, and the module's memory (its size is the wasm heap).
window.sightline = { app, view, wasm, memory: exports.memory };
// Kept for the infrastructure's smoke test and for scripts poking at the module.
window.wasmBindings = wasm;

$("version").textContent = `v${wasm.version()}`;

// ---- states --------------------------------------------------------------

function setState(state) {
  document.body.dataset.state = state;
  $("empty").hidden = state !== "empty";
  $("loading").hidden = state !== "loading";
  $("error-box").hidden = state !== "error";
  $("viewer").hidden = state !== "ready";
  for (const id of ["search", "search-prev", "search-next"]) $(id).disabled = state !== "ready";
}

/** Anything thrown while loading or drawing: a readable banner, the page stays usable. */
function fail(err, name) {
  const panic = wasm.last_panic && wasm.last_panic();
  const message = panic ? `${panic}\n(an internal error; the page can open another file)` : (err && err.message) || String(err);
  app.loadToken++;
  drop(app.active);
  app.active = null;
  view.attach(null);
  baseChanged();
  $("error").textContent = message;
  $("error-title").textContent = name ? `${name} could not be opened` : "Something went wrong";
  $("file-name").textContent = "";
  setState("error");
}

function drop(loaded) {
  if (!loaded) return;
  try {
    loaded.session.free();
  } catch {
    // Freeing after a panic may throw; the memory is the module's either way.
  }
}

// ---- loading -------------------------------------------------------------

/** Yields to the browser (input, painting) without setTimeout's 4 ms clamp. */
function yieldToBrowser() {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(0);
  });
}

function progress(stage, read, total, events) {
  $("progress-stage").textContent = stage;
  const bar = $("progress");
  if (total > 0) bar.value = Math.min(1, read / total);
  else bar.removeAttribute("value");
  const of = total > 0 ? ` of ${mb(total)}` : "";
  $("progress-text").textContent = `${mb(read)}${of} read · ${count(events)} events`;
}

/** Chunks of a File/Blob, reading the next slice while the current one is parsed. */
function blobChunks(blob) {
  return async function* () {
    const head = new Uint8Array(await blob.slice(0, 2).arrayBuffer());
    const size = head[0] === 0x1f && head[1] === 0x8b ? GZ_CHUNK : CHUNK;
    const read = (off) => blob.slice(off, off + size).arrayBuffer();
    let next = blob.size > 0 ? read(0) : null;
    for (let off = 0; off < blob.size; off += size) {
      const buf = await next;
      next = off + size < blob.size ? read(off + size) : null;
      yield new Uint8Array(buf);
    }
  };
}

function openFile(file, startedAt = performance.now()) {
  if (!file) return;
  return load(file.name, file.size, blobChunks(file), startedAt);
}

/** A trace from this site (the sample, `?url=`): streamed as it downloads. */
async function openUrl(href, startedAt = performance.now()) {
  let url;
  try {
    url = new URL(href, location.href);
  } catch {
    return fail(new Error(`not a valid URL: ${href}`));
  }
  if (url.origin !== location.origin && !connectAllowed(url)) {
    return fail(new Error(`only traces from this site can be opened by URL (${url.origin} is another site, and this page's Content-Security-Policy does not list it in connect-src; download the file and open it instead)`));
  }
  const name = decodeURIComponent(url.pathname.split("/").pop() || url.pathname);
  let resp;
  try {
    resp = await fetch(url, { credentials: "same-origin" });
  } catch (err) {
    return fail(new Error(`could not fetch it: ${err.message}`), name);
  }
  if (!resp.ok || !resp.body) return fail(new Error(`could not fetch it: HTTP ${resp.status}`), name);
  const total = Number(resp.headers.get("content-length")) || 0;
  const chunks = async function* () {
    const reader = resp.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      // Ends the request on our side too (also when the load is cancelled).
      reader.releaseLock();
      resp.body.cancel().catch(() => {});
    }
  };
  await load(name, total, chunks, startedAt, url.href);
}

/** A trace handed over whole (an embedding page's postMessage): read in slices like a file. */
function openBuffer(name, buffer, startedAt = performance.now()) {
  const bytes = ArrayBuffer.isView(buffer) ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength) : new Uint8Array(buffer);
  const size = bytes[0] === 0x1f && bytes[1] === 0x8b ? GZ_CHUNK : CHUNK;
  const chunks = async function* () {
    for (let off = 0; off < bytes.length; off += size) yield bytes.subarray(off, off + size);
  };
  return load(name, bytes.length, chunks, startedAt);
}

/** `url`: where the trace came from, when it came from a URL (links write it to the hash). */
async function load(name, total, chunks, startedAt, url = null) {
  const token = ++app.loadToken;
  $("progress-name").textContent = name;
  progress("Reading", 0, total, 0);
  setState("loading");
  const session = new wasm.Session();
  const t = { name, bytes: 0, started: startedAt };
  try {
    let read = 0;
    for await (const chunk of chunks()) {
      if (token !== app.loadToken) return session.free();
      session.feed(chunk);
      read += chunk.length;
      progress("Reading", session.bytes_fed(), total, session.events_read());
      await yieldToBrowser();
    }
    if (token !== app.loadToken) return session.free();
    t.bytes = read;
    t.readMs = performance.now() - startedAt;
    progress("Building the timeline", read, total, session.events_read());
    await yieldToBrowser();
    const summary = JSON.parse(session.finish(1000, 500));
    t.finishMs = performance.now() - startedAt - t.readMs;
    progress("Analysing: steps, idle time, findings", read, total, summary.events.total);
    await yieldToBrowser();
    if (token !== app.loadToken) return session.free();
    session.analyse();
    progress("Analysing: operator, kernel and label tables", read, total, summary.events.total);
    await yieldToBrowser();
    if (token !== app.loadToken) return session.free();
    session.build_tables();
    t.analyseMs = performance.now() - startedAt - t.readMs - t.finishMs;
    show({ session, name, summary, url });
    t.readyMs = performance.now() - startedAt;
    t.heapBytes = session.heap_bytes();
    app.timings = t;
  } catch (err) {
    try {
      session.free();
    } catch {
      // See drop().
    }
    if (token === app.loadToken) fail(err, name);
  }
}

function cancel() {
  app.loadToken++;
  setState(app.active ? "ready" : "empty");
  if (app.active) view.request();
}

// ---- the loaded trace ----------------------------------------------------

function show(loaded) {
  drop(app.active);
  app.active = loaded;
  app.range = null;
  app.tables = {};
  const { session, summary, name } = loaded;
  $("file-name").textContent = name;
  $("file-name").title = name;
  $("search").value = "";
  $("search-count").textContent = "";
  showNotice(summary);
  setState("ready");
  view.attach(session);
  view.call(() => session.reset_view());
  setupPythonToggle($("python-frames"), session, `${name}:${summary.file.bytes}`, () => view.request()).catch((err) => view.cb.onError(err));
  const overview = view.overviewData;
  $("overview-label").textContent = overview ? overview.label : "";
  showDetails(null);
  const findings = JSON.parse(session.report("findings"));
  renderFindings($("findings"), $("findings-empty"), findings, showEvidence);
  renderSteps($("steps-chart"), JSON.parse(session.report("steps")), showRange);
  renderIdle($("idle-chart"), JSON.parse(session.report("idle")), phrases, showRange);
  selectTab("ops");
  view.draw();
  status();
  baseChanged();
}

/** A finding's evidence: its first time range shown and marked, its first slice selected. */
function showEvidence(ev) {
  const s = app.active && app.active.session;
  if (!s) return;
  const r = ev.ranges && ev.ranges[0];
  if (r) view.call(() => s.show_evidence(r.start_ns, r.end_ns));
  const first = ev.slices && ev.slices[0];
  if (first) pick(first.lane, first.index);
  else view.request();
  $("timeline").scrollIntoView({ block: "nearest" });
}

function showRange(t0, t1) {
  const s = app.active && app.active.session;
  if (!s) return;
  view.call(() => s.show_evidence(t0, t1));
  view.request();
  $("timeline").scrollIntoView({ block: "nearest" });
}

function showDetails(d) {
  if (d && d.gap) renderGap($("details"), d.gap, phrases, pick);
  else renderDetails($("details"), d, pick);
  view.request();
}

function pick(lane, index) {
  const d = view.call(() => app.active.session.select(lane, index));
  if (d !== undefined) showDetails(JSON.parse(d));
}

function status() {
  const s = app.active && app.active.summary;
  if (!s) return;
  const t = app.timings;
  const lanes = s.lanes.filter((l) => l.slices > 0).length;
  $("status").textContent =
    `${s.schema} · ${count(s.events.total)} events · ${count(s.model.slices)} slices on ${lanes} lanes · span ${duration(s.span_ns)}` +
    (t ? ` · opened in ${(t.readyMs / 1000).toFixed(2)} s` : "");
}

// ---- tables --------------------------------------------------------------

/** A table of the shown trace, computed in wasm on first use. */
function tableOf(kind) {
  const key = kind === "ops" && app.opsByShape ? "ops-shape" : kind;
  if (!(key in app.tables)) {
    const s = app.active.session;
    app.tables[key] = JSON.parse(kind === "names" ? s.names_table(5000) : s.table(kind, app.opsByShape));
  }
  return app.tables[key];
}

const TABS = [
  { id: "ops", title: "Operators", render: opsTable },
  {
    id: "kernels",
    title: "Kernels",
    render: (host) =>
      renderTable(host, tableOf("kernels").rows, { id: "kernels-table", csvName: "kernels.csv", onRowClick: (r) => highlight(r.name), caption: "GPU kernels, memcpy and memset by name" }),
  },
  {
    id: "labels",
    title: "Labels",
    render: (host) =>
      renderTable(host, tableOf("labels").rows, { id: "labels-table", csvName: "labels.csv", onRowClick: (r) => highlight(r.name), caption: "record_function labels: their CPU time and the GPU time launched inside", empty: "No record_function labels in this trace." }),
  },
  { id: "calltree", title: "Call tree", render: (host) => renderTree(host, tableOf("calltree"), { id: "calltree-table", onRowClick: (n) => highlight(n.name) }) },
  { id: "names", title: "All slices by name", render: namesTable },
  { id: "range", title: "Range", render: rangeTable },
];

/** The operator table (PyTorch's key_averages), optionally grouped by input shapes. */
function opsTable(host) {
  const t = tableOf("ops");
  const device = t.gpu_time_us > 0;
  const keep = (k) => (device || !/device/.test(k)) && (t.has_memory || !/mem/.test(k)) && (app.opsByShape || k !== "input_shapes");
  // Input shapes arrive as JSON lists; shown as PyTorch prints them ("[[32, 16], []]").
  const shown = (k, v) => (k === "input_shapes" && Array.isArray(v) ? JSON.stringify(v).replace(/,/g, ", ") : v);
  const rows = t.rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => keep(k)).map(([k, v]) => [k, shown(k, v)])));
  const unattributed = t.unattributed_gpu_us > 0 ? ` · ${duration(t.unattributed_gpu_us * 1e3)} of GPU time not charged to an operator` : "";
  renderTable(host, rows, {
    id: "ops-table",
    csvName: app.opsByShape ? "operators-by-shape.csv" : "operators.csv",
    onRowClick: (r) => highlight(r.name),
    caption: `as prof.key_averages()${app.opsByShape ? ".group_by_input_shape" : ""}${unattributed}`,
  });
  const toggle = document.createElement("label");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.id = "ops-by-shape";
  box.checked = app.opsByShape;
  box.addEventListener("change", () => {
    app.opsByShape = box.checked;
    opsTable(host);
  });
  toggle.append(box, document.createTextNode(" group by input shape"));
  host.querySelector(".table-tools").prepend(toggle);
}

function namesTable(host) {
  const rows = tableOf("names").rows.map((r) => ({
    name: r.name,
    category: r.category,
    count: r.count,
    total_ns: r.total_ns,
    avg_ns: r.avg_ns,
    max_ns: r.max_ns,
  }));
  renderTable(host, rows, { id: "names-table", csvName: "slices-by-name.csv", onRowClick: (r) => highlight(r.name), caption: "wall time per name (nested slices count in each)" });
}

function rangeTable(host) {
  const t = app.range;
  if (!t) {
    host.replaceChildren(Object.assign(document.createElement("p"), { className: "muted", textContent: "Shift-drag on the timeline to aggregate a time range by name." }));
    return;
  }
  const rows = t.rows.map((r) => ({ name: r.name, category: r.category, count: r.count, in_range_ns: r.in_range_ns, total_ns: r.total_ns, max_ns: r.max_ns }));
  renderTable(host, rows, {
    id: "range-table",
    csvName: "range.csv",
    sortKey: "in_range_ns",
    onRowClick: (r) => highlight(r.name),
    caption: `${duration(t.end_ns - t.start_ns)} from ${duration(t.start_ns)}: ${count(t.slices)} slices, ${count(t.groups)} names`,
  });
}

function selectTab(id) {
  app.tab = id;
  const nav = $("tabs");
  nav.replaceChildren();
  for (const t of TABS) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = t.title;
    b.setAttribute("role", "tab");
    b.setAttribute("aria-selected", String(t.id === id));
    b.addEventListener("click", () => selectTab(t.id));
    nav.append(b);
  }
  TABS.find((t) => t.id === id).render($("tab-body"));
}

function highlight(name) {
  const s = app.active && app.active.session;
  if (!s) return;
  const n = view.call(() => s.highlight_name(name));
  $("search").value = "";
  $("search-count").textContent = n === undefined ? "" : `${count(n)} × ${name.length > 40 ? name.slice(0, 40) + "…" : name}`;
  step(true);
}

// ---- search --------------------------------------------------------------

let searchTimer = 0;
function runSearch() {
  const s = app.active && app.active.session;
  if (!s) return;
  const q = $("search").value;
  const n = view.call(() => s.search(q));
  $("search-count").textContent = q ? `${count(n ?? 0)} match${n === 1 ? "" : "es"}` : "";
  view.request();
}

function step(forward) {
  const s = app.active && app.active.session;
  if (!s) return;
  const d = view.call(() => s.search_step(forward));
  if (d) showDetails(JSON.parse(d));
  else view.request();
}

$("search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(runSearch, 150);
});
$("search").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter") {
    ev.preventDefault();
    clearTimeout(searchTimer);
    runSearch();
    step(!ev.shiftKey);
  } else if (ev.key === "Escape") {
    $("search").blur();
  }
});
$("search-next").addEventListener("click", () => step(true));
$("search-prev").addEventListener("click", () => step(false));

// ---- files, drops, keys --------------------------------------------------

$("file-input").addEventListener("change", (ev) => {
  const started = performance.now();
  const file = ev.target.files[0];
  ev.target.value = ""; // the same file can be chosen again
  openFile(file, started);
});
for (const id of ["sample-link", "sample-link-2"]) {
  $(id).addEventListener("click", (ev) => {
    ev.preventDefault();
    openUrl(ev.currentTarget.getAttribute("href"));
  });
}
$("cancel").addEventListener("click", cancel);
$("help-button").addEventListener("click", () => $("help").showModal());
$("help-close").addEventListener("click", () => $("help").close());

let dragDepth = 0;
const hasFiles = (ev) => ev.dataTransfer && Array.from(ev.dataTransfer.types || []).includes("Files");
window.addEventListener("dragenter", (ev) => {
  if (!hasFiles(ev)) return;
  ev.preventDefault();
  dragDepth++;
  $("drop-overlay").hidden = false;
});
window.addEventListener("dragover", (ev) => {
  if (!hasFiles(ev)) return;
  ev.preventDefault();
  ev.dataTransfer.dropEffect = "copy";
});
window.addEventListener("dragleave", () => {
  dragDepth = Math.max(0, dragDepth - 1);
  if (dragDepth === 0) $("drop-overlay").hidden = true;
});
window.addEventListener("drop", (ev) => {
  ev.preventDefault();
  dragDepth = 0;
  $("drop-overlay").hidden = true;
  if (ev.dataTransfer && dropped(ev.dataTransfer.files)) return;
  const file = ev.dataTransfer && ev.dataTransfer.files[0];
  if (file) openFile(file);
});

document.addEventListener("keydown", (ev) => {
  const t = ev.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || $("help").open) return;
  if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === "f" && app.active) {
    ev.preventDefault();
    $("search").focus();
    return;
  }
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === "/" && app.active) {
    ev.preventDefault();
    $("search").focus();
  } else if (ev.key === "?") {
    ev.preventDefault();
    $("help").showModal();
  } else if (document.body.dataset.state === "ready" && view.key(ev)) {
    ev.preventDefault();
  }
});

// ---- start ---------------------------------------------------------------

setState("empty");
window.sightlineReady = true;
document.body.dataset.wasm = "ready";
// Links (`?url=`, `#url=`, time range and selection in the hash) and embedding (`?mode=embedded`,
// the postMessage protocol) live in url.js and embed.js; these are the page's hooks for them.
const hooks = { app, view, wasm, openUrl, openBuffer, openFile, fail };
startEmbedding(hooks);
startLinks(hooks);
startCompare(hooks);
