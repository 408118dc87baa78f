// Which of the page's two wasm modules this browser runs. Both are the same crate: "simd128" is
// Trunk's build (sightline.js, sightline_bg.wasm), compiled with 128-bit wasm SIMD, which the
// parser's scans use; "plain" (sightline_plain.js, sightline_plain_bg.wasm, scripts/wasm-plain)
// is compiled without it, for browsers that do not have it. The choice is made once, where the
// module is compiled (the page, or the page that holds a <sightline-trace>); workers instantiate
// the module they are handed, with the glue named beside it.
//
// Forcing one (tests, or a browser whose SIMD misbehaves): `?wasm=plain` (or `?wasm=simd128`) in
// the page's address, or `globalThis.sightlineWasm = "plain"` set before the module loads.

export const BUILDS = ["simd128", "plain"];

// The smallest module that uses a SIMD instruction: one function `() -> v128` that is
// `i32.const 0; i8x16.splat`. A browser without wasm SIMD refuses the v128 type.
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // types: () -> v128
  0x03, 0x02, 0x01, 0x00, // functions: one, of type 0
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b, // code: i32.const 0, i8x16.splat, end
]);

/** True when this browser validates a module that uses wasm SIMD. */
export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

/** The build asked for by `globalThis.sightlineWasm` or the address's `wasm` parameter, if any. */
export function forcedBuild(scope = globalThis) {
  const asked = scope.sightlineWasm ?? (scope.location ? new URLSearchParams(scope.location.search).get("wasm") : null);
  return BUILDS.includes(asked) ? asked : null;
}

/** "simd128" or "plain": the forced one, else simd128 where the browser has wasm SIMD. */
export function chooseBuild(scope = globalThis) {
  return forcedBuild(scope) ?? (simdSupported() ? "simd128" : "plain");
}

/**
 * The glue's and the .wasm's absolute URLs for `build`, given the simd128 build's: the plain
 * build's names are the same with `_plain` before `.js` and before `_bg.wasm`.
 */
export function buildFiles(glue, wasm, build) {
  if (build === "simd128") return { glue: new URL(glue).href, wasm: new URL(wasm).href };
  const rename = (url, suffix) => {
    const u = new URL(url);
    if (!u.pathname.endsWith(suffix)) throw new Error(`not a wasm-bindgen file name: ${u.pathname}`);
    u.pathname = `${u.pathname.slice(0, -suffix.length)}_plain${suffix}`;
    return u.href;
  };
  return { glue: rename(glue, ".js"), wasm: rename(wasm, "_bg.wasm") };
}
