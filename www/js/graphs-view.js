// The Graphs tab: the CUDA/HIP graphs the shown trace replays (`Session::graphs`, as
// `sightline graphs --json`): each graph's launches, ops per replay, device and launch time, and
// the ops it replays most. A click on a graph selects its first launch call; a click on an op
// highlights its slices. Hidden while the trace launches no graph.
//
// "Read the capture trace…": the trace recorded while the graphs were captured is read in a
// worker of its own, which hands over only what its captures dispatched (`capture_of`); the shown
// trace's session applies it (`use_capture`), and from then on its operator and kernel tables,
// this tab (the captured operators) and a replayed op's details name the operator that issued
// each replayed op, as `sightline graphs FILE --capture CAPTURE` does.

import { declaredColumns, renderTable } from "./table.js";
import { SessionWorker } from "./worker/client.js";
import { blobChunks, readInto, urlChunks, urlName } from "./load.js";
import { errorText } from "./errors.js";

/** At most this many `capture` URLs are read for one trace. */
const MAX_CAPTURES = 16;

/**
 * The `capture` URLs of the page's address (`?url=A&capture=B...`, as `sightline serve`'s start
 * screen writes them for a run with `capture_traces/`) when `loaded` is the address's trace; same
 * origin only.
 */
function capturesAsked(loaded) {
  const q = new URLSearchParams(location.search);
  const url = q.get("url");
  if (!url || !loaded.url || new URL(url, location.href).href !== loaded.url) return [];
  return q
    .getAll("capture")
    .map((u) => new URL(u, location.href))
    .filter((u) => u.origin === location.origin)
    .slice(0, MAX_CAPTURES);
}

/**
 * The Graphs tab. Returns { tab, analysed(loaded) }: `tab` goes in the page's tab list,
 * `analysed` is called once the shown trace's tables are built.
 * @param {import("./context.js").PageContext} cx the page's context (context.js)
 */
export function startGraphs({ app, tableOf, withTable, highlight, pick, showTabs, bindings, captured }) {
  const state = { loaded: null, has: false };
  const tab = {
    id: "graphs",
    title: "Graphs",
    hidden: () => !(state.has && state.loaded === app.active),
    render: (host) =>
      withTable(host, "graphs", (r) => renderGraphs(host, r, { highlight, pick, readCapture: (file, said) => readCapture(file, said), captureName: app.active && app.active.capture && app.active.capture.name })),
  };
  /**
   * Reads `file` as the capture of the shown trace's graphs; `said(text)` follows it. Resolves
   * once the tables that read the capture are asked again (`captured`).
   */
  async function readCapture(file, said) {
    const loaded = app.active;
    const worker = await SessionWorker.start(bindings);
    let capture;
    try {
      said(`Reading ${file.name}…`);
      await readInto(worker, blobChunks(file), {
        width: 100,
        height: 100,
        onProgress: (stage, read) => said(`Reading ${file.name}: ${stage}, ${(read / 1e6).toFixed(1)} MB`),
      });
      capture = await worker.session.capture_of();
    } finally {
      worker.terminate();
    }
    if (app.active !== loaded) return;
    const m = await loaded.session.use_capture(capture);
    loaded.capture = { name: file.name, ...m };
    captured(loaded);
  }

  /**
   * Reads each of `urls` in a worker of its own and applies the capture that names the most of
   * the shown trace's replayed ops, as the CLI picks among the captures beside a trace. A URL
   * that is not a capture of these graphs is passed over.
   */
  async function readCaptures(loaded, urls) {
    let best = null;
    for (const url of urls) {
      const name = urlName(url);
      const worker = await SessionWorker.start(bindings);
      try {
        await readInto(worker, urlChunks(url, name), { width: 100, height: 100, onProgress: () => {} });
        const capture = await worker.session.capture_of();
        const n = await loaded.session.capture_pairs(capture);
        if (n > 0 && (!best || n > best.n)) best = { n, capture, name };
      } catch {
        // Not a trace, or it recorded no capture of these graphs.
      } finally {
        worker.terminate();
      }
      if (app.active !== loaded) return;
    }
    if (!best) return;
    const m = await loaded.session.use_capture(best.capture);
    loaded.capture = { name: best.name, ...m };
    captured(loaded);
  }
  async function analysed(loaded) {
    let r;
    try {
      r = await tableOf("graphs");
    } catch {
      return; // The tables' own failure is shown where they are asked for.
    }
    if (app.active !== loaded) return;
    state.loaded = loaded;
    state.has = r.launches > 0 || r.instantiations > 0;
    if (state.has) showTabs();
    const urls = r.launches > 0 && !r.capture ? capturesAsked(loaded) : [];
    if (urls.length) readCaptures(loaded, urls);
  }
  return { tab, analysed };
}

