// The Graphs tab (www/js/graphs-view.js) and the details of a replayed kernel (www/js/details.js)
// on a real HIP graph replay (tests/fixtures/graphs: SGLang's decode step, one hipGraphLaunch
// replaying 544 kernels). Numbers as `sightline graphs --json` gives them (tests/graphs.rs).

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { openTrace } from "./lib.mjs";

const replay = fileURLToPath(new URL("../fixtures/graphs/sglang_decode.replay.json.gz", import.meta.url));
const capture = fileURLToPath(new URL("../fixtures/graphs/sglang_decode.capture.json.gz", import.meta.url));

export async function graphsTabListsTheReplayAndItsKernelsSayWhoReplayedThem({ page, baseUrl, screenshot }) {
  await openTrace(page, baseUrl, replay, { analyses: true });
  await page.waitForSelector('#tabs button:text-is("Graphs")');
  await page.click('#tabs button:text-is("Graphs")');
  await page.waitForSelector("#graphs-table tbody tr");
  assert.match(await page.textContent("#tab-body"), /1 graph launches replayed 544 device ops \(98\.8% of the device time\)/);
  const row = await page.$$eval("#graphs-table tbody tr td", (t) => t.map((c) => c.textContent));
  assert.deepEqual(row, ["0", "1", "544", "9.66 ms", "1.57 ms"]);
  // A graph: its first launch selected.
  await page.click("#graphs-table tbody tr");
  await page.waitForFunction(() => document.querySelector("#details .slice-name")?.textContent === "hipGraphLaunch");
  // One of its kernels: highlighted, the first selected; its details name the graph and the launch.
  await page.click("#graph-ops-table tbody tr");
  await page.waitForFunction(() => /Replayed by graph 0/.test(document.querySelector("#details").textContent));
  assert.match(await page.textContent("#details"), /op \d+ of 544 in this replay; the graph is launched 1 time in the trace/);
  await screenshot("graphs-sglang");
}

export async function theCaptureTraceNamesEachReplayedKernelsOperatorInTheTablesAndDetails({ page, baseUrl, screenshot }) {
  await openTrace(page, baseUrl, replay, { analyses: true });
  // Before: the operator table charges the replayed kernels to the bare annotation.
  await page.waitForSelector("#ops-table tbody tr");
  assert.equal(await page.textContent("#ops-table tbody tr td"), "step[DECODE bs=32]");
  await page.click('#tabs button:text-is("Graphs")');
  await page.waitForSelector("#capture-input", { state: "attached" });
  // A trace that recorded no capture is refused with the reason, and the tab stays as it was.
  await page.setInputFiles("#capture-input", replay);
  await page.waitForFunction(() => /recorded no graph capture/.test(document.querySelector("#capture-status")?.textContent));
  await page.setInputFiles("#capture-input", capture);
  await page.waitForSelector("#captured-ops-table tbody tr");
  assert.match(await page.textContent("#tab-body"), /The capture sglang_decode\.capture\.json\.gz \(1 captures, \d+ dispatches\) names 544 of 544 replayed ops/);
  const first = await page.$$eval("#captured-ops-table tbody tr:first-child td", (t) => t.map((c) => c.textContent));
  // As `sightline graphs --capture` and TraceLens' merge: aten::mm, 5.78 ms of self device time.
  assert.deepEqual(first.slice(0, 3), ["aten::mm", "145", "5.78 ms"]);
  await screenshot("graphs-captured");
  // The operator table now charges the kernels to the operators that issued them.
  await page.click('#tabs button:text-is("Operators")');
  await page.waitForFunction(() => document.querySelector("#ops-table tbody tr td")?.textContent === "aten::mm");
  // The kernel table's launching operators, and a replayed kernel's details.
  await page.click('#tabs button:text-is("Kernels")');
  await page.waitForSelector("#kernels-table tbody tr");
  await page.click('#kernels-table tbody tr:has-text("paged_attention")');
  await page.waitForFunction(() => /Issued while captured by/.test(document.querySelector("#details").textContent));
  assert.match(await page.textContent("#details .captured-stack li:first-child"), /sglang_profiler::attention_paged_attention_ragged_100/);
  // The capture's module frames in the Modules tab (the replay alone has only the sampler's).
  await page.click('#tabs button:text-is("Modules")');
  await page.waitForFunction(() => /Qwen3Model_0/.test(document.querySelector("#tab-body")?.textContent || ""));
  // The critical path's longest segments: a replayed kernel names its captured operator.
  await page.click("#critical-path");
  await page.waitForSelector("#critical-panel .critical-segments tbody tr");
  assert.match(await page.textContent("#critical-panel .critical-segments"), /\(aten::mm, captured\)/);
}

export async function aTraceWithoutGraphsHasNoGraphsTab({ page, baseUrl, fixturesDir }) {
  await openTrace(page, baseUrl, `${fixturesDir}/real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz`, { analyses: true });
  await page.waitForSelector('#tabs button:text-is("Kernels")');
  assert.equal(await page.$('#tabs button:text-is("Graphs")'), null);
}
