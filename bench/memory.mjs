#!/usr/bin/env node
// What the memory views cost in headless Chromium on one trace (a release build in dist/):
// - frames (TimelineView.draw) with the memory chart as a layer of each frame and without it,
//   zoomed out and while zooming in and out, and the chart's own `memory_columns` round trip
//   (worker call and transfer) measured inside those frames;
// - the first `memory_live` (the peak's panel, asked for after the analyses; it pairs the allocations and finds their operators, building the
//   links), a later one, and `memory_allocations` with its JSON size and the table's rendering.
//
//   node bench/memory.mjs [TRACE]
//
// TRACE defaults to real/tracelens_h100_owlv2_stack_mem.json.gz. Prints one JSON object.

import { join, resolve } from "node:path";
import { openAnalysed, root, start, viewerPage } from "./viewer.mjs";

async function measure({ browser, server }, trace, n = 120) {
  const page = await viewerPage({ browser, server });
  try {
    await openAnalysed(page, trace);
    return await page.evaluate(inPage, n);
  } finally {
    await page.close();
  }
}

async function inPage(n) {
  const { view, memory, app } = window.sightline;
  await memory.state.ready;
  // The peak's panel asked for after the analyses: let it finish, so it is not timed below.
  while (!memory.state.live) await new Promise((r) => setTimeout(r, 50));
  const s = view.session;
  const { stats } = window.benchPage;
  const w = view.areaSize().w;
  const frames = async () => {
    s.reset_view();
    await view.draw();
    const out = [];
    for (let i = 0; i < n; i++) out.push(await view.draw());
    const zoom = [];
    const steps = Math.max(10, Math.floor(n / 2));
    const factor = Math.pow(1e-6, 1 / steps);
    for (let i = 0; i < steps; i++) {
      s.zoom_at(w * 0.37, factor);
      zoom.push(await view.draw());
    }
    for (let i = 0; i < steps; i++) {
      s.zoom_at(w * 0.37, 1 / factor);
      zoom.push(await view.draw());
    }
    return { zoomed_out: stats(out), zooming: stats(zoom) };
  };
  // A first round warms up (and lets the spare worker started after the analyses settle); then
  // without the chart and with it, one after the other.
  await frames();
  const layers = view.layers.splice(0);
  const without = await frames();
  view.layers.push(...layers);
  memory.chart.fetchTimes.length = 0;
  const withChart = await frames();
  const columns = stats(memory.chart.fetchTimes);
  // The Session calls behind the panel and the tab, timed from the page (worker time + transfer).
  const device = memory.state.device;
  const timed = async (f) => {
    const t0 = performance.now();
    const v = await f();
    return [performance.now() - t0, v];
  };
  const firstLiveMs = memory.state.liveMs[0];
  const [liveMs] = await timed(() => s.memory_live(device, NaN, 50));
  const t = memory.state.devices.find((d) => d.device === device).peak_at_ns / 2;
  const [liveAtMs, liveAt] = await timed(() => s.memory_live(device, t, 50));
  const [tableMs, table] = await timed(() => s.memory_allocations(device));
  const host = document.createElement("div");
  document.body.append(host);
  const { renderAllocations } = await import(new URL("js/memory-panels.js", location.href).href);
  // The client (worker/client.js) parses the table's JSON: memory_allocations_ms includes it.
  const [renderMs] = await timed(async () => {
    renderAllocations(host, table, { device, devices: [device], onDevice() {}, onSlice() {} });
  });
  host.remove();
  return {
    trace: app.active.name,
    memory_events: memory.state.devices.map((d) => ({ device: d.device, events: d.events })),
    canvas_css_px: [view.cssW, view.cssH],
    frames_with_memory_chart: withChart,
    frames_without_memory_chart: without,
    memory_columns_round_trip: columns,
    first_memory_live_ms: +firstLiveMs.toFixed(1),
    memory_live_at_peak_ms: +liveMs.toFixed(1),
    memory_live_at_time_ms: +liveAtMs.toFixed(1),
    live_allocations_at_time: liveAt.live_count,
    memory_allocations_ms: +tableMs.toFixed(1),
    allocations: table.rows.length,
    allocations_json_bytes: JSON.stringify(table).length,
    allocation_table_render_ms: +renderMs.toFixed(1),
  };
}

const fixtures = resolve(root, process.env.SIGHTLINE_FIXTURES || "../shared/fixtures");
const given = process.argv.slice(2).find((a) => !a.startsWith("--"));
const trace = resolve(given || join(fixtures, "real/tracelens_h100_owlv2_stack_mem.json.gz"));
const env = await start();
try {
  console.log(JSON.stringify(await measure(env, trace), null, 2));
} finally {
  await env.browser.close();
  await env.server.close();
}
