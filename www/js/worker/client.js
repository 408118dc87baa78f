// The page's side of a Session that lives in a Web Worker (session-worker.js): one generic async
// call by method name, so page code reads like the Session's own API with an `await`:
//
//   const w = await SessionWorker.start(bindings);
//   await w.session.new();
//   const summary = JSON.parse(await w.session.finish(1000, 500));
//   const frame = await w.session.frame(); // {rects: Float32Array, meta: string}
//
// `w.session.NAME(...args)` is `w.call("session", NAME, ...args)`; `w.module.NAME(...)` calls a
// module-level export. Typed-array arguments are transferred (a view of part of a larger buffer is
// copied first, so the rest of that buffer stays with the caller). Calls run in the order they
// are made. A worker that dies (an uncaught error, a wasm panic) rejects every pending call and
// calls `onfailure(message)` once; terminate() ends it at once, mid-call included, which is how a
// load is cancelled.

import { portable } from "./portable.js";
import { buildFiles, chooseBuild } from "../wasm-choice.js";

/**
 * Where the wasm-bindgen glue and the .wasm file are, and the compiled module, shared by workers.
 * `glueUrl` and `wasmUrl` name the simd128 build; `build` says which of the two builds is loaded
 * (wasm-choice.js), and every worker started with these bindings runs that one.
 */
export class Bindings {
  constructor(glueUrl, wasmUrl, build = chooseBuild()) {
    const files = buildFiles(new URL(glueUrl, document.baseURI), new URL(wasmUrl, document.baseURI), build);
    this.build = build;
    this.glue = files.glue;
    this.wasm = new URL(files.wasm);
    this.compiled = null;
  }

  /** The WebAssembly.Module, compiled once (off the main thread, by the streaming compiler). */
  module() {
    this.compiled ??= fetch(this.wasm).then(async (resp) => {
      if (!resp.ok) throw new Error(`could not load ${this.wasm.pathname}: HTTP ${resp.status}`);
      // Streaming compilation needs the application/wasm type; a host that sends another gets
      // the module compiled after the whole download instead.
      const streamable = (resp.headers.get("content-type") || "").split(";")[0].trim() === "application/wasm";
      return streamable ? WebAssembly.compileStreaming(resp) : WebAssembly.compile(await resp.arrayBuffer());
    });
    return this.compiled;
  }
}

const WORKER_URL = new URL("./session-worker.js", import.meta.url);
const INFLATE_URL = new URL("./inflate-worker.js", import.meta.url);

/** True when this page may start the worker script: a worker must come from the page's origin. */
export function workersAllowed() {
  return WORKER_URL.origin === location.origin && typeof Worker === "function";
}

/**
 * An object whose every method `NAME(...args)` is `call(target, NAME, ...args)`; `then` is absent,
 * so the object is not taken for a promise.
 * @param {(target: string, method: string, ...args: any[]) => Promise<any>} call
 * @param {string} target
 * @returns {RemoteCalls}
 */
function proxy(call, target) {
  return new Proxy(
    {},
    {
      get: (_, name) => (typeof name === "string" && name !== "then" ? (...args) => call(target, name, ...args) : undefined),
    },
  );
}

function portableArgs(args) {
  const transfer = [];
  const out = args.map((a) => {
    if (a instanceof MessagePort) transfer.push(a);
    if (!ArrayBuffer.isView(a)) return a;
    const whole = a.byteOffset === 0 && a.byteLength === a.buffer.byteLength;
    // Every view the page passes is a typed array (a DataView has no `slice`).
    const own = whole ? a : /** @type {Uint8Array} */ (a).slice();
    transfer.push(own.buffer);
    return own;
  });
  return { out, transfer };
}

export class SessionWorker {
  /** Starts a worker and hands it the module; resolves when the worker has been told. */
  static async start(bindings) {
    const module = await bindings.module();
    return new SessionWorker(new Worker(WORKER_URL, { type: "module", name: "sightline-session" }), bindings.glue, module);
  }

  constructor(worker, glue, module) {
    this.worker = worker;
    this.glue = glue;
    this.compiled = module;
    // Helper workers that parse parts of this worker's file (parallel.js): ended with it.
    this.linked = new Set();
    this.pending = new Map();
    this.nextId = 1;
    this.dead = null;
    this.failed = null;
    this.onfailure = null;
    this.session = proxy((...a) => this.call(...a), "session");
    this.module = proxy((...a) => this.call(...a), "module");
    worker.addEventListener("message", (ev) => {
      const { id, value, error, panic, progress } = ev.data;
      const p = this.pending.get(id);
      if (!p) return;
      if (progress) {
        if (p.onProgress) p.onProgress(...progress);
        return;
      }
      this.pending.delete(id);
      if (panic) {
        const message = `${panic}\n(an internal error; the page can open another file)`;
        p.reject(new Error(message));
        this.die(message);
      } else if (error !== undefined) p.reject(new Error(error));
      else p.resolve(value);
    });
    worker.addEventListener("error", (ev) => {
      ev.preventDefault();
      this.die(`the worker stopped: ${ev.message || "it failed to start or ran out of memory"}`);
    });
    worker.addEventListener("messageerror", () => this.die("the worker sent a message the page could not read"));
    worker.postMessage({ init: { glue, module } });
  }

