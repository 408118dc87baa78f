// Before and after: a second trace opened beside the shown one ("Compare with…", two files
// dropped together, or `?url=A&compare=B`). The shown trace is BASE, the second NEW. Each trace
// stays in its own Session in its own Web Worker (NEW's is started here and read as load.js reads
// BASE's); the page diffs their digests (`diff_digests`, the analysis the CLI's `sightline diff`
// prints; only the digests cross between the workers), shows the headline and the diff tables,
// and stacks NEW's timeline under BASE's with one zoom, aligned at a chosen step. A click on a
// diff row highlights its slices in both timelines. Closing the comparison, or a new BASE,
// terminates NEW's worker. Trace text is only ever set as text.

import { TimelineView } from "./timeline.js";
import { flatRow, pickColumns, renderTable, renderTabs } from "./table.js";
import { formatValue, mb } from "./format.js";
import { connectAllowed } from "./url.js";
import { SessionWorker } from "./worker/client.js";
import { blobChunks, readInto, sniff, urlChunks, urlName } from "./load.js";
import { analyse } from "./analyses.js";
import { errorText } from "./errors.js";

const $ = (id) => document.getElementById(id);

/** Everything about the comparison in progress; `window.sightline.compare` for tests. */
const state = {
  /** NEW's worker, from the start of its read until the comparison is closed. */
  worker: null,
  /** NEW's Session calls (`worker.session`) once the comparison is shown. */
  session: null,
  name: "",
  /** The BASE the comparison was made against: a new BASE closes it. */
  base: null,
  baseDigest: null,
  newDigest: null,
  diff: null,
  tab: "ops",
  total: false,
  byShape: false,
  /** NEW's span (ns), to fit both traces. */
  newSpan: 0,
  /** ns added to a BASE time to get the NEW time shown beside it. */
  offset: 0,
  /** Views whose next frame follows the other one (so it does not steer it back). */
  following: new Set(),
  view: null,
  /** Each trace's steps ({b, n}: the digests' `per_step`), to align at. */
  steps: null,
  token: 0,
};

let hooks = null;

/**
 * Wires the compare controls.
 * @param {import("./context.js").PageContext} h the page's context (context.js)
 */
export function startCompare(h) {
  hooks = h;
  h.compare = state;
  $("compare-input").addEventListener("change", (ev) => {
    const input = /** @type {HTMLInputElement} */ (ev.target);
    const file = input.files[0];
    input.value = "";
    if (file) compareWith(file.name, blobChunks(file), file.size);
  });
  $("compare-close").addEventListener("click", close);
  $("compare-total").addEventListener("change", (ev) => {
    state.total = (/** @type {HTMLInputElement} */ (ev.target)).checked;
    rediff();
  });
  $("compare-shape").addEventListener("change", (ev) => {
    state.byShape = (/** @type {HTMLInputElement} */ (ev.target)).checked;
    rediff();
  });
  $("compare-align").addEventListener("change", (ev) => align(Number((/** @type {HTMLSelectElement} */ (ev.target)).value)));
  for (const [id, choice] of [["choice-compare", "compare"], ["choice-first", 0], ["choice-second", 1]]) {
    $(id).addEventListener("click", () => (/** @type {HTMLDialogElement} */ ($("compare-choice"))).close(String(choice)));
  }
  // The main view's frames steer NEW's window (and NEW's steer BASE's, below).
  const onFrame = hooks.view.cb.onFrame;
  hooks.view.cb.onFrame = (meta) => {
    if (onFrame) onFrame(meta);
    follow(hooks.view, state.view, -1);
  };
  // With the address's trace only (not one chosen instead while the page started).
  const url = new URLSearchParams(location.search).get("compare");
  if (url && hooks.openAddress !== false) compareUrlWhenReady(url);
}

/**
 * Two files dropped together: asks whether to compare them (the first as BASE) or open one.
 * Returns true when it took the drop.
 */
export function dropped(files) {
  if (!hooks || files.length !== 2) return false;
  const [a, b] = files;
  $("choice-first").textContent = `Open ${a.name}`;
  $("choice-second").textContent = `Open ${b.name}`;
  $("choice-names").textContent = `${a.name} (before) and ${b.name} (after)`;
  const dialog = /** @type {HTMLDialogElement} */ ($("compare-choice"));
  dialog.returnValue = "";
  dialog.onclose = async () => {
    const choice = dialog.returnValue;
    if (choice === "0" || choice === "1") return hooks.openFile(files[Number(choice)]);
    if (choice !== "compare") return;
    await hooks.openFile(a);
    if (document.body.dataset.state === "ready") compareWith(b.name, blobChunks(b), b.size);
    // The first was a memory snapshot: the second is compared as one (snapshot-diff.js).
    else if (document.body.dataset.state === "snapshot") hooks.snapshots.compareWith(b);
  };
  dialog.showModal();
  return true;
}

