// The Compiled tab: torch.compile as the shown trace records it (`Session::compiled`, as
// `sightline compiled --json`): the compiled graphs with their calls, CPU and device time and the
// eager operators their kernels replaced; the compiled frames with their compile ids, the steps
// each ran in (a compile id that grows inside the window is a recompilation) and the eager
// operators run between their regions (graph breaks); every Inductor kernel with the operators
// its name spells. A click on a graph or kernel highlights its slices. Hidden while the trace
// has no compiled code. Each table's headers, units and hover text are the columns its rows
// declare (`tables`, sent beside the answer); the lists they hold are shown joined as text.

import { pickColumns, renderTable } from "./table.js";

/**
 * The Compiled tab. Returns { tab, analysed(loaded) }: `tab` goes in the page's tab list, `analysed` is called once
 * the shown trace's tables are built.
 * @param {import("./context.js").PageContext} cx the page's context (context.js)
 */
export function startCompiled({ app, tableOf, withTable, highlight, showTabs }) {
  const state = { loaded: null, has: false };
  const tab = {
    id: "compiled",
    title: "Compiled",
    hidden: () => !(state.has && state.loaded === app.active),
    render: (host) => withTable(host, "compiled", (c) => renderCompiled(host, c, highlight)),
  };
  async function analysed(loaded) {
    let c;
    try {
      c = await tableOf("compiled");
    } catch {
      return; // The tables' own failure is shown where they are asked for.
    }
    if (app.active !== loaded) return;
    state.loaded = loaded;
    state.has = c.frames.length > 0 || c.graphs.length > 0 || c.loose_kernels.length > 0;
    if (state.has) showTabs();
  }
  return { tab, analysed };
}

function section(host, title) {
  const h = document.createElement("h3");
  h.textContent = title;
  const body = document.createElement("div");
  host.append(h, body);
  return body;
}

/**
 * The declared column `key` of the table whose rows are under `rows` (`graphs`,
 * `graphs[].kernels`, `frames`) as renderTable takes it, under `as` where the view writes the
 * value under another key; `kind` where the view shows it otherwise than its unit (a list
 * counted). A list the view joins is data, shown as text.
 * @param {import("./worker/client.js").WithTables<import("../generated/answers.js").Compiled>} c
 * @param {string} rows @param {string} key @param {{ as?: string, kind?: string }} [how]
 * @returns {import("./table.js").Column}
 */
function declared(c, rows, key, how = {}) {
  const [d] = pickColumns(c.tables[rows].columns, [key]);
  if (!d) throw new Error(`compiled: ${rows} declares no column ${key}`);
  return { ...d, key: how.as ?? key, kind: how.kind ?? d.kind };
}

/**
 * @param {HTMLElement} host
 * @param {import("./worker/client.js").WithTables<import("../generated/answers.js").Compiled>} c
 * @param {(name: string) => void} highlight
 */
export function renderCompiled(host, c, highlight) {
  host.replaceChildren();
  const note = document.createElement("p");
  note.className = "muted";
  const recompiled = c.frames.filter((f) => f.compiles.length > 1).length;
  const compileUs = c.steps.reduce((a, s) => a + s.compile_us, 0);
  note.textContent =
    `${c.frames.length} compiled frame${c.frames.length === 1 ? "" : "s"}, ${c.graphs.length} compiled graph${c.graphs.length === 1 ? "" : "s"}` +
    (recompiled ? `, ${recompiled} frame${recompiled === 1 ? "" : "s"} compiled more than once` : "") +
    (compileUs > 0 ? `, ${(compileUs / 1e3).toFixed(1)} ms of compile work inside the steps` : "") +
    ".";
  host.append(note);
  const graphs = c.graphs.map((g) => ({
    name: g.name,
    compile_ids: g.backward ? "backward" : g.compile_ids.join(", "),
    calls: g.calls,
    cpu_us: g.cpu_us,
    device_us: g.device_us,
    kernels: g.kernels.length,
    replaces: g.replaces.join(", "),
  }));
  renderTable(section(host, "Compiled graphs"), graphs, {
    id: "compiled-graphs-table",
    columns: [
      declared(c, "graphs", "name"),
      declared(c, "graphs", "compile_ids"),
      declared(c, "graphs", "calls"),
      declared(c, "graphs", "cpu_us"),
      declared(c, "graphs", "device_us"),
      declared(c, "graphs", "kernels", { kind: "int" }),
      declared(c, "graphs", "replaces"),
    ],
    csvName: "compiled-graphs.csv",
    onRowClick: (g) => highlight(g.name),
    caption: "each graph's calls; its kernels fused the operators listed",
    empty: "No compiled graph calls in this trace.",
  });
  const frames = c.frames.map((f) => ({
    first_id: f.compiles.length ? f.compiles[0].compile_id : null,
    frame: f.frame,
    calls: f.calls,
    cpu_us: f.cpu_us,
    compiles: f.compiles.map((x) => `${x.compile_id} (${x.steps.length ? x.steps.join(", ") : "no step"})`).join("; "),
    resumes: f.resumes.join(", "),
    eager_between: f.eager_ops
      .slice(0, 5)
      .map((o) => `${o.name} ×${o.calls}`)
      .join(", "),
  }));
  renderTable(section(host, "Compiled frames"), frames, {
    id: "compiled-frames-table",
    columns: [
      declared(c, "frames", "frame"),
      declared(c, "frames", "calls"),
      declared(c, "frames", "cpu_us"),
      declared(c, "frames", "compiles"),
      declared(c, "frames", "resumes"),
      declared(c, "frames", "eager_ops", { as: "eager_between" }),
    ],
    csvName: "compiled-frames.csv",
    onRowClick: (f) => f.first_id && highlight(`Torch-Compiled Region: ${f.first_id}`),
    caption: "Torch-Compiled Region F/C: frame F, compile C",
  });
  const kernels = [...c.graphs.flatMap((g) => g.kernels.map((k) => ({ graph: g.name, ...k }))), ...c.loose_kernels.map((k) => ({ graph: "", ...k }))].map((k) => ({
    name: k.name,
    graph: k.graph,
    kind: k.kind,
    fused_ops: k.fused_ops.join(", "),
    calls: k.calls,
    cpu_us: k.cpu_us,
    device_us: k.device_us,
    kernel_file: k.kernel_file || "",
  }));
  // The generated source, where the trace names it (PyTorch records it on a Triton launch).
  const sources = kernels.some((k) => k.kernel_file);
  renderTable(section(host, "Inductor kernels"), kernels, {
    id: "compiled-kernels-table",
    columns: [
      declared(c, "graphs[].kernels", "name"),
      declared(c, "graphs", "name", { as: "graph" }),
      declared(c, "graphs[].kernels", "kind"),
      declared(c, "graphs[].kernels", "fused_ops"),
      declared(c, "graphs[].kernels", "calls"),
      declared(c, "graphs[].kernels", "cpu_us"),
      declared(c, "graphs[].kernels", "device_us"),
      ...(sources ? [declared(c, "graphs[].kernels", "kernel_file")] : []),
    ],
    csvName: "inductor-kernels.csv",
    onRowClick: (k) => highlight(k.name),
    caption: "the operators a kernel fused, as its name spells them",
    empty: "No Inductor kernels recorded (on CPU, torch._inductor.config.cpp.enable_kernel_profile records them).",
  });
}
