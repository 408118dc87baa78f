// Sightline page: starts the Session workers, reads a trace into one, and wires the timeline,
// tables, details and findings. Loaded by the one <script> Trunk writes (see Trunk.toml
// `pattern_script`), which names the wasm-bindgen module and the .wasm file; there is no inline
// script, so the page's Content-Security-Policy can forbid them. The page's thread holds no wasm
// Session: each trace lives in its own Web Worker (worker/), and every Session call is an await.

import { TimelineView } from "./timeline.js";
import { renderDetails, renderGap } from "./details.js";
import { declaredColumns, renderTable, renderTabs, renderTree } from "./table.js";
import { renderFindings, renderIdle, renderSteps } from "./charts.js";
import { count, duration, mb } from "./format.js";
import { connectAllowed, startLinks } from "./url.js";
import { startEmbedding } from "./embed.js";
import { showNotice } from "./notice.js";
import { setupPythonToggle } from "./pyframes.js";
import { baseChanged, dropped, startCompare } from "./compare.js";
import { openFiles, startRanks, takeDrop } from "./ranks.js";
import { startMemory } from "./memory.js";
import { Bindings } from "./worker/client.js";
import { Workers, blobChunks, bufferChunks, readInto, readSnapshotInto, responseChunks, sniff, urlName } from "./load.js";
import { flopsColumns, renderRoofline, withFlops } from "./roofline.js";
import { analyse as analyseInSlices, AnalysesTooLarge } from "./analyses.js";
import { startLogdir } from "./logdir.js";
import { renderOverview } from "./overview.js";
import { kernelColumns } from "./kernel-columns.js";
import { startModules } from "./modules-view.js";
import { startGraphs } from "./graphs-view.js";
import { startCompiled } from "./compiled-view.js";
import { startCritical } from "./critical.js";
import { dropContents, queueOpens } from "./starting.js";
import { ranksOfOneJob } from "./pair.js";
import { startHeader } from "./header.js";
import { renderRange } from "./range-table.js";
import { startSnapshots } from "./snapshot.js";
import { errorText } from "./errors.js";

// A trace chosen, dropped or linked before the page is ready is kept and shown as starting
// (starting.js), and opened at the end of this script.
const starting = queueOpens();

const boot = /** @type {HTMLScriptElement} */ (document.querySelector("script[data-bindings]"));
// The paths are relative to the page, not to this module. They name the simd128 build; Bindings
// loads the plain one instead where the browser has no wasm SIMD or the address says `?wasm=plain`
// (wasm-choice.js). Which one runs: `body[data-wasm-build]`.
const bindings = new Bindings(boot.dataset.bindings, boot.dataset.wasm);
document.body.dataset.wasmBuild = bindings.build;
const workers = new Workers(bindings);
workers.refillOnIntent(document);
// The module-level values the painter and the charts need come from the first worker, which is
// then the spare that the first load takes.
const [constants, palette, waitKinds, version] = await workers
  .refill()
  .then((first) => Promise.all([first.module.constants(), first.module.palette(), first.module.wait_kinds(), first.module.version()]))
  .catch((err) => {
    // Nothing can open without the module: say why instead of a page that never gets ready.
    starting.take();
    document.getElementById("loading").hidden = true;
    document.getElementById("error").textContent = `The viewer could not start: ${errorText(err)}`;
    document.getElementById("error-box").hidden = false;
    document.getElementById("empty").hidden = true;
    document.body.dataset.state = "error";
    throw err;
  });

// How long the page waits, once ready, before its first worker reads the warm-up trace.
const WARM_UP_AFTER_MS = 300;