/** Shows the "Compare with…" action once a trace is open, and closes a comparison whose BASE left. */
export function baseChanged() {
  const active = hooks && hooks.app.active;
  $("compare-button").hidden = !active;
  if (state.base && state.base !== active) close();
}

function compareUrlWhenReady(href) {
  const go = () => {
    let url;
    try {
      url = new URL(href, location.href);
    } catch {
      return message(`not a valid URL to compare with: ${href}`);
    }
    if (url.origin !== location.origin && !connectAllowed(url)) {
      return message(`only traces from this site can be compared by URL (${url.origin} is another site)`);
    }
    const name = urlName(url);
    compareWith(name, urlChunks(url, name), 0);
  };
  if (hooks.app.active) return go();
  const watch = new MutationObserver(() => {
    if (document.body.dataset.state === "ready" && hooks.app.active) {
      watch.disconnect();
      go();
    } else if (document.body.dataset.state === "error") {
      watch.disconnect();
    }
  });
  watch.observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
}

function message(text) {
  $("compare").hidden = false;
  $("compare-explained").hidden = true;
  $("compare").dataset.state = "error";
  $("compare-headline").textContent = text;
}

/** Reads NEW into a Session in its own worker and compares it with the shown trace. */
async function compareWith(name, chunks, total) {
  const base = hooks.app.active;
  if (!base) return;
  close();
  const token = ++state.token;
  const section = $("compare");
  section.hidden = false;
  section.dataset.state = "loading";
  $("compare-name").textContent = name;
  $("compare-name").title = name;
  $("compare-headline").textContent = "Starting…";
  let worker = null;
  let statics;
  try {
    const sniffed = await sniff(chunks);
    if (token !== state.token) return;
    if (sniffed.kind === "snapshot") {
      close();
      return message(`${name} is a memory snapshot, not a profiler trace: open it on its own, or compare it with another snapshot there.`);
    }
    chunks = sniffed.chunks;
    worker = await SessionWorker.start(hooks.bindings);
    if (token !== state.token) return worker.terminate();
    state.worker = worker;
    worker.onfailure = (text) => {
      if (state.worker !== worker) return;
      close();
      message(`${name} could not be compared: ${text}`);
    };
    const box = $("compare-timeline").parentElement;
    const read = await readInto(worker, chunks, {
      width: Math.max(1, box.clientWidth - 190),
      height: Math.max(1, box.clientHeight - 26),
      onProgress: (stage, read) => {
        if (token !== state.token) return;
        $("compare-headline").textContent = stage === "reading" ? `Reading ${mb(read)}${total ? ` of ${mb(total)}` : ""}…` : "Building the timeline…";
      },
    });
    if (token !== state.token) return;
    $("compare-headline").textContent = "Analysing…";
    const s = worker.session;
    await analyse(s);
    // BASE's analyses run in its own worker in the background: its digest needs its tables.
    await base.tablesBuilt;
    const [newDigest, baseDigest, constants, palette] = await Promise.all([s.digest(""), base.session.digest(""), worker.module.constants(), worker.module.palette()]);
    if (token !== state.token) return;
    Object.assign(state, { session: s, name, base, baseDigest, newDigest, newSpan: read.summary.span_ns });
    statics = { constants, palette };
  } catch (err) {
    if (token !== state.token) return;
    close();
    return message(`${name} could not be compared: ${errorText(err)}`);
  }
  if (!state.view) {
    state.view = new TimelineView($("compare-timeline"), $("compare-overview"), statics, {
      onSelect: () => state.view.request(),
      onRange: () => {},
      onError: (err) => message(String((err && err.message) || err)),
      onFrame: () => follow(state.view, hooks.view, 1),
      tooltip: $("compare-tooltip"),
    });
  }
  await state.view.attach(state.session);
  if (token !== state.token) return;
  await rediff();
  steps();
  await align(0);
  if (token !== state.token) return;
  // One time scale from the start, both traces whole; `0` fits them so again.
  hooks.view.fitAll = fitBoth;
  await fitBoth();
  if (token !== state.token) return;
  // Ready once the headline and the tables are shown (tests wait for it).
  section.dataset.state = "ready";
}

