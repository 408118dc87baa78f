// The Graphs tab: the CUDA/HIP graphs the shown trace replays (`Session::table("graphs")`, as
// `sightline graphs --json`): each graph's launches, ops per replay, device and launch time, and
// the ops it replays most. A click on a graph selects its first launch call; a click on an op
// highlights its slices. Hidden while the trace launches no graph.

import { renderTable } from "./table.js";

/**
 * hooks (app.js): { app, tableOf(kind), withTable(host, kind, render), highlight(name), pick(lane,
 * index), showTabs() }. Returns { tab, analysed(loaded) }: `tab` goes in the page's tab list,
 * `analysed` is called once the shown trace's tables are built.
 */
export function startGraphs({ app, tableOf, withTable, highlight, pick, showTabs }) {
  const state = { loaded: null, has: false };
  const tab = {
    id: "graphs",
    title: "Graphs",
    hidden: () => !(state.has && state.loaded === app.active),
    render: (host) => withTable(host, "graphs", (r) => renderGraphs(host, r, { highlight, pick })),
  };
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
  }
  return { tab, analysed };
}

const us = (ns) => ns / 1e3;

export function renderGraphs(host, r, { highlight, pick }) {
  host.replaceChildren();
  const graphs = document.createElement("div");
  const ops = document.createElement("div");
  const note = document.createElement("p");
  note.className = "muted";
  const share = r.device_ns > 0 ? ` (${((100 * r.replayed_device_ns) / r.device_ns).toFixed(1)}% of the device time)` : "";
  const inst = r.instantiations > 0 ? ` · ${r.instantiations} graph instantiations, ${(us(r.instantiation_ns) / 1e3).toFixed(2)} ms` : "";
  note.textContent =
    `${r.launches} graph launches replayed ${r.replayed_ops} device ops${share}${inst}. ` +
    "The trace names no operator for a replayed op; the trace recorded while the graphs were captured does: sightline graphs FILE --capture CAPTURE.";
  host.append(note, graphs, ops);
  const rows = r.graphs.map((g) => ({
    graph: g.index,
    launches: g.launches,
    ops_per_replay: g.ops_per_replay,
    device_us: us(g.device_ns),
    launch_cpu_us: us(g.launch_cpu_ns),
    first_launch: g.first_launch,
  }));
  renderTable(graphs, rows, {
    id: "graphs-table",
    columns: [
      { key: "graph", label: "Graph", kind: "int" },
      { key: "launches", label: "Launches", kind: "int" },
      { key: "ops_per_replay", label: "Ops a replay", kind: "int" },
      { key: "device_us", label: "Device time", kind: "us" },
      { key: "launch_cpu_us", label: "Launch CPU", kind: "us" },
    ],
    csvName: "graphs.csv",
    onRowClick: (g) => pick(g.first_launch.lane, g.first_launch.index),
    caption: "CUDA/HIP graphs by their replays (click: the first launch)",
  });
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
