// The page's side of a Session that lives in a Web Worker (session-worker.js): one typed client
// per kind of callee, each with one async method per question, named as the wasm method it asks
// (src/web/; the tables as the query layer's request types: `ops`, `kernels`, `steps`, ...):
//
//   const w = await SessionWorker.start(bindings);
//   await w.session.new();
//   const summary = await w.session.finish(1000, 500); // a Summary (www/generated/answers.ts)
//   const frame = await w.session.frame(); // {rects: Float32Array, meta: FrameMeta}
//
// `w.session` is a SessionClient (a trace's Session), `w.snapshot` a SnapshotClient (a memory
// snapshot's), `w.module` a ModuleClient (the module's exports); the names they send are the ones
// protocol.js declares, and the worker answers no other. The Session answers JSON text; each
// client method parses it once, so page code gets the generated types' values, not strings.
// Typed-array arguments are transferred (a view of part of a larger buffer is copied first, so
// the rest of that buffer stays with the caller). Calls run in the order they are made. A worker
// that dies (an uncaught error, a wasm panic) rejects every pending call and calls
// `onfailure(message)` once; terminate() ends it at once, mid-call included, which is how a load
// is cancelled.

import { portable } from "./portable.js";
import { declared } from "./protocol.js";
import { buildFiles, chooseBuild } from "../wasm-choice.js";

/**
 * @typedef {import("../../generated/answers.js").AllocationTable} AllocationTable
 * @typedef {import("../../generated/answers.js").Answer} WhatIfAnswer
 * @typedef {import("../../generated/answers.js").Assessed} Assessed
 * @typedef {import("../../generated/answers.js").CallTree} CallTree
 * @typedef {import("../../generated/answers.js").Capture} Capture
 * @typedef {import("../../generated/answers.js").CaptureMatch} CaptureMatch
 * @typedef {import("../../generated/answers.js").Compiled} Compiled
 * @typedef {import("../../generated/answers.js").DeviceInfo} DeviceInfo
 * @typedef {import("../../generated/answers.js").Diff} Diff
 * @typedef {import("../../generated/answers.js").Digest} Digest
 * @typedef {import("../../generated/answers.js").FlopsCall} FlopsCall
 * @typedef {import("../../generated/answers.js").FrameConstants} FrameConstants
 * @typedef {import("../../generated/answers.js").FrameMeta} FrameMeta
 * @typedef {import("../../generated/answers.js").Gap} Gap
 * @typedef {import("../../generated/answers.js").GraphsOutput} GraphsOutput
 * @typedef {import("../../generated/answers.js").IdleReport} IdleReport
 * @typedef {import("../../generated/answers.js").KernelTable} KernelTable
 * @typedef {import("../../generated/answers.js").LabelTable} LabelTable
 * @typedef {import("../../generated/answers.js").LiveRows} LiveRows
 * @typedef {import("../../generated/answers.js").ModuleTable} ModuleTable
 * @typedef {import("../../generated/answers.js").OpTable} OpTable
 * @typedef {import("../../generated/answers.js").Overview} Overview
 * @typedef {import("../../generated/answers.js").PathSummary} PathSummary
 * @typedef {import("../../generated/answers.js").RangeTable} RangeTable
 * @typedef {import("../../generated/answers.js").RanksReport} RanksReport
 * @typedef {import("../../generated/answers.js").Recorded} Recorded
 * @typedef {import("../../generated/answers.js").Roofline} Roofline
 * @typedef {import("../../generated/answers.js").Selection} Selection
 * @typedef {import("../../generated/answers.js").SliceDetails} SliceDetails
 * @typedef {import("../../generated/answers.js").SnapshotDiff} SnapshotDiff
 * @typedef {import("../../generated/answers.js").SnapshotHit} SnapshotHit
 * @typedef {import("../../generated/answers.js").SnapshotPeaks} SnapshotPeaks
 * @typedef {import("../../generated/answers.js").SnapshotReport} SnapshotReport
 * @typedef {import("../../generated/answers.js").StepsReport} StepsReport
 * @typedef {import("../../generated/answers.js").Summary} Summary
 * @typedef {import("../../generated/answers.js").Tooltip} Tooltip
 * @typedef {import("../../generated/answers.js").WaitKind} WaitKind
 */
