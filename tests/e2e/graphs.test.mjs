// The Graphs tab (www/js/graphs-view.js) and the details of a replayed kernel (www/js/details.js)
// on a real HIP graph replay (tests/fixtures/graphs: SGLang's decode step, one hipGraphLaunch
// replaying 544 kernels). Numbers as `sightline graphs --json` gives them (tests/graphs.rs).

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { openTrace } from "./lib.mjs";

const replay = fileURLToPath(new URL("../fixtures/graphs/sglang_decode.replay.json.gz", import.meta.url));

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

export async function aTraceWithoutGraphsHasNoGraphsTab({ page, baseUrl, fixturesDir }) {
  await openTrace(page, baseUrl, `${fixturesDir}/real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz`, { analyses: true });
  await page.waitForSelector('#tabs button:text-is("Kernels")');
  assert.equal(await page.$('#tabs button:text-is("Graphs")'), null);
}