const $ = (id) => document.getElementById(id);
const app = {
  /** The shown trace: { worker, session (its calls), name, summary, url } or null. */
  active: null,
  /** The worker of the load in progress, or null. */
  loading: null,
  /** Bumped to cancel or supersede a load in progress. */
  loadToken: 0,
  /** Figures of the last load, for tests and benchmarks. */
  timings: null,
  tab: "ops",
  /** Tables of the shown trace, by tab: promises of the parsed JSON, made when a tab is first opened. */
  tables: {},
  opsByShape: false,
  range: null,
};
const phrases = waitKinds;
const view = new TimelineView($("timeline"), $("overview"), { constants, palette }, {
  onSelect: showDetails,
  rangeLabel: $("range-duration"),
  onRange: (table) => {
    app.range = table;
    selectTab("range");
  },
  onError: fail,
});
// The one context every feature is handed (context.js); features add the state they own. For
// tests and benchmarks it is `window.sightline`.
/** @type {import("./context.js").PageContext} */
const cx = {
  app,
  view,
  bindings,
  workers,
  version,
  wasmBuild: bindings.build,
  pick,
  fail,
  showRange,
  tableOf,
  withTable,
  highlight,
  showTabs,
  captured,
  openUrl,
  openBuffer,
  openFile,
  setState,
  stopLoading,
  openAddress: false,
};
window.sightline = cx;
// The memory chart under the timeline, its panel and its tab (memory.js).
const memory = (cx.memory = startMemory(cx));
// The Modules tab, listed once the shown trace's module table has rows (modules-view.js).
const modules = (cx.modules = startModules(cx));
const graphs = (cx.graphs = startGraphs(cx));
const compiled = (cx.compiled = startCompiled(cx));
// The Critical path toggle, its panel and the what-if (critical.js).
const critical = (cx.critical = startCritical(cx));
// A memory snapshot, opened in place of a trace (snapshot.js).
const snapshots = (cx.snapshots = startSnapshots(cx));

$("version").textContent = `v${version}`;
$("version").title = `wasm module: ${bindings.build}`;

// ---- states --------------------------------------------------------------

function setState(state) {
  document.body.dataset.state = state;
  $("empty").hidden = state !== "empty";
  $("loading").hidden = state !== "loading";
  $("error-box").hidden = state !== "error";
  $("viewer").hidden = state !== "ready";
  $("snapshot").hidden = state !== "snapshot";
  for (const id of ["search", "search-prev", "search-next"]) (/** @type {HTMLInputElement | HTMLButtonElement} */ ($(id))).disabled = state !== "ready";
}

/**
 * Anything thrown while loading or drawing, or a worker that died: a readable banner, the page
 * stays usable (the next trace gets a new worker).
 */
function fail(err, name) {
  const message = (err && err.message) || String(err);
  app.loadToken++;
  drop(app.loading);
  app.loading = null;
  closeTrace();
  snapshots.close();
  $("error").textContent = message;
  $("error-title").textContent = name ? `${name} could not be opened` : "Something went wrong";
  $("file-name").textContent = "";
  setState("error");
}

/** Ends the shown trace's worker, if any, and empties the views of it. */
function closeTrace() {
  drop(app.active && app.active.worker);
  app.active = null;
  delete document.body.dataset.analyses;
  view.attach(null);
  memory.attach(null);
  critical.attach(null);
  baseChanged();
}

/** Ends a worker and frees its memory at once (a Session's memory is its worker's). */
function drop(worker) {
  if (worker) worker.terminate();
}

// ---- loading -------------------------------------------------------------

const STAGES = { reading: "Reading", building: "Building the timeline" };

/** The load's progress: its stage, the bytes read and, for a trace, its events so far (`null` for
 * a memory snapshot, whose entries are counted only once it is read). */
function progress(stage, read, total, events) {
  document.body.dataset.stage = stage;
  stage = STAGES[stage] || stage;
  $("progress-stage").textContent = stage;
  const bar = /** @type {HTMLProgressElement} */ ($("progress"));
  if (total > 0) bar.value = Math.min(1, read / total);
  else bar.removeAttribute("value");
  const of = total > 0 ? ` of ${mb(total)}` : "";
  const what = events == null ? "a memory snapshot" : `${count(events)} events`;
  $("progress-text").textContent = `${mb(read)}${of} read · ${what}`;
}

function openFile(file, startedAt = performance.now()) {
  if (!file) return undefined;
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
  const name = urlName(url);
  // Another trace opened, or a Cancel, while the response was awaited wins over this one.
  const token = app.loadToken;
  let resp;
  try {
    resp = await fetch(url, { credentials: "same-origin" });
  } catch (err) {
    if (token === app.loadToken) fail(new Error(`could not fetch it: ${errorText(err)}`), name);
    return;
  }
  if (token !== app.loadToken) return resp.body && resp.body.cancel().catch(() => {});
  if (!resp.ok || !resp.body) return fail(new Error(`could not fetch it: HTTP ${resp.status}`), name);
  const total = Number(resp.headers.get("content-length")) || 0;
  await load(name, total, responseChunks(resp), startedAt, url.href);
}

