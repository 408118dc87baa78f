// Many traces of one distributed job: several files, a folder (the folder input, or a dropped
// folder walked with `webkitGetAsEntry`), or `?url=A&url=B...`. Each trace is read in its own
// Session in its own Web Worker, up to `navigator.hardwareConcurrency` at a time, and hands over
// its digest (`Session::digest`, JSON); the cross-rank report (`ranks_report`, what `sightline
// ranks --json` prints) is computed in a worker from the digests alone. The page shows one band
// per rank on one time axis (each rank's TimelineView with its CPU threads folded; a frame of one
// band moves the others to the same instant, through the clock offsets), the per-rank table, a
// step x rank heat strip, the collectives, the stragglers and the findings, whose clicks move the
// view to the right rank and time. Only MAX_SHOWN ranks keep their trace (and worker); the others
// keep their digest, and the rank picker reads a rank again to show it. Trace text is only ever
// set as text.

import { TimelineView } from "./timeline.js";
import { flatRow, pickColumns, renderTable } from "./table.js";
import { duration, mb } from "./format.js";
import { SessionWorker } from "./worker/client.js";
import { blobChunks, readInto, urlChunks, urlName } from "./load.js";
import { analyse as analyseInSlices } from "./analyses.js";
import { el } from "./dom.js";
import { errorText } from "./errors.js";

/** Ranks with a full timeline (and a live worker) at most; the others keep only their digest. */
const MAX_SHOWN = 8;

const $ = (id) => document.getElementById(id);
const isTraceName = (name) => /\.json(\.gz)?$/i.test(name);
const ms = (us) => duration(us * 1e3);

/** The open job; `window.sightline.ranks` for tests and benchmarks. */
const state = {
  open: false,
  token: 0,
  /** One per file: { name, size, chunks (a factory), worker, session, digest (its JSON, client.js `Json`), rank,
   * origin (BigInt ns), steps, status, error, view, band, heapBytes }. */
  traces: [],
  report: null,
  align: "auto",
  /** The rank whose band was last jumped to. */
  focused: null,
  /** Views whose next frame follows another band (so it does not steer the others back). */
  following: new Set(),
  statics: null,
  timings: null,
};

let hooks = null;

/**
 * Wires the job controls.
 * @param {import("./context.js").PageContext} h the page's context (context.js)
 */
export function startRanks(h) {
  hooks = h;
  h.ranks = state;
  $("folder-input").addEventListener("change", (ev) => {
    const input = /** @type {HTMLInputElement} */ (ev.target);
    const files = Array.from(input.files).filter((f) => isTraceName(f.name));
    input.value = "";
    openFiles(files);
  });
  $("ranks-close").addEventListener("click", () => {
    close();
    hooks.setState(hooks.app.active ? "ready" : "empty");
  });
  $("ranks-align").addEventListener("change", (ev) => {
    state.align = (/** @type {HTMLSelectElement} */ (ev.target)).value;
    analyse(state.token);
  });
  // Another trace opened (or an error shown) ends the job and its workers.
  new MutationObserver(() => {
    const here = document.body.dataset.state === "ranks";
    $("ranks").hidden = !here;
    if (!here && state.open) close();
  }).observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
  const urls = new URLSearchParams(location.search).getAll("url");
  if (urls.length > 1 && h.openAddress !== false) openUrls(urls);
}

/** Files chosen together: one opens as a trace, several as the ranks of one job. */
export function openFiles(files) {
  if (files.length === 0) return;
  if (files.length === 1) return hooks.openFile(files[0]);
  openTraces(files.map((f) => ({ name: f.name, size: f.size, chunks: () => blobChunks(f) })));
}

/**
 * A drop holding a folder or more than two files: the ranks of one job (two files are the
 * comparison's). Returns true when it took the drop. `drop` is its files and entries, taken while
 * the drop event's data was readable (starting.js `dropContents`); the folders are walked now.
 */
export function takeDrop({ files, entries }) {
  const folder = entries.some((e) => e && e.isDirectory);
  if (!folder && files.length <= 2) return false;
  if (!folder) {
    openFiles(files);
    return true;
  }
  (async () => {
    const files = [];
    for (const e of entries) if (e) await walk(e, files, e.isDirectory);
    openFiles(files);
  })().catch((err) => hooks.fail(err));
  return true;
}

