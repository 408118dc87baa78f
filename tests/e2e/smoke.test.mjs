// Smoke test: the built page loads from a subpath, the wasm module starts,
// the page is in its empty state, and the bundled sample is reachable.

import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const SAMPLE = "tracelens_h100_bert_small_stack_mem.json.gz";

function crateVersion() {
  const toml = readFileSync(new URL("../../Cargo.toml", import.meta.url), "utf8");
  const pkg = toml.split(/^\[/m).find((section) => section.startsWith("package]"));
  return pkg.match(/^version\s*=\s*"([^"]+)"/m)[1];
}

export async function pageLoadsEmptyAndWasmStarts({ page, baseUrl, samplesDir, requests, screenshot }) {
  const response = await page.goto(baseUrl);
  assert.ok(response.ok(), `GET ${baseUrl} answered ${response.status()}`);

  // Set by www/index.html once Trunk's loader has instantiated the module.
  await page.waitForFunction(() => window.sightlineReady === true, null, { timeout: 30000 });

  const state = await page.evaluate(() => ({
    state: document.body.dataset.state,
    version: document.getElementById("version").textContent,
    // Asked of the module in a Session worker: the page's thread instantiates no wasm.
    wasmVersion: window.sightline.version,
    hasFileInput: document.querySelector('input[type="file"]#file-input') !== null,
    sampleHref: document.getElementById("sample-link")?.href,
  }));
  assert.equal(state.state, "empty");
  assert.equal(state.wasmVersion, crateVersion(), "sightline::web::version() from the wasm module");
  assert.equal(state.version, `v${crateVersion()}`);
  assert.ok(state.hasFileInput, "input#file-input is present");
  assert.equal(state.sampleHref, `${baseUrl}samples/${SAMPLE}`, "sample link resolves under the subpath");

  // The page's own assets were loaded relative to the subpath.
  const wasm = requests.filter((r) => r.url.endsWith(".wasm"));
  assert.ok(wasm.length >= 1, "the page requested a .wasm file");
  for (const r of requests) {
    if (r.url.startsWith("http")) {
      assert.ok(r.url.startsWith(baseUrl), `request outside ${baseUrl}: ${r.url}`);
    }
  }

  // The bundled sample is served intact (gzip magic, same size as www/samples).
  const sample = await page.evaluate(async (href) => {
    const resp = await fetch(href);
    const bytes = new Uint8Array(await resp.arrayBuffer());
    return { status: resp.status, length: bytes.length, magic: [bytes[0], bytes[1]] };
  }, state.sampleHref);
  assert.equal(sample.status, 200);
  assert.deepEqual(sample.magic, [0x1f, 0x8b]);
  assert.equal(sample.length, statSync(join(samplesDir, SAMPLE)).size);

  await screenshot("smoke-empty");
}
