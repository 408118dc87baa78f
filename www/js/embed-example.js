// The example page's second iframe (embed-example.html): a parent speaking Perfetto's protocol.
// PING until PONG, then the trace's bytes; buttons post time ranges; the frame's load status is
// shown as it arrives.

const SAMPLE = "samples/tracelens_h100_bert_small_stack_mem.json.gz";
// The sample's first event is at ts = 1419247332500.684 µs in its file; Perfetto's timeStart and
// timeEnd count seconds in that clock.
const ORIGIN_S = 1419247.332500684;

const frame = /** @type {HTMLIFrameElement} */ (document.getElementById("posted"));
const viewer = new URL(frame.src, location.href).origin;
const $ = (id) => document.getElementById(id);

/**
 * Resolves once the frame answers 'PONG' (it does once its page has started).
 * @returns {Promise<void>}
 */
function handshake(win) {
  return new Promise((resolve) => {
    const ping = setInterval(() => win.postMessage("PING", viewer), 50);
    window.addEventListener("message", function onPong(ev) {
      if (ev.source !== win || ev.data !== "PONG") return;
      clearInterval(ping);
      window.removeEventListener("message", onPong);
      resolve();
    });
  });
}

window.addEventListener("message", (ev) => {
  if (ev.source !== frame.contentWindow || !ev.data || !ev.data.sightline) return;
  const s = ev.data.sightline;
  $("posted-status").textContent = s.status === "ready" ? `ready: ${s.name}, ${s.events} events` : s.status === "error" ? `error: ${s.message}` : s.status;
  for (const id of ["zoom-embeddings", "zoom-perfetto", "zoom-all"]) (/** @type {HTMLButtonElement} */ ($(id))).disabled = s.status !== "ready";
});

$("send").addEventListener("click", async () => {
  (/** @type {HTMLButtonElement} */ ($("send"))).disabled = true;
  $("posted-status").textContent = "fetching…";
  const buffer = await (await fetch(SAMPLE)).arrayBuffer();
  await handshake(frame.contentWindow);
  const message = { perfetto: { buffer, title: "BERT-small inference", fileName: SAMPLE.split("/").pop(), url: new URL(SAMPLE, location.href).href } };
  // Transferring the buffer hands it over without a copy.
  frame.contentWindow.postMessage(message, viewer, [buffer]);
  (/** @type {HTMLButtonElement} */ ($("send"))).disabled = false;
});

const post = (data) => frame.contentWindow.postMessage(data, viewer);
$("zoom-embeddings").addEventListener("click", () => post({ sightline: { t0: 900, t1: 1300 } }));
$("zoom-perfetto").addEventListener("click", () => post({ perfetto: { timeStart: ORIGIN_S + 0.0009, timeEnd: ORIGIN_S + 0.0013 } }));
$("zoom-all").addEventListener("click", () => post({ sightline: { t0: 0, t1: 4966.632 } }));