/** The trace files under `entry` (in a folder, only `*.json` and `*.json.gz`, as the CLI takes). */
async function walk(entry, out, inFolder) {
  if (entry.isFile) {
    if (!inFolder || isTraceName(entry.name)) out.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    return;
  }
  const reader = entry.createReader();
  for (;;) {
    // readEntries returns the folder in batches, then an empty one.
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    for (const e of batch) await walk(e, out, true);
  }
}

function openUrls(hrefs) {
  const traces = hrefs.map((href) => {
    const url = new URL(href, location.href);
    const name = urlName(url);
    return { name, size: 0, chunks: () => urlChunks(url, name) };
  });
  openTraces(traces);
}

/** Reads every trace in its own worker, then shows the job. */
async function openTraces(list) {
  close();
  hooks.stopLoading();
  const token = ++state.token;
  state.open = true;
  state.traces = list.map((t) => ({ ...t, worker: null, session: null, digest: null, rank: null, status: "waiting", error: null, view: null, band: null }));
  state.timings = { started: performance.now(), traces: list.length };
  hooks.setState("ranks");
  document.body.dataset.ranks = "loading";
  // Files until read: a folder may hold files that are not traces (expected.json beside them).
  $("ranks-title").textContent = `${list.length} file${list.length === 1 ? "" : "s"}`;
  $("ranks-summary").textContent = "Reading…";
  renderFiles();
  const limit = Math.max(1, navigator.hardwareConcurrency || 2);
  let next = 0;
  const lane = async () => {
    while (next < state.traces.length && token === state.token) await digestOne(state.traces[next++], token);
  };
  await Promise.all(Array.from({ length: Math.min(limit, state.traces.length) }, lane));
  if (token !== state.token) return;
  state.timings.digestedMs = performance.now() - state.timings.started;
  await analyse(token);
  if (token !== state.token) return;
  state.timings.readyMs = performance.now() - state.timings.started;
}

/** Reads one trace into a new worker, runs its analyses and takes its digest. */
async function digestOne(t, token, keep = false) {
  let worker = null;
  try {
    worker = await SessionWorker.start(hooks.bindings);
    if (token !== state.token) return worker.terminate();
    t.worker = worker;
    t.error = null;
    worker.onfailure = (text) => {
      if (t.worker !== worker) return;
      t.worker = t.session = null;
      t.error = text;
      renderFiles();
    };
    t.status = "reading";
    renderFiles();
    await readInto(worker, t.chunks(), {
      width: 1000,
      height: 150,
      onProgress: (stage, read) => {
        t.status = stage === "reading" ? `reading ${mb(read)}` : "building";
        renderFiles();
      },
    });
    const s = worker.session;
    // A rank read again for its timeline has its digest already.
    if (!t.digest) {
      t.status = "analysing";
      renderFiles();
      await analyseInSlices(s);
    }
    const digest = t.digest ?? (await s.digest(t.name));
    t.heapBytes = await s.heap_bytes();
    if (token !== state.token) return worker.terminate();
    if (!state.statics) {
      const [constants, palette] = await Promise.all([worker.module.constants(), worker.module.palette()]);
      state.statics = { constants, palette };
    }
    t.digest = digest;
    t.session = s;
    const d = digest.value;
    t.rank = d.distributed.rank;
    // The clock origin is ns since the epoch, beyond a double's integers: read from the text.
    const origin = /"clock_origin_ns":(-?\d+)/.exec(digest.text);
    t.origin = origin ? BigInt(origin[1]) : 0n;
    t.steps = d.steps.synthetic ? [] : d.steps.per_step.map((p) => ({ name: p.name, start_ns: p.start_ns, dur_ns: p.dur_ns }));
    t.status = "read";
    // Beyond MAX_SHOWN live traces, a rank keeps only its digest: its worker's memory goes now.
    if (!keep && state.traces.filter((x) => x.session).length > MAX_SHOWN) release(t);
  } catch (err) {
    if (worker) worker.terminate();
    t.worker = t.session = null;
    t.error = errorText(err);
  }
  renderFiles();
}