/** Diffs the two digests with the chosen options and shows the result. */
async function rediff() {
  const worker = state.worker;
  if (!state.session || !worker) return;
  let diff;
  try {
    diff = await worker.module.diff_digests(state.baseDigest, state.newDigest, state.total, state.byShape);
  } catch (err) {
    // A comparison closed meanwhile ended the worker: nothing to show.
    if (state.worker === worker) message(`the traces could not be compared: ${errorText(err)}`);
    return;
  }
  if (state.worker !== worker) return;
  state.diff = diff;
  $("compare-headline").textContent = diff.summary.headline;
  explained(diff.summary);
  selectTab(state.tab);
}

/**
 * The change explained under the headline: its lines as the CLI prints them (`explanation`, the
 * first the share explained, then a category each), as text. None within the noise.
 */
function explained(summary) {
  const [head, ...categories] = summary.explanation || [];
  $("compare-explained").hidden = !head;
  $("compare-explained-head").textContent = head || "";
  $("compare-explained-list").replaceChildren(
    ...categories.map((line) => {
      const li = document.createElement("li");
      li.textContent = line.trim().replace(/\s{2,}/g, " ");
      return li;
    }),
  );
}

/** A rule's figure in its unit (`crossed.unit`), as the CLI writes shares, ratios and counts. */
function figure(x, unit) {
  switch (unit) {
    case "share":
      return `${(x * 100).toFixed(1)}%`;
    case "pct":
      return `${x.toFixed(1)}%`;
    case "times":
      return `${x.toFixed(2)}x`;
    case "ns":
    case "bytes":
      return formatValue(unit, x);
    default:
      return String(x);
  }
}

/** How a finding of one trace changed: appeared or disappeared, or crossed its threshold. */
function presence(f, gone) {
  if (!f.crossed) return { change: gone ? "disappeared" : "appeared", threshold: "" };
  const { base, new: now, threshold, unit } = f.crossed;
  return { change: "crossed its threshold", threshold: `${figure(base, unit)} → ${figure(now, unit)} (threshold ${figure(threshold, unit)})` };
}

/** The steps both traces have, to align the timelines at. */
function steps() {
  const b = state.baseDigest.value.steps.per_step;
  const n = state.newDigest.value.steps.per_step;
  const select = $("compare-align");
  select.replaceChildren();
  const start = document.createElement("option");
  start.value = "-1";
  start.textContent = "the trace starts";
  select.append(start);
  for (let i = 0; i < Math.min(b.length, n.length); i++) {
    const o = document.createElement("option");
    o.value = String(i);
    o.textContent = b[i].name === n[i].name ? b[i].name : `${b[i].name} / ${n[i].name}`;
    select.append(o);
  }
  state.steps = { b, n };
}

/** Aligns NEW's timeline so that its step `i` starts where BASE's does (-1: the trace starts). */
async function align(i) {
  const { b, n } = state.steps || { b: [], n: [] };
  const k = i >= 0 && i < Math.min(b.length, n.length) ? i : -1;
  (/** @type {HTMLSelectElement} */ ($("compare-align"))).value = String(k);
  state.offset = k >= 0 ? n[k].start_ns - b[k].start_ns : 0;
  await follow(hooks.view, state.view, -1);
}

/**
 * After a frame of `from`, shows the same time span in `to` (shifted by the alignment): one zoom
 * for both. `dir` -1 maps BASE to NEW, 1 NEW to BASE.
 */
async function follow(from, to, dir) {
  if (!to || !state.session || !from.session || !to.session) return;
  if (state.following.delete(from)) return;
  const [fromSession, toSession] = [from.session, to.session];
  const w = await from.call(() => fromSession.window_ns());
  if (!w || from.session !== fromSession || to.session !== toSession) return;
  const shift = dir < 0 ? state.offset : -state.offset;
  const [t0, t1] = [w[0] + shift, w[1] + shift];
  const now = await to.call(() => toSession.window_ns());
  if (now && Math.abs(now[0] - t0) < 1 && Math.abs(now[1] - t1) < 1) return;
  if (to.session !== toSession) return;
  to.call(() => toSession.set_window(t0, t1));
  state.following.add(to);
  to.request();
}