/** A trace handed over whole (an embedding page's postMessage): read in slices like a file. */
function openBuffer(name, buffer, startedAt = performance.now()) {
  const { total, chunks } = bufferChunks(buffer);
  return load(name, total, chunks, startedAt);
}

/**
 * Reads a trace into a new worker and shows it as soon as its model exists (the timeline drawn);
 * the analyses then run in the background (`analyse`). Resolves once the timeline is drawn.
 * `url`: where the trace came from, when it came from a URL (links write it to the hash).
 */
async function load(name, total, chunks, startedAt, url = null) {
  const token = ++app.loadToken;
  drop(app.loading);
  app.loading = null;
  $("progress-name").textContent = name;
  progress("reading", 0, total, 0);
  setState("loading");
  const t = { name, bytes: 0, started: startedAt };
  let worker = null;
  try {
    worker = await workers.take();
    if (token !== app.loadToken) return drop(worker);
    app.loading = worker;
    worker.onfailure = (message) => {
      if (app.loading === worker) fail(new Error(message), name);
    };
    // A memory snapshot is told apart by its first bytes and shown by snapshot.js instead.
    const sniffed = await sniff(chunks);
    if (token !== app.loadToken) return drop(worker);
    if (sniffed.kind === "snapshot") return await showSnapshot(worker, name, sniffed.chunks, total, token, t);
    chunks = sniffed.chunks;
    const { summary, bytes } = await readInto(worker, chunks, {
      width: 1000,
      height: 500,
      onProgress: (stage, read, events) => {
        if (token !== app.loadToken) return;
        if (stage === "building") t.readMs = performance.now() - startedAt;
        progress(stage, read, total, events);
      },
    });
    if (token !== app.loadToken) return drop(worker);
    t.bytes = bytes;
    t.finishMs = performance.now() - startedAt - t.readMs;
    app.loading = null;
    app.timings = t;
    await show({ worker, session: worker.session, name, summary, url });
    t.readyMs = performance.now() - startedAt;
    status();
    analyse(app.active, t);
  } catch (err) {
    drop(worker);
    if (token === app.loadToken) fail(err, name);
  }
}

/** Reads a memory snapshot into `worker` (load()'s, which handles its failure) and shows it in place of the trace. */
async function showSnapshot(worker, name, chunks, total, token, t) {
  const { report, bytes } = await readSnapshotInto(worker, chunks, {
    onProgress: (stage, read) => {
      if (token !== app.loadToken) return;
      if (stage === "building") t.readMs = performance.now() - t.started;
      progress(stage, read, total, null);
    },
  });
  if (token !== app.loadToken) return drop(worker);
  app.loading = null;
  t.bytes = bytes;
  t.finishMs = performance.now() - t.started - t.readMs;
  app.timings = t;
  worker.onfailure = (message) => fail(new Error(message), name);
  closeTrace();
  $("file-name").textContent = "";
  setState("snapshot");
  await snapshots.show({ worker, name, report });
  t.readyMs = performance.now() - t.started;
  // For benchmarks: the worker's wasm memory once the timeline is drawn.
  t.heapBytes = await worker.module.memory_bytes();
}

/**
 * The analyses a panel shows (steps, idle, findings; then the operator forest the tables read),
 * in the worker after the timeline is drawn, a slice at a time (analyses.js), so frames asked for
 * meanwhile are drawn between slices; the panels say "analysing" until they arrive. Tables
 * opened meanwhile wait for the forest (`tablesBuilt`).
 */
