// The details panel of a selected slice: every arg, the slices above it, the GPU work it launched
// or what launched it, its flows, a backward node's forward operator and back, and for a Python
// frame its source links (source-links.js). Everything from the trace is set with textContent.

import { duration } from "./format.js";
import { sourceLinks } from "./source-links.js";

/**
 * Renders details `d` (from Session.select/click) into `host`; `onPick(lane, index)` selects.
 * extras: { onFrame(lane, index) }: selects a slice and fits the view to it (the forward and
 * backward operators' buttons; `onPick` when absent).
 */
export function renderDetails(host, d, onPick, extras = {}) {
  host.replaceChildren();
  if (!d) {
    host.append(p("muted", "Click a slice to see its args, where it came from and what it launched."));
    return;
  }
  const name = p("slice-name", d.name);
  // A name past 64 KiB comes cut (no profiler writes one; a hostile file may hold megabytes).
  if (d.name_bytes > 65536 && extras.fullName) {
    const whole = document.createElement("button");
    whole.type = "button";
    whole.className = "link full-name";
    whole.textContent = `Show the whole name (${d.name_bytes.toLocaleString("en-US")} bytes)`;
    whole.addEventListener("click", async () => {
      name.textContent = await extras.fullName(d.lane, d.index);
      whole.remove();
    });
    name.append(" ", whole);
  }
  const kv = table([
    ["category", d.category || "–"],
    ["lane", d.lane_name],
    ["start", duration(d.start_ns)],
    ["duration", duration(d.dur_ns)],
    ["depth", String(d.depth)],
  ]);
  host.append(name, kv);
  // A Python frame (`path/file.py(12): fn`): open it in an editor, copy path:line.
  const source = sourceLinks(d.name);
  if (source) host.append(source);

  if (d.args && typeof d.args === "object" && Object.keys(d.args).length) {
    host.append(h3("Args"));
    host.append(
      table(
        Object.entries(d.args).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
        true,
      ),
    );
  }
  if (d.ancestors && d.ancestors.length) {
    host.append(h3(`Inside (${d.ancestors.length}, outermost first)`));
    host.append(refs(d.ancestors, onPick));
  }
  if (d.launched && d.launched.count) {
    const l = d.launched;
    host.append(h3(`Launched ${l.count} device event${l.count > 1 ? "s" : ""}, ${duration(l.gpu_ns)} on the device${l.partial ? " (first part only)" : ""}`));
    host.append(refs(l.events, onPick));
    if (l.events.length < l.count) host.append(p("muted", `and ${l.count - l.events.length} more`));
  }
  if (d.launched_by) {
    const b = d.launched_by;
    host.append(h3("Launched by"));
    const items = [b.op, b.runtime].filter(Boolean);
    if (items.length) host.append(refs(items, onPick));
    else host.append(p("muted", "no runtime call with this correlation id in the trace"));
  }
  // A device op a CUDA/HIP graph launch replayed: the trace names no operator of its own.
  if (d.replayed) {
    const r = d.replayed;
    host.append(h3(`Replayed by graph ${r.graph}`));
    host.append(refs([r.launch], onPick));
    const where = `op ${r.position} of ${r.ops} in this replay; the graph is launched ${r.launches} time${r.launches > 1 ? "s" : ""} in the trace.`;
    const c = r.captured;
    if (c) {
      host.append(p("muted", where));
      host.append(h3("Issued while captured by"));
      const list = document.createElement("ol");
      list.className = "captured-stack";
      for (const name of c.operators) {
        const li = document.createElement("li");
        li.textContent = name;
        list.append(li);
      }
      host.append(list);
      if (c.module) host.append(p("muted", `module ${c.module}`));
      if (c.frame) host.append(p("muted", `Python ${c.frame}`));
    } else {
      host.append(p("muted", `${where} The trace recorded while the graph was captured names its operator (Graphs tab: Read the capture trace…; sightline graphs FILE --capture CAPTURE).`));
    }
  }
  // A backward node's forward operator and a forward operator's backward nodes (fwdbwd flows).
  const onFrame = extras.onFrame || onPick;
  if (d.forward) host.append(jumps("Forward", [d.forward], onFrame));
  if (d.backward && d.backward.length) host.append(jumps("Backward", d.backward, onFrame));
  if (d.flows && d.flows.length) {
    host.append(p("muted", `${d.flows.length} flow arrow${d.flows.length > 1 ? "s" : ""} drawn (${[...new Set(d.flows.map((f) => f.category))].join(", ")})`));
  }
}