/**
 * Shows both traces whole on their one time scale: BASE's window spans BASE's trace and NEW's
 * (shifted by the alignment), and NEW follows it. Fitting BASE alone would cut a longer NEW.
 */
async function fitBoth() {
  const base = hooks.app.active;
  if (!state.session || !base || base !== state.base) return;
  // A frame of NEW still in flight (its first, at its own fit) would steer BASE to NEW's scale
  // once it lands (onFrame follows it): let it land first, then set both windows.
  await state.view.idle();
  if (!state.session || hooks.app.active !== base) return;
  // A NEW time is a BASE time plus the offset.
  const t0 = Math.min(0, -state.offset);
  const t1 = Math.max(base.summary.span_ns, state.newSpan - state.offset);
  const pad = (t1 - t0) * 0.02;
  // Both windows are set here: left to follow BASE's next frame, NEW's own frame drawn meanwhile
  // (its first, at its own fit) would steer BASE to NEW's scale instead.
  const [session, view] = [state.session, state.view];
  await Promise.all([hooks.view.call(() => base.session.set_window(t0 - pad, t1 + pad)), view.call(() => session.set_window(t0 - pad + state.offset, t1 + pad + state.offset))]);
  hooks.view.request();
  view.request();
}

function close() {
  state.token++;
  if (hooks && hooks.view.fitAll === fitBoth) hooks.view.fitAll = null;
  // Ends NEW's worker whatever it is doing (reading, an analysis): its trace goes with it.
  if (state.worker) state.worker.terminate("the comparison was closed");
  if (state.view) state.view.attach(null);
  Object.assign(state, { worker: null, session: null, base: null, baseDigest: null, newDigest: null, diff: null, steps: null, offset: 0 });
  state.following.clear();
  $("compare").hidden = true;
  $("compare-explained").hidden = true;
  $("compare").dataset.state = "";
}

// ---- the diff tables -------------------------------------------------------

/** A declared table of the diff: its columns (by key, in this order) and its rows under them. */
function declaredTab(member, keys) {
  return {
    columns: (d) => pickColumns(d.tables[member].columns, keys),
    rows: (d, columns) => d[member].map((r) => flatRow(r, columns)),
  };
}

/** The idle tab's columns, by key. */
const IDLE_KEYS = ["phrase", "base_us", "new_us", "delta_us"];

/**
 * A tab of the comparison: its rows from the diff, the declared columns it shows (else inferred
 * from the rows; its rows are made under them), and the names a row highlights in BASE's and
 * NEW's timelines.
 * @typedef {{ id: string, title: string, rows: (d: any, columns?: import("./table.js").Column[]) => any[], columns?: (d: any) => import("./table.js").Column[], names?: (d: any, r: any) => any[] }} DiffTab
 */