/**
 * @template T
 * @typedef {import("../../generated/answers.js").WithColumns<T>} WithColumns
 */
/**
 * @template T
 * @typedef {import("../../generated/answers.js").WithTables<T>} WithTables
 */
/**
 * What a click answers: the slice it selected, a group header or a deep lane's name it folded or
 * unfolded, an idle gap whose time range it selected, or nothing (the selection cleared).
 * @typedef {import("../../generated/answers.js").Clicked | null} Click
 */

/** Sends one call: `target` "session", "module" or "file", then the method and its arguments. */
/** @typedef {(target: string, method: string, ...args: any[]) => Promise<any>} Send */

/**
 * JSON text handed from one Session to another as it came (a digest, a graph capture, a
 * snapshot's peaks), its value parsed on first read: parsed and written again, integers past 2^53
 * (epoch nanoseconds) would come back rounded.
 * @template T
 */
export class Json {
  /** @param {string} text */
  constructor(text) {
    this.text = text;
    /** @type {T | undefined} */
    this.parsed = undefined;
  }

  /** @returns {T} */
  get value() {
    this.parsed ??= JSON.parse(this.text);
    return this.parsed;
  }
}

/** @param {Promise<string>} text the answer's JSON @returns {Promise<any>} */
const parse = (text) => text.then((t) => JSON.parse(t));

/**
 * A trace's Session (src/web/), one method per question. Those that answer JSON resolve to its
 * value, typed as www/generated/answers.ts declares it; the table methods are named as the
 * query layer's request types (src/query/) they ask.
 */
export class SessionClient {
  /** @param {Send} send */
  constructor(send) {
    this.send = send;
  }

  /** @param {import("./protocol.js").SessionCall} method @param {any[]} args */
  ask(method, ...args) {
    return this.send("session", method, ...args);
  }

  /** Starts a new Session in the worker, dropping the one it held. @returns {Promise<void>} */
  new() {
    return this.send("session", "new");
  }

  /** @param {Uint8Array} chunk @returns {Promise<void>} */
  feed(chunk) {
    return this.ask("feed", chunk);
  }

  /** @param {number} bytes @returns {Promise<void>} */
  expect_bytes(bytes) {
    return this.ask("expect_bytes", bytes);
  }

  /** @returns {Promise<number>} */
  bytes_fed() {
    return this.ask("bytes_fed");
  }

  /** @returns {Promise<number>} */
  events_read() {
    return this.ask("events_read");
  }

  /** Ends the input and builds the model. @param {number} width @param {number} height @returns {Promise<Summary>} */
  finish(width, height) {
    return parse(this.ask("finish", width, height));
  }

  /** @returns {Promise<number>} */
  heap_bytes() {
    return this.ask("heap_bytes");
  }

  /** @param {Uint8Array} head @param {number} start @returns {Promise<void>} */
  start_part(head, start) {
    return this.ask("start_part", head, start);
  }

  /** @returns {Promise<Uint8Array>} */
  take_part() {
    return this.ask("take_part");
  }

  /** @param {Uint8Array} part @returns {Promise<boolean>} */
  absorb_part(part) {
    return this.ask("absorb_part", part);
  }

  /** Empty, or why the analyses cannot run in this module's memory. @param {number} limitBytes @returns {Promise<string>} */
  analyses_room(limitBytes) {
    return this.ask("analyses_room", limitBytes);
  }

  /** @param {number} units @returns {Promise<"" | "analyses" | "tables">} */
  analyse_step(units) {
    return this.ask("analyse_step", units);
  }

  /** The steps, their declared columns beside them. @returns {Promise<WithColumns<StepsReport>>} */
  steps() {
    return parse(this.ask("steps"));
  }

  /** @returns {Promise<IdleReport>} */
  idle() {
    return parse(this.ask("idle"));
  }

  /** @returns {Promise<Assessed[]>} */
  findings() {
    return parse(this.ask("findings"));
  }

  /** @returns {Promise<Assessed[]>} */
  recording() {
    return parse(this.ask("recording"));
  }

