#!/usr/bin/env node
// What the critical path costs in the page, in headless Chromium on one trace (a release build in
// dist/), each figure from posting the Session call to its answer (worker time and transfer):
// - the toggle's first `critical_path` (links, the dependency graph, each step's path) and
//   `show_critical_path`;
// - a what-if (`what_if`, the edits' factors and one replay of the kept graph), N times each for
//   `kernels*0.5` and `aten::*=0`;
// - frames (TimelineView.draw) zoomed out and while zooming, with the path drawn and without;
// - the longest `analyse_step` call of the analyses (the findings' savings replay in one go).
//
//   node bench/critical.mjs [TRACE]
//
// TRACE defaults to real/tracelens_h100_owlv2_stack_mem.json.gz. Prints one JSON object.

import { join, resolve } from "node:path";
import { openAnalysed, root, start, viewerPage } from "./viewer.mjs";

async function measure({ browser, server }, trace, n = 30) {
  const page = await viewerPage({ browser, server });
  try {
    await openAnalysed(page, trace);
    return await page.evaluate(inPage, n);
  } finally {
    await page.close();
  }
}

async function inPage(n) {
  const { view, app } = window.sightline;
  const s = view.session;
  const { stats } = window.benchPage;
  const w = view.areaSize().w;
  const timed = async (f) => {
    const t0 = performance.now();
    const v = await f();
    return [performance.now() - t0, v];
  };
  const frames = async () => {
    s.reset_view();
    await view.draw();
    const out = [];
    for (let i = 0; i < n; i++) out.push(await view.draw());
    const zoom = [];
    const factor = Math.pow(1e-5, 1 / n);
    for (let i = 0; i < n; i++) {
      s.zoom_at(w * 0.37, factor);
      zoom.push(await view.draw());
    }
    return { zoomed_out: stats(out), zooming: stats(zoom) };
  };
  const longestStep = Math.max(...app.active.analysis.stepMs);
  await frames();
  const without = await frames();
  const [buildMs, summary] = await timed(() => s.critical_path());
  const [showMs] = await timed(() => s.show_critical_path(true));
  const withPath = await frames();
  const whatIf = {};
  for (const edit of ["kernels*0.5", "aten::*=0"]) {
    const ms = [];
    let answer = null;
    for (let i = 0; i < n; i++) {
      const [t, a] = await timed(() => s.what_if(edit));
      ms.push(t);
      answer = a;
    }
    whatIf[edit] = { ms: stats(ms), steps: answer.steps.length, matched: answer.edits[0].matched, mean_measured_us: answer.mean_measured_us, mean_predicted_us: answer.mean_predicted_us };
  }
  const sm = summary;
  return {
    trace: app.active.name,
    steps: sm.steps.length,
    path_slices: sm.slices,
    path_hops: sm.hops,
    canvas_css_px: [view.cssW, view.cssH],
    longest_analyse_step_ms: +longestStep.toFixed(1),
    critical_path_first_call_ms: +buildMs.toFixed(1),
    show_critical_path_ms: +showMs.toFixed(1),
    what_if: whatIf,
    frames_without_path: without,
    frames_with_path: withPath,
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
