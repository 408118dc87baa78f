// The Kernels tab's GPU figures per kernel (www/js/kernel-columns.js): estimated SM efficiency
// ("SM eff.") and blocks per SM beside the mean occupancy, as `sightline kernels --json` gives
// them; left out on a trace whose device records no blocks per SM (ROCm).

import assert from "node:assert/strict";
import { join } from "node:path";
import { openTrace } from "./lib.mjs";

async function kernelsTable(page) {
  await page.click('#tabs button:text-is("Kernels")');
  await page.waitForSelector("#kernels-table tbody tr");
  const heads = await page.$$eval("#kernels-table th", (t) => t.map((x) => x.textContent.replace(/ [▲▼]$/, "")));
  const rows = await page.$$eval("#kernels-table tbody tr", (t) => t.map((r) => [...r.cells].map((c) => c.textContent)));
  // The full names, on hover (a kernel's name is shown short).
  const names = await page.$$eval("#kernels-table tbody tr", (t) => t.map((r) => r.cells[0].title));
  return { heads, rows, names };
}

export async function kernelsTableHasSmEfficiencyBesideOccupancy({ page, baseUrl, samplesDir }) {
  await openTrace(page, baseUrl, join(samplesDir, "tracelens_h100_bert_small_stack_mem.json.gz"), { analyses: true });
  const { heads, rows } = await kernelsTable(page);
  const occ = heads.indexOf("Occupancy");
  assert.ok(occ > 0, heads.join("|"));
  assert.deepEqual(heads.slice(occ, occ + 3), ["Occupancy", "SM eff.", "Blocks/SM"]);
  assert.match(await page.$eval("#kernels-table th:text-is('SM eff.')", (th) => th.title), /min\(blocks per SM, 1\)/);
  // sightline kernels --json: the bf16 cutlass GEMM (17 calls, grid 40x2 on 132 SMs) has mean
  // occupancy 4 %, est. SM efficiency 60.6061 % and 0.606061 blocks per SM.
  const gemm = rows.find((r) => r[0] === "Kernel2<…>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8)");
  assert.ok(gemm, "the cutlass GEMM row");
  assert.deepEqual(gemm.slice(occ, occ + 3), ["4.00 %", "60.6 %", "0.606"]);
}

export async function kernelsTableLeavesOutSmEfficiencyWithoutBlocksPerSm({ page, baseUrl, fixturesDir }) {
  await openTrace(page, baseUrl, join(fixturesDir, "real/tracelens_mi300_bert_small.json.gz"), { analyses: true });
  const { heads, rows } = await kernelsTable(page);
  assert.ok(rows.length > 10);
  assert.ok(!heads.some((h) => /sm eff|blocks/i.test(h)), heads.join("|"));
}

export async function kernelsTableUsesTheWidthWithoutWrappingFigures({ page, baseUrl, samplesDir }) {
  await page.setViewportSize({ width: 1400, height: 900 });
  await openTrace(page, baseUrl, join(samplesDir, "tracelens_h100_bert_small_stack_mem.json.gz"), { analyses: true });
  const { heads, rows } = await kernelsTable(page);
  // The tables panel spans the page, not two thirds of it.
  const width = await page.$eval("#tables-panel", (p) => p.getBoundingClientRect().width);
  assert.ok(width > 1300, `tables panel ${width} px wide at 1400 px`);
  // No figure breaks over two lines: each number cell's text is one line box.
  const wrapped = await page.$$eval("#kernels-table td.num", (tds) =>
    tds
      .filter((td) => {
        const r = document.createRange();
        r.selectNodeContents(td);
        return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1;
      })
      .map((td) => td.textContent),
  );
  assert.deepEqual(wrapped, []);
  // Tensor Cores as the CLI prints it.
  const tc = heads.findIndex((h) => /tensor cores/i.test(h));
  assert.ok(tc >= 0, heads.join("|"));
  const values = new Set(rows.map((r) => r[tc]));
  assert.ok([...values].every((v) => v === "yes" || v === "no"), [...values].join(","));
  const gemm = rows.find((r) => r[0].startsWith("Kernel2<…>(cutlass_80_wmma_tensorop_bf16"));
  assert.ok(gemm && ["yes", "no"].includes(gemm[tc]));
}

/** Kernel names read short: four elementwise kernels that all began `void
 * at::native::vectorized_elementwise_kernel<4, at::native::…` are told apart by what they run, one
 * line each, the full name on hover; the filter still finds a row by its full name. */
export async function kernelNamesAreShortAndToldApart({ page, baseUrl, samplesDir }) {
  await openTrace(page, baseUrl, join(samplesDir, "tracelens_h100_bert_small_stack_mem.json.gz"), { analyses: true });
  const { rows, names } = await kernelsTable(page);
  const shown = rows.map((r) => r[0]);
  for (const want of ["vectorized_elementwise_kernel<…>(CUDAFunctor_add)", "vectorized_elementwise_kernel<…>(GeluCUDAKernelImpl)", "vectorized_elementwise_kernel<…>(CompareEqFunctor)"]) {
    const i = shown.indexOf(want);
    assert.ok(i >= 0, `${want} in ${shown.join(" | ")}`);
    assert.match(names[i], /^void at::native::vectorized_elementwise_kernel<4, at::native::/);
  }
  // One line per name cell.
  const tall = await page.$$eval("#kernels-table td.text", (tds) => tds.filter((td) => td.getClientRects().length && td.getBoundingClientRect().height > 30).length);
  assert.equal(tall, 0);
  // The filter reads the full name.
  await page.fill("#tab-body input[type=search]", "at::native::GeluType");
  await page.waitForFunction((n) => document.querySelectorAll("#kernels-table tbody tr").length < n, rows.length);
  const left = await page.$$eval("#kernels-table tbody tr td:first-child", (tds) => tds.map((td) => td.textContent));
  assert.ok(left.length >= 1 && left.every((n) => n.includes("Gelu")), left.join(" | "));
}
