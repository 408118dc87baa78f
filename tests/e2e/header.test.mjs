// The header bar (www/index.html, style.css, js/header.js) stays one line at 1400 and 800 px with
// a long file name and a search count in it: the name is cut with an ellipsis (whole in its
// title), the less used controls fold into the ⋯ menu on a narrow page, and the page does not
// scroll sideways.

import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTrace } from "./lib.mjs";

const LONG = `${"resnet50_ddp_rank0_of_8_with_stack_and_shapes_recorded_".repeat(2)}step_4000.pt.trace.json.gz`;

/** The bar's height and the vertical extent of each control shown in it. */
function bar(page) {
  return page.evaluate(() => {
    const b = document.querySelector("header.bar").getBoundingClientRect();
    const shown = [...document.querySelectorAll("header.bar > *, header.bar .bar-more > *, header.bar .search > *")].filter((e) => {
      const r = e.getBoundingClientRect();
      // Shown ones: a closed menu's are not rendered, the file inputs are 1 px.
      return r.width > 2 && r.height > 2;
    });
    return {
      height: b.height,
      controls: shown.map((e) => {
        const r = e.getBoundingClientRect();
        return { id: e.id || e.className || e.tagName, top: r.top - b.top, bottom: r.bottom - b.top, right: r.right, height: r.height };
      }),
      pageWidth: document.documentElement.scrollWidth,
      viewWidth: document.documentElement.clientWidth,
    };
  });
}

export async function headerStaysOneLineAt1400And800({ page, baseUrl, fixturesDir, screenshot }) {
  const dir = mkdtempSync(join(tmpdir(), "sightline-header-"));
  const file = join(dir, LONG);
  copyFileSync(join(fixturesDir, "real/hta_a100_alexnet_cuda_sync.json.gz"), file);
  await page.setViewportSize({ width: 1400, height: 900 });
  await openTrace(page, baseUrl, file, { analyses: true });
  await page.fill("#search", "aten::");
  await page.waitForFunction(() => /match/.test(document.getElementById("search-count").textContent));
  for (const width of [1400, 800]) {
    await page.setViewportSize({ width, height: 900 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const b = await bar(page);
    // One line: the bar is one control high, and every control lies on that line.
    const tallest = Math.max(...b.controls.map((c) => c.height));
    assert.ok(b.height <= tallest + 16, `${width} px: bar ${b.height} px high for controls ${tallest} px: ${JSON.stringify(b.controls)}`);
    for (const c of b.controls) assert.ok(c.top >= 0 && c.bottom <= b.height, `${width} px: ${c.id} off the line: ${JSON.stringify(c)}`);
    assert.ok(b.controls.every((c) => c.right <= width), `${width} px: a control past the edge: ${JSON.stringify(b.controls)}`);
    // No sideways scroll.
    assert.ok(b.pageWidth <= b.viewWidth, `${width} px: the page is ${b.pageWidth} px wide`);
    // The name is cut, and whole in its title.
    const name = await page.$eval("#file-name", (e) => ({ cut: e.scrollWidth > e.clientWidth, title: e.title, ellipsis: getComputedStyle(e).textOverflow }));
    assert.deepEqual(name, { cut: true, title: LONG, ellipsis: "ellipsis" }, `${width} px`);
    await screenshot(`header-${width}`);
  }
  // At 800 px the folded controls are one click away, in the ⋯ menu.
  assert.ok(await page.isHidden("#folder-button"));
  await page.click("#bar-more-button");
  assert.ok(await page.isVisible("#folder-button"));
  assert.ok(await page.isVisible("#compare-button"));
  await page.keyboard.press("Escape");
  assert.ok(await page.isHidden("#folder-button"));
  // At 1400 px they sit in the bar, and there is no menu.
  await page.setViewportSize({ width: 1400, height: 900 });
  assert.ok(await page.isVisible("#folder-button"));
  assert.ok(await page.isHidden("#bar-more-button"));
}
