// One large plain-JSON file parsed in several Web Workers at once, as `parse/parallel.rs` does
// with threads natively. The file is cut at guessed event boundaries (`event_boundary` on a few
// MB read at each cut); the loading worker reads the first range into its own Session while one
// helper worker per other range parses it into a part (`start_part`, `feed`, `take_part`). Each
// part comes back as one buffer (`parse/codec.rs`), transferred, never copied or shared (no
// SharedArrayBuffer, so no cross-origin isolation is needed), and the loading Session joins the
// parts in file order (`absorb_part`) exactly as `Builder::absorb` joins the threads' parts.
// A join that cannot be exact (B/E events, a guess inside a string) is refused, and the file is
// read again by one worker. gzip cannot be cut: the loading worker parses it alone, fed by an
// inflate worker (inflate-worker.js) or inflating it itself.
//
// Every worker reads its own range of the File (client.js `readFile`): the page's thread only
// sees progress. Helpers are linked to the loading worker (client.js `spawnLinked`): Cancel, which terminates
// the loading worker, ends them too. Each helper ends as soon as its part is handed over.

/** What decides a parallel read; a test may lower `minBytes` or set `workers`. */
export const settings = {
  // Below this one worker is about as fast: writing a part and joining it cost about a tenth of
  // parsing its range (0.6 + 1.2 s against 17 s for 512 MB, BENCHMARKS.md), plus a worker's start.
  minBytes: 64 << 20,
  // One worker per core, the loading worker included.
  workers: Math.max(1, navigator.hardwareConcurrency || 1),
};

// How much is read at each cut to find an event's start: real events are well under 1 MB.
const WINDOW = 4 << 20;
// Bytes per File slice a worker reads (load.js CHUNK).
const SLICE = 16 << 20;

/** The cut points: event starts near size·k/n, rising; empty when the file cannot be cut. */
async function cuts(worker, blob, n) {
  const head = new Uint8Array(await blob.slice(0, 64 << 10).arrayBuffer());
  if (!(await worker.module.splittable(head))) return [];
  const out = [];
  for (let k = 1; k < n; k++) {
    const guess = Math.floor((blob.size * k) / n);
    const window = new Uint8Array(await blob.slice(guess, guess + WINDOW).arrayBuffer());
    const at = await worker.module.event_boundary(window);
    if (at >= 0 && guess + at > (out.at(-1) ?? 0) && guess + at < blob.size) out.push(guess + at);
  }
  return out;
}

/**
 * Reads `blob` into `worker`'s new Session in parts when it pays (see `settings`). Resolves to the
 * number of workers that parsed it, or 0 when it was not read in parts (too small, gzip, one
 * core, a join refused): the Session is then new again and the caller reads the file itself.
 * `onProgress(read, events)` follows all workers together.
 */
export async function readInParts(worker, blob, onProgress) {
  const n = settings.workers;
  if (!worker.readFile || n < 2 || blob.size < settings.minBytes) return 0;
  // For benchmarks: when each step ended, in ms from the start of the read.
  const t0 = performance.now();
  const since = () => Math.round(performance.now() - t0);
  worker.partTimes = {};
  const at = await cuts(worker, blob, n);
  worker.partTimes.cut = since();
  if (at.length === 0) return 0;
  const head = new Uint8Array(await blob.slice(0, 16).arrayBuffer());
  const bounds = [0, ...at, blob.size];
  const read = new Array(bounds.length - 1).fill(0);
  const events = new Array(bounds.length - 1).fill(0);
  const report = () => onProgress(read.reduce((a, b) => a + b), events.reduce((a, b) => a + b));

  // Has a worker read one range into its Session, following its progress.
  const feed = (w, i) =>
    w.readFile(blob, bounds[i], bounds[i + 1], SLICE, (r, e) => {
      read[i] = r;
      events[i] = e;
      report();
    });
  const helpers = at.map(() => worker.spawnLinked());
  worker.partStats = [];
  const parts = helpers.map(async (helper, k) => {
    const s = helper.session;
    await s.new();
    await s.start_part(head.slice(), bounds[k + 1]);
    await feed(helper, k + 1);
    worker.partTimes[`parsed${k + 1}`] = since();
    const part = await s.take_part();
    worker.partTimes[`sent${k + 1}`] = since();
    // For benchmarks: what each helper held at its peak (its wasm memory never shrinks).
    const stat = { part_bytes: part.length, wasm_memory_bytes: await helper.module.memory_bytes() };
    worker.partStats.push(stat);
    helper.terminate("its part was handed over");
    // The loading worker's memory at that moment: the two were held together.
    worker.module.memory_bytes().then((b) => (stat.loading_wasm_memory_bytes = b), () => {});
    worker.linked.delete(helper);
    return part;
  });
  // Awaited in order below; a failure is reported from there, once.
  for (const p of parts) p.catch(() => {});
  try {
    await feed(worker, 0);
    worker.partTimes.parsed0 = since();
    for (const [k, p] of parts.entries()) {
      if (!(await worker.session.absorb_part(await p))) {
        await worker.session.new();
        return 0;
      }
      worker.partTimes[`joined${k + 1}`] = since();
    }
  } finally {
    for (const helper of helpers) {
      helper.terminate("the load ended");
      worker.linked.delete(helper);
    }
  }
  return bounds.length - 1;
}
