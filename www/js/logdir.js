// The start screen of `sightline serve LOGDIR` (src/cli/serve/): LOGDIR's runs, their workers and
// spans as torch.profiler.tensorboard_trace_handler names them, with size, time and rank, read from
// the server's `api/runs` (and again every few seconds while this screen is shown, so new files
// appear). The server marks the page it serves with `<meta name="sightline-serve" content="logdir">`;
// on any other host this module does nothing and asks for nothing.
//
// Every choice is a plain link to the page's existing address forms, so it opens as a link would
// (and Back returns here): a span is `?url=logdir/RUN/FILE`, a whole run the ranks view
// (`?url=A&url=B...`: the run's `latest`, each worker's latest span by rank), two runs the comparison
// (`?url=A&compare=B`: each run's `lead`, rank 0, else its first worker). Which spans those are is the
// server's listing's (the core's rule, src/analysis/ranks/runs.rs); this module picks none. A span of a run with a `capture_traces/` folder also
// names its captures (`&capture=...`), which the Graphs tab reads. Names from files are only ever
// set as text.

import { bytes, count } from "./format.js";
import { el } from "./dom.js";
import { errorText } from "./errors.js";

const POLL_MS = 5000;

/** The URL of a listed file, relative to the page (each path segment encoded). */
export const fileUrl = (path) => "logdir/" + path.split("/").map(encodeURIComponent).join("/");

/** A link to the page itself with these `[key, value]` parameters. */
const pageLink = (pairs) => `?${new URLSearchParams(pairs).toString()}`;

const pad = (n) => String(n).padStart(2, "0");
/** ms since the epoch as local `YYYY-MM-DD HH:MM:SS`. */
function when(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "–";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
/** A span's name: the handler's timestamp (ms) as a time, else the name as it is. */
const spanTime = (span) => (span && /^\d{12,14}$/.test(span) ? when(Number(span)) : span || "–");

/** A listed path's file name (its last segment). */
const fileOf = (path) => path.slice(path.lastIndexOf("/") + 1);

/** Starts the start screen when the page is served by `sightline serve` with a LOGDIR. */
/** @param {import("./context.js").PageContext} cx */
export function startLogdir(cx) {
  const meta = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="sightline-serve"]'));
  if (!meta || meta.content !== "logdir") return;
  document.body.dataset.serve = "logdir";
  const section = el("section", "logdir");
  section.id = "logdir";
  section.dataset.state = "loading";
  section.append(el("p", "muted", "Reading LOGDIR…"));
  const empty = document.getElementById("empty");
  empty.prepend(section);

  const state = { text: null, listing: null };
  cx.logdir = state;
  let busy = false;
  async function refresh() {
    if (busy || document.hidden || document.body.dataset.state !== "empty") return;
    busy = true;
    try {
      const resp = await fetch("api/runs", { cache: "no-store" });
      const text = await resp.text();
      if (!resp.ok) throw new Error(text.trim() || `HTTP ${resp.status}`);
      if (text !== state.text) {
        state.text = text;
        state.listing = JSON.parse(text);
        render(section, state.listing);
      }
    } catch (err) {
      section.dataset.state = "error";
      section.replaceChildren(el("p", "muted", `The server did not list LOGDIR: ${errorText(err)}`));
      state.text = null;
    } finally {
      busy = false;
    }
  }
  refresh();
  setInterval(refresh, POLL_MS);
  document.addEventListener("visibilitychange", refresh);
  new MutationObserver(refresh).observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
}

function render(section, listing) {
  const { logdir, runs } = listing;
  const head = el("div", "logdir-head");
  const title = el("h1", null, "Runs in ");
  title.append(el("code", null, logdir));
  const files = runs.reduce((n, r) => n + r.files, 0);
  head.append(title, el("span", "muted", `${count(runs.length)} run${runs.length === 1 ? "" : "s"}, ${count(files)} trace file${files === 1 ? "" : "s"}; new files appear here as they are written`));
  const parts = [head];
  if (runs.length === 0) {
    parts.push(el("p", "muted", `No traces yet. torch.profiler.tensorboard_trace_handler("${logdir}/RUN") writes them; they appear here as they are written.`));
  }
  if (runs.length >= 2) parts.push(compareForm(runs));
  for (const run of runs) parts.push(runBlock(run));
  section.replaceChildren(...parts);
  section.dataset.state = "ready";
}