/** Ends a rank's worker; its digest stays. */
function release(t) {
  if (t.worker) t.worker.terminate("the rank's timeline was closed");
  t.worker = t.session = null;
  if (t.view) t.view.attach(null);
  if (t.band) t.band.remove();
  t.view = t.band = null;
}

/** The cross-rank report from the digests, in a live worker; then everything is drawn. */
async function analyse(token) {
  const read = state.traces.filter((t) => t.digest);
  const runner = state.traces.find((t) => t.worker && !t.worker.dead);
  if (!read.length || !runner) {
    document.body.dataset.ranks = "error";
    $("ranks-summary").textContent = "No trace could be read.";
    return;
  }
  let report;
  try {
    report = await runner.worker.module.ranks_report(read.map((t) => t.digest), state.align);
  } catch (err) {
    if (token !== state.token) return;
    document.body.dataset.ranks = "error";
    $("ranks-summary").textContent = `The ranks could not be compared: ${errorText(err)}`;
    return;
  }
  if (token !== state.token) return;
  // The files that are not traces are the reader's to report, as the CLI does.
  report.unreadable_files = state.traces.filter((t) => t.error).map((t) => ({ file: t.name, error: t.error }));
  state.report = report;
  $("ranks-files").replaceChildren();
  renderSummary();
  renderIssues();
  renderPicker();
  renderHeat();
  renderStragglers();
  renderFindings();
  const ranks = rankTable(report);
  renderTable($("ranks-table"), ranks.rows, { id: "ranks-table-rows", columns: ranks.columns, csvName: "ranks.csv", caption: "per rank; µs over the whole trace", onRowClick: (r) => focusRank(r.rank) });
  const collectives = pickColumns(report.tables.collectives.columns, COLLECTIVE_KEYS);
  renderTable($("ranks-collectives"), report.collectives.map((c) => flatRow(c, collectives)), { id: "ranks-collectives-rows", columns: collectives, csvName: "collectives.csv", caption: "per process group, name and size; wait and transfer summed over the ranks", empty: "No collective was matched across ranks." });
  await renderBands();
  if (token !== state.token) return;
  document.body.dataset.ranks = "ready";
}

/** The trace shown for a rank: the one the report kept (a duplicate's other file is not). */
function traceOf(rank) {
  const row = state.report && state.report.ranks.find((r) => r.rank === rank);
  return row ? state.traces.find((t) => t.digest && t.rank === rank && t.name === row.file) : null;
}

/** Where a rank's time 0 is on the job's clock, relative to the first rank's, in ns. */
function base(t) {
  const first = state.traces.find((x) => x.digest);
  const off = state.report.clock_offsets.find((o) => o.rank === t.rank);
  return Number(t.origin - first.origin) + (off ? off.offset_us * 1e3 : 0);
}

function close() {
  state.token++;
  for (const t of state.traces) release(t);
  Object.assign(state, { open: false, traces: [], report: null, focused: null });
  state.following.clear();
  $("ranks-bands").replaceChildren();
  for (const id of ["ranks-issues", "ranks-files", "ranks-picker", "ranks-heat", "ranks-stragglers", "ranks-findings", "ranks-table", "ranks-collectives"]) $(id).replaceChildren();
  delete document.body.dataset.ranks;
}

// ---- the header: files, the job, what does not fit --------------------------

function renderFiles() {
  if (!state.open) return;
  const list = $("ranks-files");
  if (document.body.dataset.ranks !== "loading") return list.replaceChildren();
  list.replaceChildren(
    ...state.traces.map((t) => {
      const what = t.error ? `not read: ${t.error}` : t.digest ? `rank ${t.rank ?? "?"}` : t.status;
      return el("li", t.error ? "error" : "", `${t.name}: ${what}`);
    }),
  );
}

function renderSummary() {
  const r = state.report;
  $("ranks-title").textContent = `${r.ranks.length} of ${r.world_size} ranks`;
  const hosts = new Set(r.ranks.map((x) => x.host).filter(Boolean));
  // Only what was read as a trace counts as one; the other files are listed under the issues.
  const read = state.traces.filter((t) => t.digest).length;
  const other = state.traces.length - read;
  const others = other ? ` (${other} other file${other === 1 ? "" : "s"} not read)` : "";
  $("ranks-summary").textContent = `${read} trace${read === 1 ? "" : "s"}${others} · ${hosts.size || "unknown"} host(s) · ${r.collectives.reduce((a, c) => a + c.count, 0)} collectives matched`;
}

