// A module Web Worker that owns one wasm Session: reading, parsing, the model build and every
// analysis run here, off the page's thread. The page talks to it through client.js:
//
//   page -> worker  {id, target: "session" | "module", method, args}
//   worker -> page  {id, value} or {id, error, panic}
//
// `target: "session"` calls `session[method](...args)` on this worker's Session (created by the
// first call, `method: "new"`; `new("snapshot")` makes it a SnapshotSession, a memory snapshot's,
// which reads a file through the same methods); `"module"` calls a module-level export (`palette`, `version`).
// Only the calls protocol.js declares for each are made; any other name is refused, so a message
// reaches no method the page does not declare (a new Session method is added there and to
// client.js's typed clients). Results cross as they are (strings, numbers, arrays, typed arrays,
// whose buffers are transferred, not copied); a wasm-bindgen object (a `Frame`) crosses as a plain
// object holding what each of its getters returns, and is freed here.
//
// The first message is {init: {glue, module}}: the wasm-bindgen glue's URL and the compiled
// WebAssembly.Module, which the page compiles once and shares with every worker it starts. Of the
// page's two builds (with and without wasm SIMD, ../wasm-choice.js) a worker runs the one it is
// handed; it never chooses, so every worker of a page runs the same one.
//
// `target: "file"` (method "read", args [blob, start, end, size]) reads bytes start..end of a
// File here through its stream, and feeds them to the Session at most `size` at a time, posting
// {id, progress: [read, events]} after each piece the stream delivers: the page's thread never
// touches a file's bytes. Calls made while a read is under way run between its pieces (the page
// awaits the read before anything that needs its bytes).
//
// `target: "file"`, method "inflated", args [port]: feeds the JSON an inflate worker
// (inflate-worker.js) sends through `port`, posting progress as "read" does. Resolves to the
// compressed bytes read, or to -1 when the inflater failed: the page then reads the file with
// "read" into a new Session, whose own inflater reports the damage and keeps what it can.
// Method "abandon" ends such a read the same way (the inflate worker failed to start).

import { portable } from "./portable.js";
import { declared } from "./protocol.js";
import { errorText } from "../errors.js";

/** @type {SightlineGlue | null} */
let wasm = null;
/** @type {WasmSession | null} */
let session = null;
// Whether `session` is a memory snapshot's SnapshotSession, which answers other calls.
let snapshot = false;
/** @type {Promise<void>} */
const ready = new Promise((resolve, reject) => {
  self.addEventListener(
    "message",
    async (/** @type {MessageEvent} */ ev) => {
      try {
        const { glue, module } = ev.data.init;
        const m = await import(glue);
        await m.default({ module_or_path: module });
        wasm = m;
        resolve();
      } catch (err) {
        reject(err);
      }
    },
    { once: true },
  );
});

/**
 * Feeds bytes start..end of `blob` to the Session, at most `size` bytes a call, as the file's
 * stream delivers them. The stream reads ahead while a piece is parsed: 16 MB slices read one
 * ahead (`slice().arrayBuffer()`) kept the parse of the 56 MB trace waiting 56 ms of its 263 ms
 * read, and two slices ahead, or slices from 1 MB doubling, waited nearly as long (42-46 ms).
 */
async function readFile(id, blob, start, end, size) {
  if (!session) throw new Error("this worker holds no session");
  // Told the size up front, the parser reserves the model's columns once instead of doubling them
  // (a wasm memory keeps its high-water mark).
  if (session.bytes_fed() === 0) {
    session.expect_bytes(end - start);
    // A gzip snapshot's inflated size is in its trailer's last 4 bytes (modulo 4 GiB): its rows
    // are reserved from that, as a plain file's are from its size.
    if (session.expect_inflated_bytes && start === 0 && end >= 18) {
      const magic = new Uint8Array(await blob.slice(0, 2).arrayBuffer());
      if (magic[0] === 0x1f && magic[1] === 0x8b) {
        const tail = new DataView(await blob.slice(end - 4, end).arrayBuffer());
        session.expect_inflated_bytes(tail.getUint32(0, true));
      }
    }
  }
  const reader = blob.slice(start, end).stream().getReader();
  let off = start;
  for (;;) {
    let next;
    try {
      next = await reader.read();
    } catch (err) {
      throw new Error(`the file could not be read to its end (${errorText(err)}): was it changed or moved while it was read?`);
    }
    if (next.done) break;
    const bytes = next.value;
    for (let at = 0; at < bytes.length; at += size) session.feed(bytes.subarray(at, at + size));
    off += bytes.length;
    self.postMessage({ id, progress: [off - start, session.events_read()] });
  }
  if (off !== end) throw new Error("the file changed while it was read");
  return off - start;
}