/** @type {DiffTab[]} */
const TABS = [
  {
    id: "ops",
    title: "Operators",
    ...declaredTab("ops", ["name", "input_shapes", "status", "base.calls", "new.calls", "base.self_cpu_us", "new.self_cpu_us", "delta_self_cpu_us", "ratio_self_cpu", "base.self_device_us", "new.self_device_us", "delta_self_device_us"]),
    names: (_d, r) => [r.name, r.name],
  },
  {
    id: "kernels",
    title: "GPU ops",
    ...declaredTab("kernels", ["name", "launcher", "module", "matched_by", "status", "base.calls", "new.calls", "base.total_us", "new.total_us", "delta_us", "ratio"]),
    names: (d, r) => {
      const k = d.kernels.find((x) => x.name === r.name && (x.launcher || "") === (r.launcher || "") && (x.module || "") === (r.module || ""));
      return [k && k.base.names[0], k && k.new.names[0]];
    },
  },
  {
    id: "labels",
    title: "Labels",
    ...declaredTab("labels", ["name", "status", "base.calls", "new.calls", "base.cpu_total_us", "new.cpu_total_us", "delta_cpu_total_us", "ratio_cpu_total", "base.device_us", "new.device_us", "delta_device_us"]),
    names: (_d, r) => [r.name, r.name],
  },
  {
    id: "steps",
    title: "Steps",
    rows: (d) => {
      const s = d.steps;
      const get = (side, c) => (side.breakdown.find((x) => x.category === c) || { us: 0 }).us;
      const row = (category, base, next) => ({ category, base_us: base, new_us: next, delta_us: next - base });
      // Per step, the median step (the headline's figure) above the mean, which the categories
      // (means over the steps) add up to.
      const lengths =
        d.mode === "total"
          ? [row("all steps", s.base.total_us, s.new.total_us)]
          : [row("median step", s.base.median_us, s.new.median_us), row("mean step", s.base.step_time_us, s.new.step_time_us)];
      return [
        ...lengths,
        ...s.delta.breakdown.map((c) => ({ category: c.category, base_us: get(s.base, c.category), new_us: get(s.new, c.category), delta_us: c.us })),
      ];
    },
  },
  {
    id: "idle",
    title: "GPU idle",
    // The waits' declared columns; the idle time and the host's wait above them, in the same columns.
    columns: (d) => pickColumns(d.tables["idle.waits"].columns, IDLE_KEYS),
    rows: (d, columns) => [
      { phrase: "GPU idle (all)", base_us: d.idle.base.idle_us, new_us: d.idle.new.idle_us, delta_us: d.idle.delta.idle_us },
      { phrase: "the host", base_us: d.idle.base.host_wait_us, new_us: d.idle.new.host_wait_us, delta_us: d.idle.delta.host_wait_us },
      ...d.idle.waits.map((w) => flatRow(w, columns)),
    ],
  },
  {
    id: "findings",
    title: "Findings",
    rows: (d) => [
      ...d.findings.added.map((f) => ({ ...presence(f, false), id: f.id, severity: f.severity, title: f.title, detail: f.detail })),
      ...d.findings.removed.map((f) => ({ ...presence(f, true), id: f.id, severity: f.severity, title: f.title, detail: f.detail })),
      ...d.findings.changed.map((f) => ({ change: "changed severity", threshold: f.measured ? `${figure(f.measured.base, f.measured.unit)} → ${figure(f.measured.new, f.measured.unit)}` : "", id: f.id, severity: `${f.base_severity} → ${f.new_severity}`, title: f.title, detail: f.new_detail })),
    ],
  },
];

function selectTab(id) {
  state.tab = id;
  renderTabs($("compare-tabs"), TABS, id, selectTab);
  const tab = TABS.find((t) => t.id === id);
  const d = state.diff;
  const per = d.mode === "total" ? "totals" : `per step (${d.steps.base.steps} and ${d.steps.new.steps} steps)`;
  const declared = tab.columns ? tab.columns(d) : undefined;
  const rows = withoutEmptyDevice(tab.rows(d, declared), declared);
  renderTable($("compare-body"), rows, {
    id: `compare-${id}-table`,
    columns: declared && declared.filter((c) => rows.length === 0 || c.key in rows[0]),
    csvName: `diff-${id}.csv`,
    // Rows come largest change first, as the diff orders them, until a header is clicked.
    caption: `before, after and the change, ${per}`,
    empty: id === "findings" ? "No finding appeared, disappeared or changed severity." : "Nothing to compare.",
    onRowClick: tab.names ? (r) => highlight(...tab.names(d, r)) : undefined,
  });
}

/**
 * `rows` without their device-time columns when no row has device time before or after (two
 * CPU-only traces): columns of "0 ns" say nothing. As the operator table of one trace drops them.
 * The rows keep only the columns shown (`columns`, when the tab declares them).
 */
function withoutEmptyDevice(rows, columns) {
  const keys = columns ? columns.map((c) => c.key) : Object.keys(rows[0] || {});
  const device = keys.filter((k) => /device/.test(k));
  if (device.length === 0 || rows.some((r) => device.some((k) => r[k]))) return rows;
  return rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !device.includes(k))));
}

/** Highlights a row's slices in both timelines: `a` by name in BASE, `b` in NEW. */
async function highlight(a, b) {
  const counts = [];
  let moved = null;
  for (const [view, name] of [[hooks.view, a], [state.view, b]]) {
    if (!view || !view.session || !name) {
      counts.push(0);
      continue;
    }
    const n = (await view.call(() => view.session.highlight_name(name))) || 0;
    counts.push(n);
    // The first view with a match shows it; the other follows through the shared zoom.
    if (n > 0 && !moved) {
      await view.call(() => view.session.search_step(true));
      moved = view;
    }
    view.request();
  }
  state.highlighted = { base: counts[0], new: counts[1] };
  const name = a || b || "";
  $("compare-highlight").textContent = name ? `${counts[0]} × before, ${counts[1]} × after: ${name.length > 60 ? name.slice(0, 60) + "…" : name}` : "";
  if (moved === hooks.view) follow(hooks.view, state.view, -1);
  else if (moved) follow(state.view, hooks.view, 1);
}
