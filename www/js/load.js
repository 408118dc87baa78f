// Where a trace's bytes come from (a File, a same-site URL, a posted buffer) and how they reach a
// Session in a Web Worker: each load starts (or takes the spare) worker, feeds it slices of the
// input in order, and builds the model there. Cancel terminates that worker at once, whatever it
// is doing (reading, the model build, an analysis); the trace shown before lives in its own worker
// and stays.

import { SessionWorker } from "./worker/client.js";
import { readInParts } from "./worker/parallel.js";

// Bytes per File slice handed to the parser: 16 MB of JSON parse in about 0.1 s, and the per-slice
// costs (a read, a transfer to the worker, a copy into wasm memory) stay small: 8 MB slices read
// the 1 GB trace 3% slower. gzip slices are smaller because each compressed MB holds 10-20 MB of
// JSON.
const CHUNK = 16 << 20;
const GZ_CHUNK = 1 << 20;

const isGzip = (head) => head[0] === 0x1f && head[1] === 0x8b;

/** Whether bytes start a pickle of protocol 2 to 5, as a memory snapshot does (`snapshot::looks_like_pickle`). */
const isPickle = (head) => head[0] === 0x80 && head[1] >= 2 && head[1] <= 5;

/** Group lists of a snapshot's report are cut to this many, as `sightline snapshot` cuts them by default. */
export const SNAPSHOT_TOP = 10;

/** Bytes of a file's head that are read to tell what it is (pair.js reads its `distributedInfo` in them too). */
export const HEAD_BYTES = 256 * 1024;

/** The first `HEAD_BYTES` of `bytes` (a file's head), inflated when they are gzip. */
export async function inflatedHead(bytes) {
  if (!isGzip(bytes)) return bytes;
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")).getReader();
  const parts = [];
  let n = 0;
  try {
    while (n < HEAD_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      n += value.length;
    }
  } catch {
    // The head ends inside the gzip stream: what was inflated before the cut is what we need.
  }
  reader.cancel().catch(() => {});
  const all = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  return all;
}

/** The head of a File or Blob, inflated when it is gzip. */
export async function fileHead(blob) {
  return inflatedHead(new Uint8Array(await blob.slice(0, HEAD_BYTES).arrayBuffer()));
}

/**
 * What `chunks` hold, told by their first bytes (inflated when gzip): `{ kind, chunks }`, kind
 * "snapshot" (a pickle: `torch.cuda.memory._dump_snapshot`) or "trace" (anything else: the
 * parser says what it is), and chunks that yield everything from the start again.
 */
export async function sniff(chunks) {
  const kindOf = async (head) => (isPickle(await inflatedHead(head)) ? "snapshot" : "trace");
  if (chunks.blob) return { kind: await kindOf(new Uint8Array(await chunks.blob.slice(0, HEAD_BYTES).arrayBuffer())), chunks };
  const it = chunks()[Symbol.asyncIterator]();
  const first = await it.next();
  const again = async function* () {
    if (first.done) return;
    yield first.value;
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      yield next.value;
    }
  };
  return { kind: first.done ? "trace" : await kindOf(first.value.subarray(0, HEAD_BYTES)), chunks: again };
}

/** Slices of `blob` from `start` to `end`, reading the next one while the current one is parsed. */
async function* rangeChunks(blob, start, end, size) {
  const read = (off) => blob.slice(off, Math.min(off + size, end)).arrayBuffer();
  let next = start < end ? read(start) : null;
  for (let off = start; off < end; off += size) {
    const buf = await next;
    next = off + size < end ? read(off + size) : null;
    yield new Uint8Array(buf);
  }
}

/**
 * Chunks of a File/Blob, reading the next slice while the current one is parsed. The blob rides
 * along (`.blob`): a worker reads it itself (readInto), in parts when it is large plain JSON.
 */
export function blobChunks(blob) {
  const chunks = async function* () {
    yield* rangeChunks(blob, 0, blob.size, await sliceSize(blob));
  };
  chunks.blob = blob;
  return chunks;
}

