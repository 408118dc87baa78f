// Types the page's JavaScript uses that no module of it defines: the wasm-bindgen glue Trunk
// builds into dist/ (sightline.js and its plain twin, imported at run time by URL, so tsc never
// sees them); the page's own globals are in page.d.ts, the Session's answers in generated/. Read by
// `tsc --noEmit` only (tsconfig.json, tsconfig.worker.json); it lies outside www/js, so
// nothing ships it.
//
// A script, not a module: everything declared here is global to the checked files.

/**
 * The glue module wasm-bindgen writes for the crate's #[wasm_bindgen] items (src/web/). Only
 * what the page's code calls by name is spelled out; Session methods are called through the
 * worker's typed clients (client.js), which declare each one, so a Session is an open record of
 * methods here.
 */
interface SightlineGlue {
  /** Instantiates the module; the page hands it the compiled WebAssembly.Module. */
  default(init: { module_or_path: WebAssembly.Module | URL | string }): Promise<unknown>;
  Session: new () => WasmSession;
  SnapshotSession: new () => WasmSession;
  /** The message of the last panic, which leaves the module unusable (src/web/mod.rs). */
  last_panic(): string | undefined;
  /** Bytes of wasm memory the module holds. */
  memory_bytes(): number;
  version(): string;
  /** Every other module-level export, called by name (`target: "module"`). */
  [name: string]: any;
}

/** A wasm-bindgen Session or SnapshotSession: methods called by name, and `free()`. */
interface WasmSession {
  free(): void;
  [method: string]: any;
}

// `globalThis.sightlineWasm = "plain"` forces a build before the module loads (wasm-choice.js).
declare var sightlineWasm: string | undefined;