function analyse(loaded, t) {
  const s = loaded.session;
  const mine = () => app.active === loaded;
  // For tests and benchmarks: the steps made so far (analyses.js).
  loaded.analysis = {};
  const onAnalyses = async () => {
    const [findings, steps, idle, notes] = await Promise.all([s.findings(), s.steps(), s.idle(), s.recording()]);
    if (!mine()) return;
    // A finding's fix with a saving opens as a what-if.
    const onWhatIf = (f) => critical.pickEdits(f.saving.edits);
    renderFindings($("findings"), $("findings-empty"), findings, showEvidence, onWhatIf);
    // Notes on how the trace was recorded: their own list, after every cost.
    renderFindings($("recording"), $("findings-empty"), notes, showEvidence, null, { keepEmpty: true });
    $("recording-title").hidden = notes.length === 0;
    renderOverview($("overview-summary"), steps, findings, { onEvidence: showEvidence, onRange: showRange, findingsPanel: $("findings-panel") });
    critical.analysed(s);
    renderSteps($("steps-chart"), steps, showRange);
    renderIdle($("idle-chart"), idle, phrases, showRange);
    // The idle gaps are now shaded on the GPU lanes.
    view.request();
  };
  (async () => {
    await analyseInSlices(s, { onAnalyses, progress: loaded.analysis });
    loaded.settleTables.resolve();
    if (!mine()) return;
    t.analyseMs = performance.now() - t.started - t.readyMs;
    t.analysedMs = performance.now() - t.started;
    t.analyseSteps = loaded.analysis.steps;
    t.analyseStepMs = loaded.analysis.stepMs;
    t.heapBytes = await s.heap_bytes();
    document.body.dataset.analyses = "ready";
    memory.analysed(s);
    modules.analysed(loaded);
    graphs.analysed(loaded);
    compiled.analysed(loaded);
    status();
  })().catch((err) => {
    loaded.settleTables.reject(err);
    if (!mine()) return;
    // Analyses that would not fit never started: the trace stays open without them.
    if (err instanceof AnalysesTooLarge) return notAnalysed(err.message);
    fail(err, loaded.name);
  });
}

/** Says in each analysis' place why the analyses did not run; the timeline stays. */
function notAnalysed(message) {
  for (const id of ["overview-summary", "findings", "steps-chart", "idle-chart"]) $(id).replaceChildren(notice(message));
  document.body.dataset.analyses = "too-large";
  status();
}

function notice(message) {
  return Object.assign(document.createElement("p"), { className: "muted not-analysed", textContent: message });
}

/** Stops the load at once, whatever its worker is doing, and shows what was shown before. */
function cancel(ev) {
  const stage = document.body.dataset.stage;
  stopLoading();
  setState(app.active ? "ready" : snapshots.shown() ? "snapshot" : "empty");
  if (app.active) view.request();
  // For benchmarks: from the click's timestamp to here (the page is back in its previous state).
  if (ev) app.lastCancel = { stage, ms: performance.now() - ev.timeStamp };
}

/**
 * Ends the load in progress, if any, leaving the page's state to the caller: a job opened while a
 * trace was loading is the user's later choice, and that trace must not replace it when it ends.
 */
function stopLoading() {
  app.loadToken++;
  drop(app.loading);
  app.loading = null;
}

// ---- the loaded trace ----------------------------------------------------

async function show(loaded) {
  const previous = app.active;
  app.active = loaded;
  app.range = null;
  app.tables = {};
  const { session, summary, name } = loaded;
  loaded.worker.onfailure = (message) => {
    if (app.active === loaded) fail(new Error(message), name);
  };
  // Settled by analyse() once the operator forest is built.
  loaded.tablesBuilt = new Promise((resolve, reject) => (loaded.settleTables = { resolve, reject }));
  loaded.tablesBuilt.catch(() => {});
  $("file-name").textContent = name;
  $("file-name").title = name;
  (/** @type {HTMLInputElement} */ ($("search"))).value = "";
  $("search-count").textContent = "";
  showNotice(summary);
  for (const id of ["overview-summary", "findings", "steps-chart", "idle-chart"]) $(id).replaceChildren(analysing());
  $("findings-empty").hidden = true;
  $("recording").replaceChildren();
  $("recording-title").hidden = true;
  document.body.dataset.analyses = "running";
  setState("ready");
  // With the state: shows "Compare with…", and closes a comparison made against the trace shown before.
  baseChanged();
  // The previous trace's worker goes only now: until here a cancel could return to it.
  drop(previous && previous.worker);
  snapshots.close();
  const attached = view.attach(session);
  memory.attach(session);
  critical.attach(session);
  view.call(() => session.reset_view());
  // The toggle is set before the first frame, so a trace whose frames were hidden opens without them.
  await setupPythonToggle($("python-frames"), session, `${name}:${summary.file.bytes}`, () => view.request());
  await attached;
  const overview = view.overviewData;
  $("overview-label").textContent = overview ? overview.label : "";
  showDetails(null);
  selectTab("ops");
  await view.draw();
}

