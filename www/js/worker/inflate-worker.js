// A Web Worker that inflates one gzip File for a Session in another worker, so the two run at
// once: inflating (the browser's native inflater, DecompressionStream) and parsing used to
// alternate on one core, the wasm inflater taking about a sixth of the time (BENCHMARKS.md).
//
//   page -> this worker   {blob, port}           the file, and a MessagePort to the session worker
//   this -> session       {json, compressed}     inflated JSON (transferred), file bytes read so far
//   session -> this       {took: n}              n chunks fed: this worker may send n more
//   this -> session       {done: compressed}     the whole file was inflated
//   this -> session       {failed: message}      the inflater stopped (damage, a second gzip
//                                                member): the session reads the file again itself
//
// JSON goes out in chunks of CHUNK bytes, at most IN_FLIGHT of them unfed at once, so a parse
// slower than the inflate holds a few MB here, not the whole inflated file.

const CHUNK = 4 << 20;
const IN_FLIGHT = 4;

self.addEventListener("message", (/** @type {MessageEvent} */ ev) => {
  const { blob, port } = ev.data;
  inflate(blob, port).catch((err) => port.postMessage({ failed: (err && err.message) || String(err) }));
});

async function inflate(blob, port) {
  let credit = IN_FLIGHT;
  let wake = null;
  port.onmessage = (ev) => {
    credit += ev.data.took;
    if (wake) wake();
  };
  let compressed = 0;
  const counted = new TransformStream({
    transform(chunk, out) {
      compressed += chunk.byteLength;
      out.enqueue(chunk);
    },
  });
  const reader = blob.stream().pipeThrough(counted).pipeThrough(new DecompressionStream("gzip")).getReader();
  let buf = new Uint8Array(CHUNK);
  let used = 0;
  const send = async () => {
    while (credit === 0) await new Promise((resolve) => (wake = resolve));
    wake = null;
    credit--;
    const json = used === buf.length ? buf : buf.slice(0, used);
    port.postMessage({ json, compressed }, [json.buffer]);
    buf = new Uint8Array(CHUNK);
    used = 0;
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (let off = 0; off < value.length; ) {
      const n = Math.min(value.length - off, buf.length - used);
      buf.set(value.subarray(off, off + n), used);
      used += n;
      off += n;
      if (used === buf.length) await send();
    }
  }
  if (used > 0) await send();
  port.postMessage({ done: compressed });
}