const us = (ns) => ns / 1e3;

export function renderGraphs(host, r, { highlight, pick, readCapture, captureName }) {
  host.replaceChildren();
  const graphs = document.createElement("div");
  const ops = document.createElement("div");
  const note = document.createElement("p");
  note.className = "muted";
  const share = r.device_ns > 0 ? ` (${((100 * r.replayed_device_ns) / r.device_ns).toFixed(1)}% of the device time)` : "";
  const inst = r.instantiations > 0 ? ` · ${r.instantiations} graph instantiations, ${(us(r.instantiation_ns) / 1e3).toFixed(2)} ms` : "";
  note.textContent = `${r.launches} graph launches replayed ${r.replayed_ops} device ops${share}${inst}. `;
  const c = r.capture;
  if (c) {
    note.append(`The capture${captureName ? ` ${captureName}` : ""} (${c.captures} captures, ${c.dispatches} dispatches) names ${c.attributed_ops} of ${c.attributed_ops + c.unattributed_ops} replayed ops: the operator and kernel tables and a replayed op's details name the operator that issued it.`);
  } else {
    note.append("The trace names no operator for a replayed op; the trace recorded while the graphs were captured does. ");
    if (r.launches > 0) note.append(captureControl(readCapture));
  }
  host.append(note, graphs, ops);
  // The graphs as their table declares its columns; the lists (first launch, top ops) are
  // not cells: a click selects the first launch, the ops are listed below.
  renderTable(graphs, r.graphs, {
    id: "graphs-table",
    columns: declaredColumns(r.columns).filter((c) => c.key !== "graph_id"),
    csvName: "graphs.csv",
    onRowClick: (g) => pick(g.first_launch.lane, g.first_launch.index),
    caption: "CUDA/HIP graphs by their replays (click: the first launch)",
  });
  if (r.captured_ops) {
    const rows = r.captured_ops.map((o) => ({ name: o.name, calls: o.calls, self_device_us: us(o.self_device_ns), device_total_us: us(o.device_total_ns) }));
    renderTable(ops, rows, {
      id: "captured-ops-table",
      columns: [
        { key: "name", label: "Captured operator", kind: "text" },
        { key: "calls", label: "Calls", kind: "int" },
        { key: "self_device_us", label: "Self device", kind: "us" },
        { key: "device_total_us", label: "Device total", kind: "us" },
      ],
      csvName: "captured-ops.csv",
      caption: "the operators that issued the replayed ops while the graphs were captured",
    });
    return;
  }
  const opRows = r.graphs.flatMap((g) => g.top_ops.map((o) => ({ graph: g.index, name: o.name, calls: o.calls, device_us: us(o.device_ns) })));
  renderTable(ops, opRows, {
    id: "graph-ops-table",
    columns: [
      { key: "graph", label: "Graph", kind: "int" },
      { key: "name", label: "Replayed op", kind: "text" },
      { key: "calls", label: "Calls", kind: "int" },
      { key: "device_us", label: "Device time", kind: "us" },
    ],
    csvName: "graph-ops.csv",
    onRowClick: (o) => highlight(o.name),
    caption: "each graph's ops with the most device time",
  });
}

/** "Read the capture trace…": a file input, and what became of the read. */
function captureControl(readCapture) {
  const span = document.createElement("span");
  const label = document.createElement("label");
  label.className = "button";
  label.textContent = "Read the capture trace…";
  const input = document.createElement("input");
  input.type = "file";
  input.id = "capture-input";
  input.accept = ".json,.gz,application/json,application/gzip";
  input.hidden = true;
  label.append(input);
  const said = document.createElement("span");
  said.id = "capture-status";
  said.className = "muted";
  const say = (text) => {
    said.textContent = ` ${text}`;
  };
  input.addEventListener("change", async () => {
    const file = input.files[0];
    input.value = "";
    if (!file) return;
    try {
      await readCapture(file, say);
    } catch (e) {
      say(`${file.name}: ${errorText(e)}`);
    }
  });
  span.append(label, said);
  return span;
}
