// Two memory snapshots compared: the shown one is BASE, a second one chosen with "Compare with a
// snapshot…" (or dropped together with it) is NEW, read into its own SnapshotSession in its own
// worker as load.js reads BASE. Only each one's peaks (`SnapshotSession::peaks`, a few kB of JSON)
// cross between the workers; `diff_snapshots` is `sightline snapshot BASE NEW --json`: the change
// of reserved and allocated bytes, and per device the peaks and what grew at them, by each
// grouping. A profiler trace chosen here is told to be one. Names are set as text.

import { SessionWorker } from "./worker/client.js";
import { SNAPSHOT_TOP, blobChunks, readSnapshotInto, sniff } from "./load.js";
import { renderTabs } from "./table.js";
import { count, memory as bytes } from "./format.js";
import { GROUPINGS, groupTable } from "./snapshot-tables.js";
import { errorText } from "./errors.js";

const $ = (id) => document.getElementById(id);

const DIFF_COLUMNS = [
  { label: "Base", kind: "bytes", value: (r) => r.base_bytes },
  { label: "New", kind: "bytes", value: (r) => r.new_bytes },
  { label: "Change", kind: "delta", value: (r) => r.delta_bytes },
];

/**
 * The comparison of two snapshots; `base()` is the shown snapshot ({ session }). Returns
 * { compareWith(file), close() }.
 * @param {import("./context.js").PageContext} cx
 * @param {() => any} base
 */
export function startSnapshotDiff(cx, base) {
  const state = { worker: null, token: 0, diff: null, grouping: "by_frame", name: "" };
  cx.snapshotDiff = state;
  $("snapshot-compare-input").addEventListener("change", (ev) => {
    const input = /** @type {HTMLInputElement} */ (ev.target);
    const file = input.files[0];
    input.value = "";
    if (file) compareWith(file);
  });

  function close() {
    state.token++;
    if (state.worker) state.worker.terminate();
    state.worker = null;
    state.diff = null;
    $("snapshot-diff").hidden = true;
  }

  function say(text, stage) {
    const section = $("snapshot-diff");
    section.hidden = false;
    section.dataset.state = stage;
    $("snapshot-diff-headline").textContent = text;
    if (stage !== "ready") {
      $("snapshot-diff-tabs").replaceChildren();
      $("snapshot-diff-tables").replaceChildren();
    }
  }

  async function compareWith(file) {
    const shown = base();
    if (!shown) return;
    close();
    const token = state.token;
    state.name = file.name;
    $("snapshot-diff-name").textContent = file.name;
    say("Reading…", "loading");
    let worker = null;
    try {
      const { kind, chunks } = await sniff(blobChunks(file));
      if (kind !== "snapshot") return say(`${file.name} is not a memory snapshot: a profiler trace (or another file) is opened on its own, or compared with another trace.`, "error");
      worker = await SessionWorker.start(cx.bindings);
      if (token !== state.token) return worker.terminate();
      state.worker = worker;
      worker.onfailure = (text) => state.worker === worker && say(`${file.name} could not be compared: ${text}`, "error");
      await readSnapshotInto(worker, chunks, { onProgress: (stage, read) => token === state.token && say(stage === "reading" ? `Reading ${count(read)} bytes…` : "Building…", "loading") });
      const [b, n] = await Promise.all([shown.session.peaks(), worker.snapshot.peaks()]);
      const diff = await worker.module.diff_snapshots(b, n, SNAPSHOT_TOP);
      if (token !== state.token) return;
      state.diff = diff;
      render(diff);
    } catch (err) {
      if (token !== state.token) return;
      say(`${file.name} could not be compared: ${errorText(err)}`, "error");
    }
  }

  function render(diff) {
    const sign = (v) => (v > 0 ? `+${bytes(v)}` : bytes(v));
    const peaks = diff.devices.map((d) => `device ${d.device}: peak ${bytes(d.base_peak_bytes)} → ${bytes(d.new_peak_bytes)} (${sign(d.delta_peak_bytes)})`);
    say(`Reserved ${sign(diff.delta_reserved_bytes)}, allocated ${sign(diff.delta_allocated_bytes)}; ${peaks.join("; ") || "no device has a trace"}.`, "ready");
    const headline = $("snapshot-diff-headline");
    headline.dataset.deltaReservedBytes = String(diff.delta_reserved_bytes);
    headline.dataset.deltaAllocatedBytes = String(diff.delta_allocated_bytes);
    const select = (id) => {
      state.grouping = id;
      renderTabs($("snapshot-diff-tabs"), GROUPINGS, id, select);
      const host = $("snapshot-diff-tables");
      host.replaceChildren();
      for (const d of diff.devices) {
        host.append(Object.assign(document.createElement("h3"), { textContent: `Device ${d.device}, at each one's peak` }));
        const table = groupTable(d.at_peak[id], { columns: DIFF_COLUMNS });
        table.dataset.device = String(d.device);
        host.append(table);
      }
    };
    select(state.grouping);
  }

  return { compareWith, close };
}