  call(target, method, ...args) {
    return this.callWithProgress(null, target, method, ...args);
  }

  callWithProgress(onProgress, target, method, ...args) {
    if (this.dead) return Promise.reject(new Error(this.dead));
    const id = this.nextId++;
    const { out, transfer } = portableArgs(args);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, target, method, args: out }, transfer);
    });
  }

  /**
   * Has the worker read bytes start..end of a File (or Blob) into its Session, `size` per slice;
   * `onProgress(read, events)` after each. Resolves to the bytes read.
   */
  readFile(blob, start, end, size, onProgress) {
    return this.callWithProgress(onProgress, "file", "read", blob, start, end, size);
  }

  /**
   * Has the worker's Session read gzip File `blob` inflated by an inflate worker
   * (inflate-worker.js), linked to this one so a cancel ends both; `onProgress(read, events)` as
   * for readFile. Resolves to the compressed bytes read, or -1 when the inflater failed (the
   * Session then holds part of the file: start a new one and readFile).
   */
  async readInflated(blob, onProgress) {
    const inflater = new Worker(INFLATE_URL, { name: "sightline-inflate" });
    const link = { terminate: () => inflater.terminate() };
    this.linked.add(link);
    try {
      const { port1, port2 } = new MessageChannel();
      // A worker that cannot start (its script not found, say) leaves the read to the Session.
      inflater.addEventListener("error", (ev) => {
        ev.preventDefault();
        this.call("file", "abandon").catch(() => {});
      });
      inflater.postMessage({ blob, port: port1 }, [port1]);
      return await this.callWithProgress(onProgress, "file", "inflated", port2);
    } finally {
      inflater.terminate();
      this.linked.delete(link);
    }
  }

  /** Another worker with the same module, ended when this one is (a cancel ends both). */
  spawnLinked() {
    const helper = new SessionWorker(new Worker(WORKER_URL, { type: "module", name: "sightline-part" }), this.glue, this.compiled);
    this.linked.add(helper);
    return helper;
  }

  /** Ends the worker now; pending calls reject with `reason`. No failure is reported. */
  terminate(reason = "the worker was stopped") {
    if (this.dead) return;
    this.dead = reason;
    this.worker.terminate();
    for (const helper of this.linked) helper.terminate(reason);
    this.linked.clear();
    for (const p of this.pending.values()) p.reject(new Error(reason));
    this.pending.clear();
  }

  die(message) {
    if (this.dead) return;
    // Tells a failure from a stop the page asked for (a cancel), which `dead` alone does not.
    this.failed = message;
    this.terminate(message);
    if (this.onfailure) this.onfailure(message);
  }
}

/**
 * The same interface with the Session on the page's own thread: for a <sightline-trace> on a
 * page of another origin, which may not start this site's worker script (a worker's script must
 * be same-origin; a blob: shim would need the host page to allow `worker-src blob:`).
 */
export class LocalSession {
  static async start(bindings) {
    /** @type {SightlineGlue} */
    const m = await import(bindings.glue);
    await m.default({ module_or_path: await bindings.module() });
    return new LocalSession(m);
  }

  /** @param {SightlineGlue} wasm */
  constructor(wasm) {
    this.wasm = wasm;
    this.inner = null;
    this.dead = null;
    this.failed = null;
    this.onfailure = null;
    this.session = proxy((...a) => this.call(...a), "session");
    this.module = proxy((...a) => this.call(...a), "module");
  }

  async call(target, method, ...args) {
    if (this.dead) throw new Error(this.dead);
    try {
      if (target === "module") return this.wasm[method](...args);
      if (method === "new") {
        this.inner = new this.wasm.Session();
        return undefined;
      }
      return portable(this.inner[method](...args));
    } catch (err) {
      const panic = this.wasm.last_panic();
      if (panic) {
        this.die(`${panic}\n(an internal error; the page can open another file)`);
        throw new Error(this.dead);
      }
      throw err;
    }
  }

  terminate(reason = "the session was closed") {
    if (this.dead) return;
    this.dead = reason;
    try {
      if (this.inner) this.inner.free();
    } catch {
      // Freeing after a panic may throw; the memory is the module's either way.
    }
  }

  die(message) {
    if (this.dead) return;
    // Tells a failure from a stop the page asked for (a cancel), which `dead` alone does not.
    this.failed = message;
    this.terminate(message);
    if (this.onfailure) this.onfailure(message);
  }
}
