// The Operators tab (prof.key_averages() in the page): its memory columns in PyTorch's units, as
// `key_averages().table()` and `sightline ops` print them (powers of 1024, two decimals, B / KB /
// MB / GB), not decimal kB / MB.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openTrace } from "./lib.mjs";

/** PyTorch's `_format_memory` as `sightline ops` writes it (src/cli/ops.rs `fmt_memory`). */
function pytorchMemory(n) {
  const K = 1024;
  if (Math.abs(n) >= K ** 3) return `${(n / K ** 3).toFixed(2)} GB`;
  if (Math.abs(n) >= K ** 2) return `${(n / K ** 2).toFixed(2)} MB`;
  if (Math.abs(n) >= K) return `${(n / K).toFixed(2)} KB`;
  return `${n} B`;
}

export async function operatorMemoryIsInPyTorchUnits({ page, baseUrl, samplesDir }) {
  // The sample was recorded with profile_memory: its operators allocate.
  await openTrace(page, baseUrl, join(samplesDir, "tracelens_h100_bert_small_stack_mem.json.gz"), { analyses: true });
  await page.waitForSelector("#ops-table tbody tr");
  const t = await page.evaluate(async () => await window.sightline.app.tables.ops);
  assert.ok(t.has_memory, "the sample has memory columns");
  const keys = Object.keys(t.rows[0]).filter((k) => /mem/.test(k));
  assert.ok(keys.length >= 2, keys.join(","));
  const heads = await page.$$eval("#ops-table th", (th) => th.map((x) => x.textContent.replace(/ [▲▼]$/, "")));
  // Rows in the table's order (sorted by the page): matched by name.
  const shown = await page.$$eval("#ops-table tbody tr", (trs) => trs.map((r) => [...r.cells].map((c) => c.textContent)));
  const nameAt = heads.indexOf("Name");
  let large = 0;
  for (const cells of shown.slice(0, 40)) {
    const row = t.rows.find((r) => r.name === cells[nameAt]);
    assert.ok(row, cells[nameAt]);
    for (const k of keys) {
      const col = heads.findIndex((h) => h.toLowerCase() === k.replace(/_bytes$/, "").replace(/_/g, " ").toLowerCase());
      assert.ok(col >= 0, `a column for ${k} in ${heads.join("|")}`);
      const v = row[k];
      assert.equal(cells[col], pytorchMemory(v), `${row.name} ${k} = ${v}`);
      if (Math.abs(v) >= 1024 * 1024) large++;
    }
  }
  assert.ok(large > 0, "some operator holds a MB or more, where decimal and binary units differ");
}