async function sliceSize(blob) {
  return isGzip(new Uint8Array(await blob.slice(0, 2).arrayBuffer())) ? GZ_CHUNK : CHUNK;
}

/**
 * True when the browser inflates gzip natively (DecompressionStream): an inflate worker then feeds
 * the Session's worker, the two at once (worker/inflate-worker.js). A page may turn it off with
 * `?inflate=wasm` to compare.
 */
function browserInflates() {
  return typeof DecompressionStream === "function" && new URLSearchParams(location.search).get("inflate") !== "wasm";
}

/** Chunks of a fetch response's body, as they download. */
export function responseChunks(resp) {
  return async function* () {
    const reader = resp.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      // Ends the request on our side too (also when the load is cancelled).
      reader.releaseLock();
      resp.body.cancel().catch(() => {});
    }
  };
}

/** The last part of `url`'s path, decoded: the name a trace fetched from it goes by. */
export function urlName(url) {
  return decodeURIComponent(url.pathname.split("/").pop() || url.pathname);
}

/** Chunks of the trace at `url` (a `URL` of this site, or one the page's policy allows), fetched when first asked for. */
export function urlChunks(url, name = urlName(url)) {
  return async function* () {
    const resp = await fetch(url, { credentials: "same-origin" });
    if (!resp.ok || !resp.body) throw new Error(`could not fetch ${name}: HTTP ${resp.status}`);
    yield* responseChunks(resp)();
  };
}

/** Chunks of a buffer handed over whole (an embedding page's postMessage). */
export function bufferChunks(buffer) {
  const bytes = ArrayBuffer.isView(buffer) ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength) : new Uint8Array(buffer);
  const size = isGzip(bytes) ? GZ_CHUNK : CHUNK;
  return {
    total: bytes.length,
    chunks: async function* () {
      // Each slice is copied as it is sent (client.js), so the caller's buffer stays whole.
      for (let off = 0; off < bytes.length; off += size) yield bytes.subarray(off, off + size);
    },
  };
}

/**
 * Starts workers for loads. A spare worker (its module instantiated) lets a load begin at once:
 * `take()` hands it out. The first is started with the page; the next only when another load is
 * about to begin (`refillOnIntent`).
 */
export class Workers {
  constructor(bindings) {
    this.bindings = bindings;
    this.spare = null;
    this.warmed = null;
  }

  /** A started worker (the spare when there is one). */
  async take() {
    const spare = this.spare;
    this.spare = null;
    const w = spare && (await spare.catch(() => null));
    // A spare that died meanwhile (out of memory, say) is replaced.
    return w && !w.dead ? w : SessionWorker.start(this.bindings);
  }

  /**
   * Has the spare read a small synthetic trace (warm.rs `warm_up`) while the page waits for a
   * file: the browser optimizes the module's code as it runs, and the first real trace then reads
   * and analyses at the speed of later ones. `warmed`: the promise of what it read, for tests.
   * Once a page; nothing when no spare is waiting (a load took it).
   */
  warmUp() {
    if (!this.spare || this.warmed) return;
    let worker = null;
    this.warmed = this.spare
      .then((w) => {
        worker = w;
        return w.module.warm_up();
      });
    this.warmed.catch((err) => {
      // A load took the spare mid-warm-up and was then cancelled (another file chosen): the
      // worker was stopped on purpose, and its warm-up with it.
      if (worker && worker.dead && !worker.failed) return;
      // Anything else is a bug of ours on a healthy trace: said, and the page carries on.
      console.error(`the warm-up read failed: ${(err && err.message) || err}`);
    });
  }

  /** Starts the spare if there is none. */
  refill() {
    if (!this.spare) {
      const spare = SessionWorker.start(this.bindings);
      this.spare = spare;
      // A spare that cannot start is dropped; the next take() starts one and reports why.
      spare.catch(() => {
        if (this.spare === spare) this.spare = null;
      });
    }
    return this.spare;
  }