function refs(list, onPick) {
  const ul = document.createElement("ul");
  ul.className = "refs";
  for (const b of list) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "#";
    a.textContent = b.name;
    a.title = Number.isFinite(b.start_ns) ? `${b.category} · starts ${duration(b.start_ns)}` : b.category;
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      onPick(b.lane, b.index);
    });
    li.append(a);
    if (Number.isFinite(b.dur_ns)) li.append(document.createTextNode(` · ${duration(b.dur_ns)}`));
    ul.append(li);
  }
  return ul;
}

/** "Forward: NAME [Show]", one line per operator (at most 10), each button framing its slice. */
function jumps(label, list, onFrame) {
  const box = document.createElement("div");
  box.className = `fwdbwd ${label.toLowerCase()}`;
  for (const b of list.slice(0, 10)) {
    const line = p("fwdbwd-line", `${label}: `);
    const name = document.createElement("span");
    name.className = "fwdbwd-name";
    name.textContent = b.name;
    name.title = `${b.category} · starts ${duration(b.start_ns)} · ${duration(b.dur_ns)}`;
    const show = document.createElement("button");
    show.type = "button";
    show.textContent = "Show";
    show.title = `Select this ${label.toLowerCase()} operator and fit the timeline to it`;
    show.addEventListener("click", () => onFrame(b.lane, b.index));
    line.append(name, document.createTextNode(" "), show);
    box.append(line);
  }
  if (list.length > 10) box.append(p("muted", `and ${list.length - 10} more`));
  return box;
}

function table(rows, mono = false) {
  const t = document.createElement("table");
  t.className = "kv";
  for (const [k, v] of rows) {
    const tr = t.insertRow();
    const a = tr.insertCell();
    a.textContent = k;
    const b = tr.insertCell();
    b.textContent = v;
    if (mono) b.className = "value";
  }
  return t;
}

function h3(text) {
  const e = document.createElement("h3");
  e.textContent = text;
  return e;
}

function p(cls, text) {
  const e = document.createElement("p");
  e.className = cls;
  e.textContent = text;
  return e;
}

/** Details of an idle gap (a click on a shaded gap): how long, what ended it, what the CPU did. */
export function renderGap(host, g, phrases, onPick) {
  host.replaceChildren();
  host.append(p("slice-name", `${g.device_name} idle for ${duration(g.dur_ns)}`));
  host.append(
    table([
      ["from", duration(g.start_ns)],
      ["to", duration(g.end_ns)],
      ["launch", g.host_wait ? `started after the gap began (${g.device_name} waited for the CPU)` : "issued before the gap began"],
    ]),
  );
  host.append(h3("Ended by"));
  const ends = [{ lane: g.ended_by.op.lane, index: g.ended_by.op.index, name: g.ended_by.name, category: "GPU op", start_ns: g.end_ns, dur_ns: NaN }];
  const l = g.ended_by.launch;
  if (l) {
    ends.push({ lane: l.slice.lane, index: l.slice.index, name: `${l.name} (on ${l.thread})`, category: "launch", start_ns: l.start_ns, dur_ns: NaN });
    if (l.operator) ends.push({ lane: l.operator.slice.lane, index: l.operator.slice.index, name: l.operator.name, category: "operator", start_ns: NaN, dur_ns: NaN });
  }
  host.append(refs(ends, onPick));
  if (g.cpu.length) {
    host.append(h3("Meanwhile on the CPU"));
    host.append(table(g.cpu.map((k) => [phrases[k.kind] || k.kind, duration(k.ns)])));
  }
  const events = g.events.filter((e) => e.slice);
  if (events.length) {
    host.append(h3("Events overlapping the gap"));
    host.append(refs(events.map((e) => ({ lane: e.slice.lane, index: e.slice.index, name: e.name, category: phrases[e.kind] || e.kind, start_ns: NaN, dur_ns: e.ns })), onPick));
  }
}
