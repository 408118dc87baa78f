// The Compiled tab (www/js/compiled-view.js) on a torch.compile trace with two graph breaks
// (tests/fixtures/compiled/graph_break: three frames, each resumed inside the one before; six
// compiled graphs, three forward and three backward). Numbers as `sightline compiled --json`
// gives them (tests/compiled.rs checks those against the recording's truth).

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { openTrace } from "./lib.mjs";

const trace = fileURLToPath(new URL("../fixtures/compiled/graph_break.json.gz", import.meta.url));

export async function compiledTabShowsFramesGraphsAndKernels({ page, baseUrl, screenshot }) {
  await openTrace(page, baseUrl, trace, { analyses: true });
  await page.waitForSelector('#tabs button:text-is("Compiled")');
  await page.click('#tabs button:text-is("Compiled")');
  await page.waitForSelector("#compiled-graphs-table tbody tr");
  assert.match(await page.textContent("#tab-body"), /3 compiled frames, 6 compiled graphs\./);
  assert.equal((await page.$$("#compiled-graphs-table tbody tr")).length, 6);
  const frames = await page.$$eval("#compiled-frames-table tbody tr", (t) => t.map((r) => [...r.cells].map((c) => c.textContent)));
  assert.equal(frames.length, 3);
  // Frame 0 resumes in frame 1 after its break; what ran eagerly between them.
  assert.equal(frames[0][0], "0");
  assert.equal(frames[0][4], "1");
  assert.match(frames[0][5], /aten::is_nonzero ×4/);
  const kernels = await page.$$eval("#compiled-kernels-table tbody tr", (t) => t.map((r) => [...r.cells].map((c) => c.textContent)));
  const gelu = kernels.find((k) => k[0] === "graph_0_cpp_fused__unsafe_view_gelu_3");
  assert.ok(gelu, kernels.map((k) => k[0]).join(", "));
  assert.equal(gelu[3], "_unsafe_view, gelu");
  // A kernel: its slices highlighted, the first selected.
  await page.click("#compiled-kernels-table tbody tr");
  await page.waitForFunction(() => /cpp_fused|CompiledFxGraph/.test(document.querySelector("#details .slice-name")?.textContent || ""));
  await screenshot("compiled-graph-break");
}

export async function aTritonKernelNamesItsGeneratedSource({ page, baseUrl }) {
  // Inductor on CUDA in the shape PyTorch records it: each Triton launch's kernel_file.
  const cuda = fileURLToPath(new URL("../fixtures/devices/triton_inductor.json", import.meta.url));
  await openTrace(page, baseUrl, cuda, { analyses: true });
  await page.click('#tabs button:text-is("Compiled")');
  await page.waitForSelector("#compiled-kernels-table tbody tr");
  const head = await page.$$eval("#compiled-kernels-table thead th", (t) => t.map((c) => c.textContent));
  const col = head.findIndex((h) => /Generated source/.test(h));
  assert.ok(col >= 0, head.join(", "));
  const rows = await page.$$eval("#compiled-kernels-table tbody tr", (t) => t.map((r) => [...r.cells].map((c) => c.textContent)));
  assert.deepEqual(
    rows.map((r) => [r[0], r[col]]),
    [
      ["triton_poi_fused_add_mul_0", "/tmp/torchinductor_user/ab/c0.py"],
      ["triton_red_fused_sum_1", "/tmp/torchinductor_user/ab/c1.py"],
    ],
  );
}