function renderIssues() {
  const r = state.report;
  const items = [];
  if (r.missing_ranks.length) items.push(`Missing: rank ${r.missing_ranks.join(", ")} of world size ${r.world_size} (no trace was given for ${r.missing_ranks.length === 1 ? "it" : "them"}).`);
  for (const d of r.duplicate_ranks) items.push(`Rank ${d.rank} twice: ${d.kept} kept, ${d.dropped} left out.`);
  for (const f of r.unknown_rank_files) items.push(`${f}: no rank in distributedInfo or the file name; left out.`);
  for (const m of r.mixed_jobs) items.push(`Other job: ${m}.`);
  for (const u of r.unreadable_files) items.push(`${u.file}: not read (${u.error}).`);
  const list = $("ranks-issues");
  list.replaceChildren(...items.map((t) => el("li", "", t)));
  const offsets = r.clock_offsets.map((o) => `rank ${o.rank} ${o.offset_us >= 0 ? "+" : ""}${ms(o.offset_us)} (${o.rule})`);
  const li = el("li", "offsets", `Clock offsets: ${offsets.join(", ")}`);
  li.title = "reference: the first rank's clock; same_host: no offset on one host's shared clock; other_host/collectives: moved so that matched collectives end together";
  list.append(li);
}

/** With more than MAX_SHOWN ranks: which ones have a timeline. */
function renderPicker() {
  const r = state.report;
  $("ranks-picker-box").hidden = r.ranks.length <= MAX_SHOWN;
  const box = $("ranks-picker");
  box.replaceChildren(
    ...r.ranks.map((row) => {
      const label = el("label");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.dataset.rank = String(row.rank);
      const t = traceOf(row.rank);
      input.checked = !!(t && t.session);
      input.addEventListener("change", () => (input.checked ? showRank(row.rank) : hideRank(row.rank)));
      label.append(input, document.createTextNode(` rank ${row.rank}`));
      return label;
    }),
  );
  $("ranks-picked").textContent = `${state.traces.filter((t) => t.session).length} of ${r.ranks.length}`;
}

// ---- the bands: one time axis --------------------------------------------

async function renderBands() {
  const shown = state.report.ranks.map((r) => traceOf(r.rank)).filter((t) => t && t.session);
  for (const t of shown) if (!t.band) makeBand(t);
  // Bands in rank order.
  $("ranks-bands").replaceChildren(...state.report.ranks.map((r) => traceOf(r.rank)).filter((t) => t && t.band).map((t) => t.band));
  await Promise.all(shown.map((t) => attach(t)));
  const first = shown[0];
  if (first) {
    await first.view.call(() => first.session.reset_view());
    first.view.request();
  }
}

function makeBand(t) {
  const band = el("div", "rank-band");
  band.dataset.rank = String(t.rank);
  const head = el("div", "rank-band-head");
  const overview = document.createElement("canvas");
  overview.title = `rank ${t.rank}: the whole trace`;
  head.append(el("strong", "", `rank ${t.rank}`), el("span", "muted file-name", t.name), overview);
  const box = el("div", "timeline-box");
  const canvas = document.createElement("canvas");
  canvas.className = "rank-timeline";
  canvas.tabIndex = 0;
  const tooltip = el("div", "tooltip");
  tooltip.hidden = true;
  box.append(canvas, tooltip);
  band.append(head, box);
  // In the document before the view reads its theme from the computed style.
  $("ranks-bands").append(band);
  t.band = band;
  t.view = new TimelineView(canvas, overview, state.statics, {
    onSelect: () => t.view.request(),
    onRange: () => {},
    onError: (err) => {
      t.error = errorText(err);
      renderIssues();
    },
    onFrame: () => follow(t),
    tooltip,
  });
}

async function attach(t) {
  if (t.attached === t.session) return;
  t.attached = t.session;
  await t.view.attach(t.session);
  // A rank is a band of its GPU streams: its CPU threads start folded (a click unfolds them).
  await t.view.call(() => t.session.fold_cpu());
  t.view.request();
}

