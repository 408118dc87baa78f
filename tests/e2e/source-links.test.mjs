// Source links of Python frames (www/js/source-links.js): "Open in editor" for an absolute path
// (PREFIX + percent-encoded path + :line, the prefix a setting kept in localStorage) and "Copy
// path:line" (the clipboard, or a selected field where it cannot be written). The frames' names
// come from a small trace written here: absolute POSIX and Windows paths, a relative one, and one
// whose path holds characters a URL and HTML would read otherwise.

import assert from "node:assert/strict";
import { openTrace } from "./lib.mjs";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const FRAMES = [
  "/home/me/proj/train model.py(42): forward",
  "models/net.py(7): f",
  "/tmp/a#b?c/<i>x</i>.py(3): <module>",
  "C:\\work\\run.py(9): main",
];

function traceFile() {
  const events = FRAMES.map((name, i) => ({ ph: "X", cat: "python_function", name, pid: 1, tid: 1, ts: 100 + i * 100, dur: 50 }));
  events.push({ ph: "X", cat: "cpu_op", name: "aten::mm", pid: 1, tid: 1, ts: 110, dur: 10 });
  const dir = mkdtempSync(join(tmpdir(), "sightline-frames-"));
  const path = join(dir, "frames.json");
  writeFileSync(path, JSON.stringify({ traceEvents: events }));
  return path;
}

/** Selects the first slice whose name contains `q` (the search box) and waits for its details. */
async function select(page, q, name) {
  await page.fill("#search", q);
  await page.press("#search", "Enter");
  await page.waitForFunction((name) => document.querySelector("#details .slice-name")?.textContent === name, name);
}

const href = (page) => page.evaluate(() => document.querySelector("#details a.source-open")?.getAttribute("href") ?? null);

export async function pythonFramesOpenInAnEditorOrCopyPathAndLine({ page, context, baseUrl, screenshot }) {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await openTrace(page, baseUrl, traceFile());

  await select(page, "train model", FRAMES[0]);
  assert.equal(await href(page), "vscode://file/home/me/proj/train%20model.py:42");
  await page.click("#details button.source-copy");
  await page.waitForFunction(() => /^Copied/.test(document.querySelector("#details .source-status").textContent));
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), "/home/me/proj/train model.py:42");
  await screenshot("source-links");

  // A Windows path: slashes, the drive kept.
  await select(page, "run.py", FRAMES[3]);
  assert.equal(await href(page), "vscode://file/C:/work/run.py:9");

  // A relative path: copy only.
  await select(page, "net.py", FRAMES[1]);
  assert.equal(await page.$("#details a.source-open"), null);
  assert.ok(await page.isVisible("#details button.source-copy"));

  // A path with # ? < >: percent-encoded in the link, shown as text (no <i> element made).
  await select(page, "a#b", FRAMES[2]);
  assert.equal(await href(page), "vscode://file/tmp/a%23b%3Fc/%3Ci%3Ex%3C/i%3E.py:3");
  assert.equal(await page.$("#details i"), null);

  // Not a Python frame: nothing.
  await select(page, "aten::mm", "aten::mm");
  assert.equal(await page.$("#details .source-links"), null);
}

export async function theEditorLinkPrefixIsASettingAndRefusesScriptSchemes({ page, baseUrl }) {
  await openTrace(page, baseUrl, traceFile());
  await select(page, "train model", FRAMES[0]);
  await page.click("#details .source-settings summary");
  await page.fill("#details .source-settings input", "cursor://file/");
  await page.click('#details .source-settings button:text-is("Save")');
  assert.equal(await href(page), "cursor://file/home/me/proj/train%20model.py:42");
  assert.equal(await page.evaluate(() => localStorage.getItem("sightline.editorLinkPrefix")), "cursor://file/");
  // Kept for the next frame and the next page.
  await page.reload();
  await openTrace(page, baseUrl, traceFile());
  await select(page, "run.py", FRAMES[3]);
  assert.equal(await href(page), "cursor://file/C:/work/run.py:9");

  // A scheme that would run script in the page is refused; the link keeps the prefix in use.
  await page.click("#details .source-settings summary");
  for (const bad of ["javascript:alert(1)//", " JavaScript:alert(1)", "data:text/html,x", "not a prefix"]) {
    await page.fill("#details .source-settings input", bad);
    await page.click('#details .source-settings button:text-is("Save")');
    assert.match(await page.textContent("#details .source-settings-status"), /^Not used/);
    assert.equal(await href(page), "cursor://file/C:/work/run.py:9");
  }
  assert.equal(await page.evaluate(() => localStorage.getItem("sightline.editorLinkPrefix")), "cursor://file/");
  await page.click('#details .source-settings button:text-is("Default")');
  assert.equal(await href(page), "vscode://file/C:/work/run.py:9");
  assert.equal(await page.evaluate(() => localStorage.getItem("sightline.editorLinkPrefix")), null);
}

export async function copyWithoutAClipboardShowsTheTextToCopy({ page, baseUrl }) {
  await openTrace(page, baseUrl, traceFile());
  await select(page, "net.py", FRAMES[1]);
  await page.evaluate(() => Object.defineProperty(navigator, "clipboard", { value: undefined, configurable: true }));
  await page.click("#details button.source-copy");
  await page.waitForSelector("#details .source-copy-field");
  assert.ok(await page.isVisible("#details .source-copy-field"));
  assert.equal(await page.inputValue("#details .source-copy-field"), "models/net.py:7");
  // Selected, ready for Ctrl+C.
  assert.equal(await page.evaluate(() => { const f = document.querySelector("#details .source-copy-field"); return f.value.slice(f.selectionStart, f.selectionEnd); }), "models/net.py:7");
}