  /**
   * Starts the spare when the user sets out to open a trace: the pointer pressed on an Open
   * control (a label of the file input), keyboard focus reaching the file input, a file dragged
   * over the page. The file dialog or the drag then hides the worker's start. Not at the end of a
   * load, as before: a page left right then (a link followed, `?url=` navigated) aborted the fetch
   * of the worker's script, a failed request to the browser, and a page that never opens a second
   * trace started a worker for nothing.
   */
  refillOnIntent(doc) {
    const opening = (ev) => {
      const el = ev.target instanceof Element ? ev.target : null;
      if (ev.type === "dragenter" || (el && el.closest('label[for="file-input"], #file-input'))) this.refill();
    };
    for (const type of ["pointerdown", "focusin", "dragenter"]) doc.addEventListener(type, opening, true);
  }
}

/**
 * Reads a memory snapshot's `chunks` into a new SnapshotSession in `worker` (gzip is inflated
 * there, by the reader) and builds it. Resolves to its report (parsed, the groups cut to
 * `SNAPSHOT_TOP`); rejects with the reader's message, or when the worker was terminated.
 */
export async function readSnapshotInto(worker, chunks, { onProgress }) {
  const s = worker.snapshot;
  await s.new();
  let read = 0;
  const blob = worker.readFile && chunks.blob;
  if (blob) {
    const size = isGzip(new Uint8Array(await blob.slice(0, 2).arrayBuffer())) ? GZ_CHUNK : CHUNK;
    read = await worker.readFile(blob, 0, blob.size, size, (fed) => onProgress("reading", fed, 0));
  } else {
    for await (const chunk of chunks()) {
      read += chunk.length;
      await s.feed(chunk);
      onProgress("reading", read, 0);
    }
  }
  onProgress("building", read, 0);
  const report = await s.finish(SNAPSHOT_TOP);
  return { report, bytes: read };
}

/**
 * Reads `chunks` into a new Session in `worker` and builds the model; `onProgress(stage, read,
 * events)` follows it. A large plain-JSON file is parsed by several workers
 * (`worker/parallel.js`); `worker.parts` says by how many. A gzip file is inflated by the browser
 * in a worker of its own when it can (`worker.inflater` is then "browser"; "wasm" when the
 * Session inflated it). Resolves to the summary (parsed); rejects with the parser's message, or
 * when the worker was terminated (a cancel).
 */
export async function readInto(worker, chunks, { width, height, onProgress }) {
  const s = worker.session;
  await s.new();
  let read = 0;
  const blob = worker.readFile && chunks.blob;
  worker.parts = blob ? await readInParts(worker, blob, (fed, events) => onProgress("reading", fed, events)) : 0;
  if (worker.parts > 0) read = blob.size;
  else if (blob) {
    const gzip = isGzip(new Uint8Array(await blob.slice(0, 2).arrayBuffer()));
    const progress = (fed, events) => onProgress("reading", fed, events);
    let inflated = -1;
    if (gzip && browserInflates()) {
      inflated = await worker.readInflated(blob, progress);
      // The browser's inflater stopped (a damaged file, a second gzip member): a new Session
      // reads the file with its own inflater, reporting the damage and keeping what it can, as
      // the CLI does.
      if (inflated < 0) await s.new();
    }
    if (inflated >= 0) {
      read = inflated;
      worker.inflater = "browser";
    } else {
      if (gzip) worker.inflater = "wasm";
      // The worker reads the file itself: the page's thread never holds its bytes.
      read = await worker.readFile(blob, 0, blob.size, gzip ? GZ_CHUNK : CHUNK, progress);
    }
  } else {
    for await (const chunk of chunks()) {
      read += chunk.length;
      // The three calls run in order in the worker: the counts are those after this chunk.
      const [, fed, events] = await Promise.all([s.feed(chunk), s.bytes_fed(), s.events_read()]);
      onProgress("reading", fed, events);
    }
  }
  onProgress("building", read, await s.events_read());
  const summary = await s.finish(width, height);
  return { summary, bytes: read };
}