// Ends the inflated read under way as failed; null when none is.
let abandon = null;

/** Feeds the JSON an inflate worker sends through `port` to the Session (see the top). */
function readInflated(id, port) {
  if (!session) throw new Error("this worker holds no session");
  return new Promise((resolve, reject) => {
    abandon = () => {
      port.close();
      resolve(-1);
    };
    port.onmessage = (ev) => {
      const { json, compressed, done, failed } = ev.data;
      try {
        if (json) {
          session.feed_inflated(json, compressed);
          port.postMessage({ took: 1 });
          self.postMessage({ id, progress: [compressed, session.events_read()] });
        } else if (done !== undefined) {
          session.feed_inflated(new Uint8Array(0), done);
          port.close();
          resolve(done);
        } else if (failed !== undefined) abandon();
      } catch (err) {
        port.close();
        reject(err);
      }
    };
  }).finally(() => (abandon = null));
}

function target(kind, method, id) {
  if (kind === "file") {
    if (method === "read") return (...args) => readFile(id, ...args);
    if (method === "inflated") return (port) => readInflated(id, port);
    if (method === "abandon") return () => abandon && abandon();
    throw new Error(`a file has no method '${method}'`);
  }
  if (kind === "module") {
    if (!declared(kind, method, false)) throw new Error(`the module has no call '${method}'`);
    return (...args) => wasm[method](...args);
  }
  if (method === "new") {
    return (what) => {
      snapshot = what === "snapshot";
      session = snapshot ? new wasm.SnapshotSession() : new wasm.Session();
    };
  }
  if (!session) throw new Error("this worker holds no session");
  if (!declared(kind, method, snapshot)) throw new Error(`a ${snapshot ? "SnapshotSession" : "Session"} has no call '${method}'`);
  return (...args) => session[method](...args);
}

self.addEventListener("message", async (/** @type {MessageEvent} */ ev) => {
  const { id, target: kind, method, args } = ev.data;
  if (id === undefined) return;
  try {
    await ready;
  } catch (err) {
    self.postMessage({ id, error: `the viewer's module could not start: ${errorText(err)}` });
    return;
  }
  try {
    const transfer = [];
    let result = target(kind, method, id)(...(args || []));
    if (result instanceof Promise) result = await result;
    const value = portable(result, transfer);
    self.postMessage({ id, value }, transfer);
  } catch (err) {
    // A panic leaves the module unusable; its message says what happened.
    const panic = wasm && wasm.last_panic ? wasm.last_panic() : null;
    self.postMessage({ id, error: describe(err, panic), panic });
  }
});

/**
 * What went wrong in a call, for the page to show. A trap without a panic (a bare
 * "unreachable") is nearly always the module out of memory, which says nothing of itself.
 */
function describe(err, panic) {
  const message = (err && err.message) || String(err);
  if (panic || !(err instanceof WebAssembly.RuntimeError)) return message;
  let held = "";
  try {
    held = ` at ${(wasm.memory_bytes() / 2 ** 30).toFixed(1)} GiB`;
  } catch {
    // The size is a detail; the message stands without it.
  }
  return `the viewer's module stopped (${message}), most likely out of memory${held}: a browser gives this page at most 4 GiB. \`sightline report FILE\` reads a trace of any size natively.`;
}
