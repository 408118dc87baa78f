// The Modules tab (www/js/modules-view.js): the nn.Module tree of a with_modules trace as a table
// that opens and closes and as an icicle; a click on either highlights the module's frames
// (`nn.Module: NAME`) on the timeline and says how many. Numbers as `sightline modules --json`.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openTrace } from "./lib.mjs";

async function modulesTab(page) {
  await page.waitForSelector('#tabs button:text-is("Modules")');
  await page.click('#tabs button:text-is("Modules")');
  await page.waitForSelector("#modules-table tbody tr");
}

const visibleRows = (page) => page.$$eval("#modules-table tbody tr:not([hidden])", (t) => t.map((r) => [...r.cells].map((c) => c.textContent)));

export async function modulesTabShowsTheTreeAndHighlightsAModule({ page, baseUrl, samplesDir, screenshot }) {
  await openTrace(page, baseUrl, join(samplesDir, "tracelens_h100_bert_small_stack_mem.json.gz"), { analyses: true });
  await modulesTab(page);
  const heads = await page.$$eval("#modules-table th", (t) => t.map((x) => x.textContent));
  // Inference only: no backward columns.
  assert.deepEqual(heads, ["Module", "# of Calls", "Host total", "Host self", "Device total", "Device self"]);
  assert.equal((await page.$$("#modules-table tbody tr")).length, 84);
  const rows = await visibleRows(page);
  // sightline modules --json: BertLMHeadModel_0, 1 call, host 4,216.941 µs total, 103.191 self,
  // device 309.437 total, 0 self; BertModel_0 device total 257.341 µs.
  assert.deepEqual(rows[0], ["▾BertLMHeadModel_0", "1", "4.22 ms", "103 µs", "309 µs", "0 ns"]);
  assert.deepEqual(rows[1].slice(0, 1).concat(rows[1].slice(4, 5)), ["▾BertModel_0", "257 µs"]);
  // The icicle: the root spans the width; its children share it by device total.
  const boxes = await page.$$eval("svg.icicle .ic-box", (g) => g.map((x) => ({ m: x.dataset.module, w: Number(x.querySelector("rect").getAttribute("width")) })));
  const root = boxes.find((b) => b.m === "BertLMHeadModel_0");
  const bert = boxes.find((b) => b.m === "BertLMHeadModel_0/BertModel_0");
  assert.ok(root && bert, "boxes for the root and BertModel_0");
  assert.ok(Math.abs(bert.w / root.w - 257.341 / 309.437) < 0.01, `${bert.w} / ${root.w}`);

  // A row: its frames highlighted on the timeline, the first selected, the count said.
  await page.click('#modules-table tbody tr[data-module="BertLMHeadModel_0/BertModel_0/BertEncoder_0"]');
  await page.waitForFunction(() => /highlighted on the timeline/.test(document.querySelector(".modules-found").textContent));
  assert.match(await page.textContent(".modules-found"), /^1 call of BertLMHeadModel_0\/BertModel_0\/BertEncoder_0 \(slices named “nn\.Module: BertEncoder_0”\)/);
  assert.equal(await page.textContent("#search-count"), "1 × nn.Module: BertEncoder_0");
  await page.waitForFunction(() => document.querySelector("#details .slice-name")?.textContent === "nn.Module: BertEncoder_0");

  // A box deep in a closed branch: opens its row and highlights it.
  await page.click("#modules-table tbody tr:first-child .twisty");
  assert.equal((await visibleRows(page)).length, 1, "closing the root hides the rest");
  const layer = "BertLMHeadModel_0/BertModel_0/BertEncoder_0/BertLayer_2";
  await page.click(`svg.icicle .ic-box[data-module="${layer}"]`);
  await page.waitForFunction(() => document.querySelector("#details .slice-name")?.textContent === "nn.Module: BertLayer_2");
  assert.ok(await page.isVisible(`#modules-table tbody tr[data-module="${layer}"].active`));
  assert.equal(await page.getAttribute(`svg.icicle .ic-box[data-module="${layer}"]`, "class"), "ic-box active");
  await screenshot("modules-h100");
}

export async function modulesOfACpuTraceAreSizedByHostTimeWithBackward({ page, baseUrl, fixturesDir }) {
  await openTrace(page, baseUrl, join(fixturesDir, "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz"), { analyses: true });
  await modulesTab(page);
  const heads = await page.$$eval("#modules-table th", (t) => t.map((x) => x.textContent));
  assert.deepEqual(heads, ["Module", "# of Calls", "Host total", "Host self", "Bwd calls", "Bwd host"]);
  assert.match(await page.textContent("#tab-body .table-tools"), /20 modules · boxes as wide as their host time/);
  // TinyEncoder_0: 3 calls, 548,144.774 µs; 396 backward nodes, 368,699.957 µs.
  assert.deepEqual((await visibleRows(page))[0], ["▾TinyEncoder_0", "3", "548 ms", "2.50 ms", "396", "369 ms"]);
  await page.click('#modules-table tbody tr[data-module="TinyEncoder_0/TransformerEncoderLayer_1"]');
  await page.waitForFunction(() => /^3 calls of TinyEncoder_0\/TransformerEncoderLayer_1/.test(document.querySelector(".modules-found").textContent));
}

export async function aTraceWithoutModulesHasNoModulesTab({ page, baseUrl, fixturesDir }) {
  await openTrace(page, baseUrl, join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz"), { analyses: true });
  // The tab is added once the module table is known to have rows: this one has none.
  assert.equal(await page.evaluate(async () => (await window.sightline.app.tables.modules).rows.length), 0);
  const tabs = await page.$$eval("#tabs button", (b) => b.map((x) => x.textContent));
  assert.ok(tabs.includes("Operators") && !tabs.includes("Modules"), tabs.join("|"));
}