  /** @param {boolean} byShape @returns {Promise<WithColumns<OpTable>>} */
  ops(byShape) {
    return parse(this.ask("ops", byShape));
  }

  /** @returns {Promise<WithColumns<KernelTable>>} */
  kernels() {
    return parse(this.ask("kernels"));
  }

  /** @returns {Promise<WithColumns<LabelTable>>} */
  labels() {
    return parse(this.ask("labels"));
  }

  /** @returns {Promise<WithColumns<ModuleTable>>} */
  modules() {
    return parse(this.ask("modules"));
  }

  /** @returns {Promise<WithColumns<GraphsOutput>>} */
  graphs() {
    return parse(this.ask("graphs"));
  }

  /** What torch.compile ran, its tables' declared columns beside it. @returns {Promise<WithTables<Compiled>>} */
  compiled() {
    return parse(this.ask("compiled"));
  }

  /** @returns {Promise<WithColumns<CallTree>>} */
  call_tree() {
    return parse(this.ask("call_tree"));
  }

  /** @param {number} limit @returns {Promise<RangeTable>} */
  names_table(limit) {
    return parse(this.ask("names_table", limit));
  }

  /** The trace's digest, what comparisons read. @param {string} file @returns {Promise<Json<Digest>>} */
  async digest(file) {
    return new Json(await this.ask("digest", file));
  }

  /** @returns {Promise<Json<Capture>>} */
  async capture_of() {
    return new Json(await this.ask("capture_of"));
  }

  /** @param {Json<Capture>} capture @returns {Promise<number>} */
  capture_pairs(capture) {
    return this.ask("capture_pairs", capture.text);
  }

  /** @param {Json<Capture>} capture @returns {Promise<CaptureMatch>} */
  use_capture(capture) {
    return parse(this.ask("use_capture", capture.text));
  }

  /** @returns {Promise<PathSummary>} */
  critical_path() {
    return parse(this.ask("critical_path"));
  }

  /** @param {boolean} on @returns {Promise<void>} */
  show_critical_path(on) {
    return this.ask("show_critical_path", on);
  }

  /** @param {string} edits @returns {Promise<WhatIfAnswer>} */
  what_if(edits) {
    return parse(this.ask("what_if", edits));
  }

  /** @returns {Promise<Roofline>} */
  flops_report() {
    return parse(this.ask("flops_report"));
  }

  /** @param {number} row @returns {Promise<FlopsCall[]>} */
  flops_calls(row) {
    return parse(this.ask("flops_calls", row));
  }

  /** @returns {Promise<DeviceInfo[]>} */
  memory_devices() {
    return parse(this.ask("memory_devices"));
  }

  /** @returns {Promise<Recorded>} */
  memory_recorded() {
    return parse(this.ask("memory_recorded"));
  }

  /** @returns {Promise<Float64Array>} */
  memory_columns() {
    return this.ask("memory_columns");
  }

  /** @param {string} device @param {number} tNs @param {number} top @returns {Promise<LiveRows>} */
  memory_live(device, tNs, top) {
    return parse(this.ask("memory_live", device, tNs, top));
  }

  /** @param {string} device @returns {Promise<AllocationTable>} */
  memory_allocations(device) {
    return parse(this.ask("memory_allocations", device));
  }

  /** @returns {Promise<number>} */
  fold_cpu() {
    return this.ask("fold_cpu");
  }

  /** @returns {Promise<Float64Array>} */
  window_ns() {
    return this.ask("window_ns");
  }

  /** @param {number} t0 @param {number} t1 @returns {Promise<void>} */
  set_window(t0, t1) {
    return this.ask("set_window", t0, t1);
  }

  /** The file's first timestamp in ns, as decimal text (past 2^53). @returns {Promise<string>} */
  origin_ns() {
    return this.ask("origin_ns");
  }

  /** @returns {Promise<Selection>} */
  selection() {
    return parse(this.ask("selection"));
  }

  /** @param {number} t0 @param {number} t1 @param {number} limit @returns {Promise<RangeTable>} */
  select_range_ns(t0, t1, limit) {
    return parse(this.ask("select_range_ns", t0, t1, limit));
  }

  /** @param {number} width @param {number} height @returns {Promise<void>} */
  resize(width, height) {
    return this.ask("resize", width, height);
  }