function analysing() {
  return Object.assign(document.createElement("p"), { className: "muted analysing", textContent: "Analysing…" });
}

/** A finding's evidence: its first time range shown and marked, its first slice selected. */
function showEvidence(ev) {
  const s = app.active && app.active.session;
  if (!s) return;
  const r = ev.ranges && ev.ranges[0];
  if (r) view.call(() => s.show_evidence(r.start_ns, r.end_ns));
  // The frame is asked for now, not after the selection's reply: the worker answers in order,
  // so it shows the range, and whoever waits for the view's idle sees the range marked.
  view.request();
  const first = ev.slices && ev.slices[0];
  if (first) pick(first.lane, first.index);
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
  else renderDetails($("details"), d, pick, { onFrame: frameSlice, fullName: (lane, index) => view.call(() => app.active.session.full_name(lane, index)) });
  // A slice picked while the critical path is shown is named in the what-if.
  if (d && !d.gap) critical.pickName(d.name);
  view.request();
}

async function pick(lane, index) {
  const d = await view.call(() => app.active.session.select(lane, index));
  if (d !== undefined) showDetails(d);
}

/** Selects a slice and fits the view to it (as F does). */
async function frameSlice(lane, index) {
  const s = app.active && app.active.session;
  if (!s) return;
  await pick(lane, index);
  await view.call(() => s.fit_selection());
  view.request();
}

function status() {
  const s = app.active && app.active.summary;
  if (!s) return;
  const t = app.timings;
  const lanes = s.lanes.filter((l) => l.slices > 0).length;
  $("status").textContent =
    `${s.schema} · ${count(s.events.total)} events · ${count(s.model.slices)} slices on ${lanes} lanes · span ${duration(s.span_ns)}` +
    (t && t.readyMs ? ` · opened in ${(t.readyMs / 1000).toFixed(2)} s` : "") +
    (t && t.analysedMs ? ` · analysed in ${(t.analysedMs / 1000).toFixed(2)} s` : "");
}

// ---- tables --------------------------------------------------------------

/** A table of the shown trace (a promise of its answer), computed in the worker on first use. */
function tableOf(kind) {
  const key = kind === "ops" && app.opsByShape ? "ops-shape" : kind;
  if (!(key in app.tables)) {
    /** @type {{ session: import("./worker/client.js").SessionClient, tablesBuilt: Promise<void> }} */
    const { session: s, tablesBuilt } = app.active;
    const byShape = app.opsByShape;
    /** The question each tab asks (the tables as the query layer's request types). */
    const ask = {
      ops: () => s.ops(byShape),
      kernels: () => s.kernels(),
      labels: () => s.labels(),
      modules: () => s.modules(),
      graphs: () => s.graphs(),
      compiled: () => s.compiled(),
      calltree: () => s.call_tree(),
      flops: () => s.flops_report(),
    };
    if (kind !== "names" && !(kind in ask)) throw new Error(`no table named '${kind}'`);
    // The tables read the operator forest: asked for only once it is built, so that the first
    // frames go to the worker ahead of the analyses.
    // "flops" (the roofline's rows) needs the analyses, which are done before the forest is.
    app.tables[key] = kind === "names" ? s.names_table(5000) : tablesBuilt.then(ask[kind]);
  }
  return app.tables[key];
}

/** A capture was applied to `loaded` (graphs-view.js): the tables that read it are asked again. */
function captured(loaded) {
  if (app.active !== loaded) return;
  for (const key of ["ops", "ops-shape", "kernels", "modules", "graphs"]) delete app.tables[key];
  // The capture's module frames can give a trace without any a Modules tab.
  modules.analysed(loaded);
  selectTab(app.tab);
}

/**
 * Renders a tab from its table once the worker has it (after the background analyses, which it
 * queues behind); says "Analysing…" until then, and renders nothing if the tab or the trace
 * changed meanwhile.
 */
async function withTable(host, kind, render) {
  const active = app.active;
  const tab = app.tab;
  const pending = tableOf(kind);
  host.replaceChildren(analysing());
  let table;
  try {
    table = await pending;
  } catch (err) {
    if (app.active !== active) return;
    if (err instanceof AnalysesTooLarge) host.replaceChildren(notice(err.message));
    else fail(err, active.name);
    return;
  }
  if (app.active === active && app.tab === tab) render(table);
}