/** After a frame of `t`'s band, the other bands show the same instants on the job's clock. */
async function follow(t) {
  if (state.following.delete(t) || !state.report || !t.session) return;
  const w = await t.view.call(() => t.session.window_ns());
  if (!w || !t.session) return;
  const [a0, a1] = [w[0] + base(t), w[1] + base(t)];
  for (const o of state.traces) {
    if (o === t || !o.view || !o.session) continue;
    const [t0, t1] = [a0 - base(o), a1 - base(o)];
    const now = await o.view.call(() => o.session.window_ns());
    if (!o.session || (now && Math.abs(now[0] - t0) < 1 && Math.abs(now[1] - t1) < 1)) continue;
    o.view.call(() => o.session.set_window(t0, t1));
    state.following.add(o);
    o.view.request();
  }
}

/** Gives a rank a timeline again (its trace is read anew when its worker was ended). */
async function showRank(rank) {
  const t = traceOf(rank);
  if (!t) return null;
  if (!t.session) {
    await digestOne(t, state.token, true);
    if (!t.session) return null;
  }
  if (!t.band) makeBand(t);
  $("ranks-bands").replaceChildren(...state.report.ranks.map((r) => traceOf(r.rank)).filter((x) => x && x.band).map((x) => x.band));
  await attach(t);
  renderPicker();
  // The new band joins the others' window.
  const other = state.traces.find((o) => o !== t && o.view && o.session);
  if (other) await follow(other);
  return t;
}

function hideRank(rank) {
  const t = traceOf(rank);
  if (t) release(t);
  renderPicker();
}

/** Shows `rank`'s band, marked, with [t0, t1] of its own timeline in view (the others follow). */
async function focusRank(rank, t0, t1) {
  const t = (traceOf(rank) && traceOf(rank).session ? traceOf(rank) : null) || (await showRank(rank));
  if (!t) return;
  for (const x of state.traces) if (x.band) delete x.band.dataset.focused;
  t.band.dataset.focused = "";
  state.focused = rank;
  if (t0 !== undefined && t1 !== undefined) await t.view.call(() => t.session.show_evidence(t0, t1));
  t.view.request();
  t.band.scrollIntoView({ block: "nearest" });
}

// ---- the tables and panels -------------------------------------------------

/**
 * The ranks' table: the declared columns of a rank's row (`report.tables.ranks`), each step's
 * length as a column of its own between the median step and the compute time.
 */
function rankTable(r) {
  const declared = r.tables.ranks.columns;
  const names = [];
  for (const x of r.ranks) for (const s of (traceOf(x.rank) || { steps: [] }).steps) if (!names.includes(s.name)) names.push(s.name);
  const stepTitle = declared.find((c) => c.key === "step_times_us")?.about;
  const columns = [
    ...pickColumns(declared, ["rank", "file", "host", "steps", "step_time_us"]),
    ...names.map((name) => ({ key: `${name}_us`, label: name, kind: "us", title: stepTitle })),
    ...pickColumns(declared, ["compute_us", "communication_us", "exposed_communication_us", "memcpy_us", "idle_us", "host_wait_idle_us", "collective_wait_us", "kernels", "peak_memory_bytes"]),
  ];
  const rows = r.ranks.map((x) => {
    const t = traceOf(x.rank);
    const steps = {};
    (t ? t.steps : []).forEach((s, i) => (steps[`${s.name}_us`] = x.step_times_us[i]));
    return { ...flatRow(x, columns), ...steps };
  });
  return { columns, rows };
}

/** The collectives' columns, in the order the table shows them. */
const COLLECTIVE_KEYS = ["name", "process_group", "dtype", "bytes", "count", "partial", "total_us", "wait_us", "transfer_us", "algbw_gbps", "busbw_gbps"];

/** Step x rank, coloured by the step's time against the step's median over the ranks; the steps a
 * `straggler_rank` finding names are outlined on its rank. */