  /** @param {number} x @param {number} factor @returns {Promise<void>} */
  zoom_at(x, factor) {
    return this.ask("zoom_at", x, factor);
  }

  /** @param {number} dx @param {number} dy @returns {Promise<void>} */
  pan(dx, dy) {
    return this.ask("pan", dx, dy);
  }

  /** @returns {Promise<void>} */
  reset_view() {
    return this.ask("reset_view");
  }

  /** @param {number} t @returns {Promise<void>} */
  center_on(t) {
    return this.ask("center_on", t);
  }

  /** @returns {Promise<boolean>} */
  fit_selection() {
    return this.ask("fit_selection");
  }

  /** The draw list for the current view. @returns {Promise<{ rects: Float32Array, meta: FrameMeta }>} */
  async frame() {
    const f = await this.ask("frame");
    return { rects: f.rects, meta: JSON.parse(f.meta) };
  }

  /** @param {number} x @param {number} y @returns {Promise<Tooltip | undefined>} */
  async tooltip(x, y) {
    const text = await this.ask("tooltip", x, y);
    return text === undefined ? undefined : JSON.parse(text);
  }

  /** @param {number} x @param {number} y @returns {Promise<Click>} */
  click(x, y) {
    return parse(this.ask("click", x, y));
  }

  /** Selects a slice and brings it into view. @param {number} lane @param {number} index @returns {Promise<SliceDetails | null>} */
  select(lane, index) {
    return parse(this.ask("select", lane, index));
  }

  /** @param {number} lane @param {number} index @returns {Promise<SliceDetails | null>} */
  details(lane, index) {
    return parse(this.ask("details", lane, index));
  }

  /** @param {number} lane @param {number} index @returns {Promise<string>} */
  full_name(lane, index) {
    return this.ask("full_name", lane, index);
  }

  /** @returns {Promise<void>} */
  clear_selection() {
    return this.ask("clear_selection");
  }

  /** @param {string} query @returns {Promise<number>} */
  search(query) {
    return this.ask("search", query);
  }

  /** @param {string} name @returns {Promise<number>} */
  highlight_name(name) {
    return this.ask("highlight_name", name);
  }

  /** The next (or previous) match, selected; undefined when nothing matches. @param {boolean} forward @returns {Promise<SliceDetails | null | undefined>} */
  async search_step(forward) {
    const text = await this.ask("search_step", forward);
    return text === undefined ? undefined : JSON.parse(text);
  }

  /** @param {number} x0 @param {number} x1 @param {number} limit @returns {Promise<RangeTable>} */
  select_range(x0, x1, limit) {
    return parse(this.ask("select_range", x0, x1, limit));
  }

  /** @param {number} buckets @returns {Promise<Overview>} */
  overview(buckets) {
    return parse(this.ask("overview", buckets));
  }

  /** @param {number} t0 @param {number} t1 @returns {Promise<void>} */
  show_evidence(t0, t1) {
    return this.ask("show_evidence", t0, t1);
  }

  /** @returns {Promise<boolean>} */
  has_python_frames() {
    return this.ask("has_python_frames");
  }

  /** @param {boolean} show @returns {Promise<boolean>} */
  set_python_frames(show) {
    return this.ask("set_python_frames", show);
  }
}

/** A memory snapshot's SnapshotSession (src/web/snapshot.rs), read through the same worker. */
export class SnapshotClient {
  /** @param {Send} send */
  constructor(send) {
    this.send = send;
  }

  /** @param {import("./protocol.js").SnapshotCall} method @param {any[]} args */
  ask(method, ...args) {
    return this.send("session", method, ...args);
  }

  /** Starts a new SnapshotSession in the worker, dropping the session it held. @returns {Promise<void>} */
  new() {
    return this.send("session", "new", "snapshot");
  }

  /** @param {Uint8Array} chunk @returns {Promise<void>} */
  feed(chunk) {
    return this.ask("feed", chunk);
  }

  /** @param {number} bytes @returns {Promise<void>} */
  expect_bytes(bytes) {
    return this.ask("expect_bytes", bytes);
  }