const TABS = [
  { id: "ops", title: "Operators", render: opsTable },
  {
    id: "kernels",
    title: "Kernels",
    render: (host) =>
      withTable(host, "kernels", (t) => renderTable(host, t.rows, { id: "kernels-table", columns: kernelColumns(t), csvName: "kernels.csv", onRowClick: (r) => highlight(r.name), caption: "Device ops (kernels, memcpy, memset) by name" })),
  },
  {
    id: "labels",
    title: "Labels",
    render: (host) =>
      withTable(host, "labels", (t) => renderTable(host, t.rows, { id: "labels-table", columns: declaredColumns(t.columns), csvName: "labels.csv", onRowClick: (r) => highlight(r.name), caption: "record_function labels: their CPU time and the device time launched inside", empty: "No record_function labels in this trace." })),
  },
  { id: "calltree", title: "Call tree", render: (host) => withTable(host, "calltree", (t) => renderTree(host, t, { id: "calltree-table", onRowClick: (n) => highlight(n.name) })) },
  modules.tab,
  graphs.tab,
  compiled.tab,
  { id: "roofline", title: "Roofline", render: (host) => withTable(host, "flops", (r) => renderRoofline(host, r, app.active.session, pick)) },
  { id: "names", title: "All slices by name", render: namesTable },
  memory.tab,
  { id: "range", title: "Range", render: rangeTable },
];

/** The operator table (PyTorch's key_averages), optionally grouped by input shapes. */
function opsTable(host) {
  // By shape, with the FLOPs columns of the same op and shapes (roofline.js).
  const flops = app.opsByShape ? tableOf("flops") : null;
  return withTable(host, "ops", async (t) => opsTableOf(host, t, flops && (await flops)));
}