function renderHeat() {
  const r = state.report;
  const host = $("ranks-heat");
  const rows = r.ranks.map((x) => ({ rank: x.rank, steps: (traceOf(x.rank) || { steps: [] }).steps }));
  const names = [];
  for (const row of rows) for (const s of row.steps) if (!names.includes(s.name)) names.push(s.name);
  if (!names.length) return host.replaceChildren(el("p", "muted", "No ProfilerStep in these traces."));
  const flagged = new Set();
  for (const f of r.findings.filter((f) => f.id === "straggler_rank" && f.evidence.length)) {
    for (const s of f.steps || []) flagged.add(`${f.evidence[0].rank}|${s}`);
  }
  const late = new Map(r.stragglers.map((s) => [`${s.rank}|${s.step}`, s]));
  // A cell's heat is what its step loses to it: the time the step's straggler kept the others
  // waiting (its lateness into the collective), over the step's duration. Every rank of a step
  // that waits for one shows the same long step, so a step's duration against the median of the
  // ranks says nothing of who held it; the waits do, and only the straggler's cell carries them.
  const loss = (rank, step) => {
    const l = late.get(`${rank}|${step.name}`);
    return l ? (l.late_us * 1e3) / Math.max(1, step.dur_ns) : 0;
  };
  host.style.gridTemplateColumns = `max-content repeat(${names.length}, minmax(14px, 1fr))`;
  const cells = [el("span", "heat-label", "")];
  for (const n of names) cells.push(el("span", "heat-label", n.replace("ProfilerStep#", "#")));
  for (const row of rows) {
    cells.push(el("span", "heat-label", `rank ${row.rank}`));
    for (const n of names) {
      const s = row.steps.find((x) => x.name === n);
      const cell = el("div", "heat-cell");
      cell.dataset.rank = String(row.rank);
      cell.dataset.step = n;
      if (!s) {
        cell.title = `rank ${row.rank} has no ${n}`;
        cells.push(cell);
        continue;
      }
      // Full heat at half the step lost.
      const share = loss(row.rank, s);
      const v = Math.max(0, Math.min(1, share / 0.5));
      cell.style.background = `hsl(${45 - 45 * v}, 85%, ${88 - 38 * v}%)`;
      cell.dataset.loss = share.toFixed(4);
      const key = `${row.rank}|${n}`;
      if (flagged.has(key)) cell.dataset.straggler = "";
      const l = late.get(key);
      cell.title = `rank ${row.rank}, ${n}: ${duration(s.dur_ns)}${l ? `; the others waited for it: last into the ${l.collective}, ${ms(l.late_us)} late (${(share * 100).toFixed(0)}% of the step)` : ""}`;
      cell.addEventListener("click", () => focusRank(row.rank, s.start_ns, s.start_ns + s.dur_ns));
      cells.push(cell);
    }
  }
  host.replaceChildren(...cells);
}

function renderStragglers() {
  const r = state.report;
  const others = Math.max(0, r.ranks.length - 1);
  const list = $("ranks-stragglers");
  if (!r.stragglers.length) return list.replaceChildren(el("li", "muted", "No collective was waited for."));
  // Costliest first: by the waiting each caused, not in step order.
  const byCost = [...r.stragglers].sort((a, b) => b.wait_caused_us - a.wait_caused_us || b.late_us - a.late_us);
  list.replaceChildren(
    ...byCost.map((s) => {
      const li = el("li", "", `rank ${s.rank} is ${ms(s.late_us)} late into the ${s.collective} of ${s.step}; the other ${others} ranks waited ${ms(s.wait_caused_us)} in all; before it: ${s.cause}`);
      li.dataset.rank = String(s.rank);
      li.addEventListener("click", () => focusRank(s.rank, s.start_ns, s.end_ns));
      return li;
    }),
  );
}

function renderFindings() {
  const list = $("ranks-findings");
  const r = state.report;
  if (!r.findings.length) return list.replaceChildren(el("li", "muted", "Nothing stands out across the ranks."));
  list.replaceChildren(
    ...r.findings.map((f) => {
      const li = el("li", `finding ${f.severity}`);
      li.dataset.id = f.id;
      li.append(el("strong", "", f.title), el("div", "", f.detail), el("div", "muted", f.advice));
      const ev = f.evidence[0];
      if (ev) li.addEventListener("click", () => focusRank(ev.rank, ev.start_ns, ev.end_ns));
      return li;
    }),
  );
}