/** Two runs side by side: the comparison of their lead traces. */
function compareForm(runs) {
  const form = el("div", "logdir-compare");
  const pick = (id, selected) => {
    const s = el("select");
    s.id = id;
    runs.forEach((r, i) => {
      const o = el("option", null, r.run);
      o.value = String(i);
      o.selected = i === selected;
      s.append(o);
    });
    return s;
  };
  const before = pick("logdir-before", 0);
  const after = pick("logdir-after", 1);
  const go = el("a", "button", "Compare");
  go.id = "logdir-compare";
  const note = el("span", "muted");
  const update = () => {
    const a = runs[Number(before.value)].lead;
    const b = runs[Number(after.value)].lead;
    go.href = pageLink([["url", fileUrl(a)], ["compare", fileUrl(b)]]);
    note.textContent = `${fileOf(a)} with ${fileOf(b)}`;
  };
  before.addEventListener("change", update);
  after.addEventListener("change", update);
  update();
  const label = (text, control) => {
    const l = el("label", null, text);
    l.append(control);
    return l;
  };
  form.append(label("Compare run ", before), label(" with ", after), go, note);
  return form;
}

/** At most this many of a run's captures are offered to a span (graphs-view.js reads each). */
const MAX_CAPTURES = 16;

/**
 * `capture` parameters for a span of `run`: the traces of the run's `capture_traces/` (TraceLens'
 * layout), which the Graphs tab reads, applying the one that names most replayed ops. With more
 * than MAX_CAPTURES, those of the span's rank (the listing's rank of each capture: its
 * `distributedInfo`, else its name's `rank3`, so `rank1` is not `rank10`).
 */
function captureParams(run, span) {
  let caps = run.captures || [];
  if (caps.length > MAX_CAPTURES && span.rank !== null && span.rank !== undefined) caps = caps.filter((c) => c.rank === span.rank);
  return caps.slice(0, MAX_CAPTURES).map((c) => ["capture", fileUrl(c.path)]);
}

function runBlock(run) {
  const block = el("div", "logdir-run");
  block.dataset.run = run.run;
  const head = el("div", "logdir-run-head");
  head.append(el("h2", null, run.run));
  const workers = run.workers.length;
  const caps = run.captures ? run.captures.length : 0;
  const captured = caps ? `, ${count(caps)} graph capture${caps === 1 ? "" : "s"} (capture_traces/)` : "";
  head.append(el("span", "muted", `${count(workers)} worker${workers === 1 ? "" : "s"}, ${count(run.files)} file${run.files === 1 ? "" : "s"}, ${bytes(run.size)}, last written ${when(run.mtime_ms)}${captured}`));
  if (workers > 1) {
    const open = el("a", "button logdir-open-run", `Open the ${workers} workers as one job`);
    open.href = pageLink(run.latest.map((path) => ["url", fileUrl(path)]));
    open.title = "The ranks view: each worker's latest span, one band per rank";
    head.append(open);
  }
  block.append(head);

  const table = el("table", "data logdir-files");
  const tr = el("tr");
  for (const [name, cls] of [["worker"], ["span"], ["rank", "num"], ["size", "num"], ["modified"]]) tr.append(el("th", cls, name));
  const thead = el("thead");
  thead.append(tr);
  table.append(thead);
  const body = el("tbody");
  for (const w of run.workers) {
    w.spans.forEach((s, i) => {
      const row = el("tr");
      row.dataset.path = s.path;
      row.append(el("td", "text", i === 0 ? w.worker : ""));
      const cell = el("td", "text");
      const a = el("a", "logdir-open", spanTime(s.span));
      a.href = pageLink([["url", fileUrl(s.path)], ...captureParams(run, s)]);
      a.title = `Open ${s.file}`;
      cell.append(a);
      row.append(cell);
      // The whole row opens the span, as the tables' rows select theirs.
      row.addEventListener("click", (ev) => {
        if (!(/** @type {Element} */ (ev.target).closest("a"))) a.click();
      });
      const rank = el("td", "num", s.rank === null || s.rank === undefined ? "–" : String(s.rank));
      if (s.rank_source) rank.title = s.rank_source === "distributedInfo" ? `from the trace's distributedInfo${s.world_size ? ` (world size ${s.world_size})` : ""}` : "from the file name";
      row.append(rank, el("td", "num", bytes(s.size)), el("td", null, when(s.mtime_ms)));
      body.append(row);
    });
  }
  table.append(body);
  block.append(table);
  return block;
}