function opsTableOf(host, t, flops) {
  const device = t.gpu_time_us > 0;
  const keep = (k) => (device || !/device/.test(k)) && (t.has_memory || !/mem/.test(k)) && (app.opsByShape || k !== "input_shapes");
  // Input shapes arrive as JSON lists; shown as PyTorch prints them ("[[32, 16], []]").
  const shown = (k, v) => (k === "input_shapes" && Array.isArray(v) ? JSON.stringify(v).replace(/,/g, ", ") : v);
  const rows = (flops ? withFlops(t.rows, flops) : t.rows).map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => keep(k)).map(([k, v]) => [k, shown(k, v)])));
  const unattributed = t.unattributed_gpu_us > 0 ? ` · ${duration(t.unattributed_gpu_us * 1e3)} of device time not charged to an operator` : "";
  // As the table declares its columns (memory in PyTorch's units, powers of 1024), with the
  // FLOPs columns of the same op and shapes after them.
  const columns = [...declaredColumns(t.columns).filter((c) => keep(c.key)), ...(flops ? flopsColumns(flops) : [])];
  renderTable(host, rows, {
    id: "ops-table",
    columns,
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
  return withTable(host, "names", (t) => namesTableOf(host, t));
}

function namesTableOf(host, t) {
  const rows = t.rows.map((r) => ({
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
  renderRange(host, app.range, (r) => highlight(r.name));
}

function selectTab(id) {
  app.tab = id;
  showTabs();
  TABS.find((t) => t.id === id).render($("tab-body"));
}

/** The tab buttons: every tab but those hidden for the shown trace (a tab's `hidden()`). */
function showTabs() {
  renderTabs($("tabs"), TABS.filter((t) => !(t.hidden && t.hidden())), app.tab, selectTab);
}

/**
 * Highlights the slices named `name` and selects the first; resolves to how many there are. The
 * name is the what-if's too while the critical path is shown.
 */
async function highlight(name) {
  const s = app.active && app.active.session;
  if (!s) return;
  critical.pickName(name);
  const n = await view.call(() => s.highlight_name(name));
  (/** @type {HTMLInputElement} */ ($("search"))).value = "";
  $("search-count").textContent = n === undefined ? "" : `${count(n)} × ${name.length > 40 ? name.slice(0, 40) + "…" : name}`;
  $("search-count").title = n === undefined ? "" : `${count(n)} × ${name}`;
  step(true);
  return n;
}

// ---- search --------------------------------------------------------------

let searchTimer = 0;
async function runSearch() {
  const s = app.active && app.active.session;
  if (!s) return;
  const q = (/** @type {HTMLInputElement} */ ($("search"))).value;
  const n = await view.call(() => s.search(q));
  $("search-count").textContent = q ? `${count(n ?? 0)} match${n === 1 ? "" : "es"}` : "";
  $("search-count").title = $("search-count").textContent;
  view.request();
}

async function step(forward) {
  const s = app.active && app.active.session;
  if (!s) return;
  const d = await view.call(() => s.search_step(forward));
  if (d) showDetails(d);
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
  const input = /** @type {HTMLInputElement} */ (ev.target);
  const files = Array.from(input.files);
  input.value = ""; // the same file can be chosen again
  // Several files: the ranks of one job (ranks.js); two: a job or a pair, as a drop of them is.
  if (files.length === 2) return openTwo(files);
  if (files.length > 1) return openFiles(files);
  openFile(files[0], started);
});
for (const id of ["sample-link", "sample-link-2"]) {
  $(id).addEventListener("click", (ev) => {
    ev.preventDefault();
    openUrl(/** @type {HTMLAnchorElement} */ (ev.currentTarget).getAttribute("href"));
  });
}
$("cancel").addEventListener("click", cancel);
$("help-button").addEventListener("click", () => (/** @type {HTMLDialogElement} */ ($("help"))).showModal());
$("help-close").addEventListener("click", () => (/** @type {HTMLDialogElement} */ ($("help"))).close());

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
  if (ev.dataTransfer) openDrop(dropContents(ev.dataTransfer));
});

/** A drop's files and entries (`dropContents`): a job (ranks.js), a pair to compare, or a trace. */
function openDrop(drop) {
  if (takeDrop(drop)) return;
  if (drop.files.length === 2) openTwo(drop.files);
  else if (drop.files[0]) openFile(drop.files[0]);
}

/** Two files chosen or dropped together: two ranks of one job open as the job, else the choice to compare them (pair.js). */
async function openTwo(files) {
  if (await ranksOfOneJob(files[0], files[1])) openFiles(files);
  else dropped(files);
}

/** A choice made while the page started (starting.js), made again now that it can be opened. */
function openEarly(open) {
  // The input's own listener (above, or ranks.js's for a folder) reads its files as if just chosen.
  if (open.input) open.input.dispatchEvent(new Event("change"));
  else if (open.drop) openDrop(open.drop);
  else if (open.href) openUrl(open.href);
}

document.addEventListener("keydown", (ev) => {
  const t = ev.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || (/** @type {HTMLDialogElement} */ ($("help"))).open) return;
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
    (/** @type {HTMLDialogElement} */ ($("help"))).showModal();
  } else if (document.body.dataset.state === "ready" && view.key(ev)) {
    ev.preventDefault();
  }
});

// ---- start ---------------------------------------------------------------

// What was asked for while the page started. A trace from a URL (the one the address names, the
// sample) stays "starting" until its response arrives and its load begins.
const early = starting.take();
if (!early.address && !(early.open && early.open.href)) setState("empty");
window.sightlineReady = true;
document.body.dataset.wasm = "ready";
// Links (`?url=`, `#url=`, time range and selection in the hash) and embedding (`?mode=embedded`,
// the postMessage protocol) live in url.js and embed.js. Whether what the address asks to open
// (`url`, `compare`) is to be opened: not when a choice made while starting replaced it.
cx.openAddress = !early.replaced;
startEmbedding(cx);
startLinks(cx);
startCompare(cx);
startRanks(cx);
startHeader();
// Served by `sightline serve LOGDIR`: the runs to open, on the start screen (logdir.js).
startLogdir(cx);
if (early.open) openEarly(early.open);
// While the page waits for a file, its first worker reads a small synthetic trace (load.js
// `warmUp`). Not when the page opens a trace itself (its address, a choice made while it started,
// an embedding page's): that load would wait behind it. A file chosen within the first moments
// takes the spare first, and the warm-up does not run.
if (!early.open && !early.address && document.body.dataset.mode !== "embedded") {
  setTimeout(() => workers.warmUp(), WARM_UP_AFTER_MS);
}
