// Memory on the page, for traces recorded with `profile_memory=True`: the chart under the timeline
// (memory-chart.js, one of the timeline's layers), the panel of what was live at the peak or at a
// clicked time, and the "Memory" tab with the allocation table (memory-panels.js). app.js calls
// `attach` with each shown trace and `analysed` once its background analyses are done.
//
// The live allocations and the table need the allocations paired with their frees and the operator
// around each (`Session::memory_live` builds them on first use); the peak's panel is asked for
// only after the analyses, so that it does not delay the first tables.

import { MemoryChart } from "./memory-chart.js";
import { renderAllocations, renderLive } from "./memory-panels.js";

const LIVE_ROWS = 50;

/**
 * The memory chart, its panel and its tab. Returns the page's memory controller.
 * @param {import("./context.js").PageContext} cx the page's context (context.js): its app, view, pick and fail
 */
export function startMemory({ app, view, pick, fail }) {
  const $ = (id) => document.getElementById(id);
  const state = {
    session: null,
    /** memory_devices() of the shown trace. */
    devices: [],
    /** The device the panel and the table show. */
    device: null,
    /** The last memory_live() shown. */
    live: null,
    /** Allocation tables by device: promises of the parsed `{names, rows}`. */
    tables: {},
    /** Milliseconds of each memory_live call (the first pairs the allocations), for benchmarks. */
    liveMs: [],
    /**
     * Resolves once the shown trace's devices are known.
     * @type {Promise<any[] | void>}
     */
    ready: Promise.resolve(),
  };
  const failed = (session) => (err) => {
    if (session === state.session) fail(err);
  };
  const revealSlice = async (lane, index) => {
    await pick(lane, index);
    $("timeline").scrollIntoView({ block: "nearest" });
  };
  const chart = new MemoryChart({
    box: $("memory"),
    canvas: /** @type {HTMLCanvasElement} */ ($("memory-chart")),
    tooltip: $("memory-tooltip"),
    legend: $("memory-legend"),
    note: $("memory-note"),
    onPick: (device, t) => showLive(device, t),
    onZoom: (x, factor) => {
      view.call(() => view.session.zoom_at(x, factor));
      view.request();
    },
    onPan: (dx) => {
      view.call(() => view.session.pan(dx, 0));
      view.request();
    },
  });
  view.layers.push(chart);

  /** Shows the memory of a newly shown trace (or nothing, for null). */
  async function attach(session) {
    Object.assign(state, { session, devices: [], device: null, live: null, tables: {}, liveMs: [] });
    $("memory-panel").hidden = true;
    $("memory-live").replaceChildren();
    state.ready = chart.attach(session).catch(failed(session));
    const devices = await state.ready;
    if (!devices || session !== state.session) return;
    state.devices = devices;
    // The first device's panel: a GPU where there is one (the CPU is listed first).
    state.device = (devices.find((d) => d.device !== "cpu") || devices[0] || {}).device ?? null;
    $("memory-panel").hidden = devices.length === 0;
    if (devices.length) {
      $("memory-live").replaceChildren(muted("Click the memory chart for what was live at that time, or a device's peak above it."));
    }
    view.request();
  }

  /** The analyses are done: the panel shows what was live at the peak. */
  function analysed(session) {
    if (session === state.session && state.device && !state.live) showLive(state.device, NaN);
  }

  /** What was live on `device` at `t_ns` (NaN: at its peak), in the panel. */
  async function showLive(device, t_ns) {
    const session = state.session;
    if (!session) return;
    state.device = device;
    chart.marker = Number.isNaN(t_ns) ? null : { device, t_ns };
    view.request();
    const host = $("memory-live");
    host.replaceChildren(muted("Finding what was live…"));
    const t0 = performance.now();
    const live = await session.memory_live(device, t_ns, LIVE_ROWS).catch(failed(session));
    if (live === undefined || session !== state.session) return;
    state.liveMs.push(performance.now() - t0);
    state.live = live;
    renderLive(host, state.live, revealSlice);
  }

  /** The "Memory" tab: the allocation table of the panel's device. */
  async function renderTab(host) {
    const session = state.session;
    await state.ready;
    if (session !== state.session || app.tab !== "memory") return;
    const device = state.device;
    if (!device) {
      host.replaceChildren(muted("No [memory] events in this trace: it was recorded without profile_memory=True."));
      return;
    }
    host.replaceChildren(muted("Reading the allocations…"));
    state.tables[device] ??= session.memory_allocations(device);
    const table = await state.tables[device].catch(failed(session));
    if (!table || session !== state.session || app.tab !== "memory") return;
    renderAllocations(host, table, {
      device,
      devices: state.devices.map((d) => d.device),
      onDevice: (d) => {
        state.device = d;
        renderTab(host);
      },
      onSlice: revealSlice,
    });
  }

  return { state, chart, attach, analysed, showLive, tab: { id: "memory", title: "Memory", render: renderTab } };
}

function muted(text) {
  return Object.assign(document.createElement("p"), { className: "muted", textContent: text });
}
