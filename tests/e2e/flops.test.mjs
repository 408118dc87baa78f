// End-to-end checks of FLOPs on the page: on an H100 trace recorded with shapes, the operator
// table by input shape shows the GFLOPs `sightline flops --json` gives for a GEMM row (the
// expectations in tests/fixtures/flops/, checked against the analysis by tests/flops.rs), the
// kernel table has its FLOPs columns, the roofline draws one point per op and shape with kernel
// time and names the device's roofs, and a click on a point selects one of its calls on the
// timeline and lists them; a trace without shapes shows why there is no roofline.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openTrace } from "./lib.mjs";

const EXPECT = JSON.parse(readFileSync(new URL("../fixtures/flops/bert_small_h100.json", import.meta.url), "utf8"));
const NO_SHAPES = "real/hta_v100_train_1rank_ns_resolution.pt.trace.json.gz";

async function openTab(page, title) {
  await page.click(`#tabs button:text-is("${title}")`);
}

export async function flopsColumnsAndRooflineOnAnH100Trace({ page, baseUrl, fixturesDir, screenshot }) {
  await openTrace(page, baseUrl, join(fixturesDir, EXPECT.trace), { analyses: true });

  // The operator table by input shape: the GEMM row's GFLOPs/call.
  await page.check("#ops-by-shape");
  await page.waitForSelector("#ops-table th:text-is('GFLOPs/call')");
  const shapes = JSON.stringify(EXPECT.gemm.input_shapes).replace(/,/g, ", ");
  const cell = await page.evaluate(
    ([name, shapes]) => {
      const table = document.getElementById("ops-table");
      const heads = [...table.tHead.rows[0].cells].map((c) => c.textContent);
      const col = (h) => heads.indexOf(h);
      for (const tr of table.tBodies[0].rows) {
        const c = tr.cells;
        if (c[col("Name")].textContent === name && c[col("Input Shapes")].textContent === shapes) {
          return { gflops: c[col("GFLOPs/call")].textContent, tflops: c[col("TFLOP/s")].textContent, bound: c[col("Bound")].textContent };
        }
      }
      return { heads };
    },
    [EXPECT.gemm.name, shapes],
  );
  assert.ok(cell.gflops, `no ${EXPECT.gemm.name} ${shapes} row: ${JSON.stringify(cell)}`);
  const shown = (v) => v.toLocaleString("en-US", { maximumFractionDigits: 3 });
  assert.equal(cell.gflops, shown(EXPECT.gemm.gflops));
  assert.equal(cell.tflops, shown(EXPECT.gemm.tflops_s));
  assert.match(cell.bound, /^(compute|memory)$/);
  await screenshot("ops-by-shape-flops");

  // The kernel table's FLOPs columns, filled for some kernel.
  await openTab(page, "Kernels");
  await page.waitForSelector("#kernels-table th:text-is('TFLOP/s')");
  const kernelRates = await page.evaluate(() => {
    const table = document.getElementById("kernels-table");
    const col = [...table.tHead.rows[0].cells].findIndex((c) => c.textContent === "TFLOP/s");
    return [...table.tBodies[0].rows].map((tr) => tr.cells[col].textContent).filter((t) => t !== "");
  });
  assert.ok(kernelRates.length > 0, "no kernel has a TFLOP/s");

  // The roofline: one point per op and shape with kernel time, the device's roofs named.
  await openTab(page, "Roofline");
  await page.waitForSelector("#roofline-chart");
  const chart = await page.evaluate(() => ({
    points: document.querySelectorAll("#roofline-chart circle.pt").length,
    roofs: document.querySelectorAll("#roofline-chart .roofline-roofs polyline").length,
    device: document.getElementById("roofline-device").textContent,
  }));
  assert.equal(chart.points, EXPECT.points);
  assert.ok(chart.roofs >= 1, "no roof drawn");
  assert.ok(chart.device.includes(EXPECT.device) && chart.device.includes(EXPECT.peaks_device), chart.device);

  // A click on a point selects one of its calls (the details panel shows it) and lists them.
  const name = await page.evaluate(() => {
    const c = document.querySelector("#roofline-chart circle.pt");
    c.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    return c.querySelector("title").textContent.split(" ")[0];
  });
  await page.waitForSelector("#roofline-calls-table tbody tr");
  await page.waitForFunction((n) => document.getElementById("details").textContent.includes(n), name, { timeout: 15000 });
  const listed = await page.evaluate(() => document.querySelectorAll("#roofline-calls-table tbody tr").length);
  assert.ok(listed >= 1);
  await screenshot("roofline");
}

export async function aTraceWithoutShapesSaysWhyThereIsNoRoofline({ page, baseUrl, fixturesDir }) {
  await openTrace(page, baseUrl, join(fixturesDir, NO_SHAPES), { analyses: true });
  await openTab(page, "Roofline");
  await page.waitForSelector("#roofline-empty");
  const text = await page.evaluate(() => document.getElementById("roofline-empty").textContent);
  assert.match(text, /record_shapes=True/);
  assert.equal(await page.evaluate(() => document.querySelectorAll("#roofline-chart").length), 0);
  // The device is still named, with its roofs.
  assert.match(await page.evaluate(() => document.getElementById("roofline-device").textContent), /V100/);
}