  /** @param {number} top @returns {Promise<SnapshotReport>} */
  finish(top) {
    return parse(this.ask("finish", top));
  }

  /** @param {number} top @returns {Promise<SnapshotReport>} */
  report(top) {
    return parse(this.ask("report", top));
  }

  /** What another snapshot's diff reads. @returns {Promise<Json<SnapshotPeaks>>} */
  async peaks() {
    return new Json(await this.ask("peaks"));
  }

  /** @param {number} device @returns {Promise<number>} */
  positions(device) {
    return this.ask("positions", device);
  }

  /**
   * @param {number} device @param {number} start @param {number} end @param {number} width
   * @param {number} height
   * @returns {Promise<Float64Array>}
   */
  bands_layout(device, start, end, width, height) {
    return this.ask("bands_layout", device, start, end, width, height);
  }

  /**
   * @param {number} device @param {number} start @param {number} end @param {number} width
   * @param {number} height @param {number} x @param {number} y
   * @returns {Promise<SnapshotHit | null>}
   */
  bands_hit(device, start, end, width, height, x, y) {
    return parse(this.ask("bands_hit", device, start, end, width, height, x, y));
  }
}

/** The module's exports (src/web/mod.rs and beside it): no Session needed. */
export class ModuleClient {
  /** @param {Send} send */
  constructor(send) {
    this.send = send;
  }

  /** @param {import("./protocol.js").ModuleCall} method @param {any[]} args */
  ask(method, ...args) {
    return this.send("module", method, ...args);
  }

  /** @returns {Promise<string>} */
  version() {
    return this.ask("version");
  }

  /** Whether this worker runs the build with wasm SIMD. @returns {Promise<boolean>} */
  simd128() {
    return this.ask("simd128");
  }

  /** @returns {Promise<number>} */
  memory_bytes() {
    return this.ask("memory_bytes");
  }

  /** `[light, dark]` per palette slot of a frame's rectangles. @returns {Promise<[string, string][]>} */
  palette() {
    return parse(this.ask("palette"));
  }

  /** @returns {Promise<FrameConstants>} */
  constants() {
    return parse(this.ask("constants"));
  }

  /** Each wait kind in words. @returns {Promise<Record<WaitKind, string>>} */
  wait_kinds() {
    return parse(this.ask("wait_kinds"));
  }

  /** @param {Uint8Array} head @returns {Promise<boolean>} */
  splittable(head) {
    return this.ask("splittable", head);
  }

  /** @param {Uint8Array} window @returns {Promise<number>} */
  event_boundary(window) {
    return this.ask("event_boundary", window);
  }

  /**
   * @param {Json<Digest>} base @param {Json<Digest>} next @param {boolean} total
   * @param {boolean} byShape
   * @returns {Promise<WithTables<Diff>>}
   */
  diff_digests(base, next, total, byShape) {
    return parse(this.ask("diff_digests", base.text, next.text, total, byShape));
  }

  /** @param {Json<Digest>[]} digests @param {string} align @returns {Promise<WithTables<RanksReport>>} */
  ranks_report(digests, align) {
    return parse(this.ask("ranks_report", `[${digests.map((d) => d.text).join(",")}]`, align));
  }

  /** @param {Json<SnapshotPeaks>} base @param {Json<SnapshotPeaks>} next @param {number} top @returns {Promise<SnapshotDiff>} */
  diff_snapshots(base, next, top) {
    return parse(this.ask("diff_snapshots", base.text, next.text, top));
  }

  /** What the warm-up read (warm.rs), so a test can tell every stage ran. @returns {Promise<Record<string, number>>} */
  warm_up() {
    return parse(this.ask("warm_up"));
  }
}

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
    /** @type {Send} */
    const send = (...a) => this.call(...a);
    this.session = new SessionClient(send);
    this.snapshot = new SnapshotClient(send);
    this.module = new ModuleClient(send);
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
    /** @type {Send} */
    const send = (...a) => this.call(...a);
    this.session = new SessionClient(send);
    this.module = new ModuleClient(send);
  }

  async call(target, method, ...args) {
    if (this.dead) throw new Error(this.dead);
    if (method !== "new" && !declared(target, method, false)) throw new Error(`no call '${method}' of the ${target}`);
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
