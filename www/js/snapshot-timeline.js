// The Active Memory Timeline of a memory snapshot: every allocation of a device as a band, stacked
// in allocation order. The layout is the worker's (`SnapshotSession::bands_layout`, src/snapshot/
// bands.rs: one stack per pixel column, at the column's highest live bytes, allocations under a
// pixel merged where they lie); this paints its rectangles and asks again when the window changes.
// The wheel zooms around the pointer, a drag pans, a double-click shows the whole trace. Hover
// shows what is under the pointer (`bands_hit`), a click keeps it in the panel below. Frame names
// come from the snapshot: they are set as text, never parsed as HTML.

import { count, memory as bytes } from "./format.js";

const HEIGHT = 280; // px
const MERGED = -1;
const BEFORE = -2;

export class BandsChart {
  /**
   * canvas; tooltip: an element for hover tips; caption: where the window's figures are written;
   * onPick(hit): a click on a band (the hit as `bands_hit` returns it).
   * @param {object} parts
   * @param {HTMLCanvasElement} parts.canvas
   * @param {HTMLElement} parts.tooltip
   * @param {HTMLElement} parts.caption
   * @param {(hit: any) => unknown} parts.onPick
   */
  constructor({ canvas, tooltip, caption, onPick }) {
    this.canvas = canvas;
    this.tooltip = tooltip;
    this.caption = caption;
    this.onPick = onPick;
    this.ctx = canvas.getContext("2d");
    /** @type {import("./worker/client.js").SnapshotClient | null} */
    this.session = null;
    this.palette = [];
    // What `attach` sets: the device shown, its number of positions (trace entries, plus one),
    // the window in positions, and the last layout painted.
    /** @type {number | undefined} */
    this.device = undefined;
    /** @type {number | undefined} */
    this.positions = undefined;
    /** @type {number | undefined} */
    this.start = undefined;
    /** @type {number | undefined} */
    this.end = undefined;
    this.layout = undefined;
    /** Layouts asked for and painted, for tests and benchmarks: { ms, rects } each. */
    this.painted = [];
    this.pending = null;
    this.dirty = false;
    this.bindPointer();
  }

  /** Shows `device` of `session`'s snapshot (`positions` of it), the whole trace in view. */
  async attach(session, device, positions, palette) {
    Object.assign(this, { session, device, positions, palette, start: 0, end: positions, layout: null });
    this.hideTip();
    return this.request();
  }

  detach() {
    this.session = null;
    this.layout = null;
    this.hideTip();
  }

  size() {
    const width = Math.max(1, Math.floor(this.canvas.parentElement.clientWidth));
    return { width, height: HEIGHT };
  }

  /** Asks for the current window's layout; one call at a time, the latest window wins. Resolves once it is painted. */
  request() {
    this.dirty = true;
    if (!this.pending) {
      this.pending = (async () => {
        while (this.dirty && this.session) {
          this.dirty = false;
          const session = this.session;
          const { width, height } = this.size();
          const win = { start: this.start, end: this.end, width, height };
          const t0 = performance.now();
          const out = await session.bands_layout(this.device, win.start, win.end, width, height);
          if (session !== this.session) return;
          this.layout = { ...win, maxBytes: out[0], maxPosition: out[1], rects: out.subarray(2) };
          this.paint();
          this.painted.push({ ms: performance.now() - t0, rects: (out.length - 2) / 6 });
        }
      })().finally(() => (this.pending = null));
    }
    return this.pending;
  }

  /** Resolves once what was asked for is painted. */
  async idle() {
    while (this.pending) await this.pending;
  }

  paint() {
    const l = this.layout;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = l.width * dpr;
    this.canvas.height = l.height * dpr;
    this.canvas.style.width = `${l.width}px`;
    this.canvas.style.height = `${l.height}px`;
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, l.width, l.height);
    const dark = matchMedia("(prefers-color-scheme: dark)").matches ? 1 : 0;
    const r = l.rects;
    for (let i = 0; i < r.length; i += 6) {
      const stack = r[i + 5];
      ctx.fillStyle = stack === MERGED ? "#9aa0a6" : stack === BEFORE ? "#b8b0a0" : this.palette[stack % this.palette.length][dark];
      // A band under a pixel tall is drawn a pixel tall where it lies, so it can be pointed at.
      const h = Math.max(r[i + 3] - r[i + 2], 1);
      ctx.fillRect(r[i], l.height - r[i + 2] - h, r[i + 1] - r[i], h);
    }
    const first = Math.floor(l.start);
    const last = Math.min(this.positions - 1, Math.ceil(l.end) - 1);
    this.caption.textContent = `Entries ${count(first)} to ${count(last)} of ${count(this.positions - 1)} · highest in view ${bytes(l.maxBytes)} (the full height), after entry ${count(l.maxPosition - 1)} · wheel to zoom, drag to pan, double-click for all`;
    this.canvas.dataset.maxBytes = String(l.maxBytes);
    this.canvas.dataset.start = String(l.start);
    this.canvas.dataset.end = String(l.end);
  }

  /** The window zoomed by `factor` around pixel `x`, kept within the trace and at least 4 entries wide. */
  zoom(x, factor) {
    const { width } = this.size();
    const at = this.start + ((this.end - this.start) * x) / width;
    const span = Math.min(this.positions, Math.max(4, (this.end - this.start) * factor));
    this.start = Math.max(0, Math.min(this.positions - span, at - ((at - this.start) * span) / (this.end - this.start)));
    this.end = this.start + span;
    this.request();
  }

  pan(dx) {
    const { width } = this.size();
    const span = this.end - this.start;
    this.start = Math.max(0, Math.min(this.positions - span, this.start - (dx * span) / width));
    this.end = this.start + span;
    this.request();
  }

  async hitAt(ev) {
    const l = this.layout;
    if (!l || !this.session) return null;
    const box = this.canvas.getBoundingClientRect();
    const x = ev.clientX - box.left;
    const y = l.height - (ev.clientY - box.top);
    return this.session.bands_hit(this.device, l.start, l.end, l.width, l.height, x, y);
  }

  bindPointer() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener("wheel", (ev) => {
      if (!this.session) return;
      ev.preventDefault();
      this.zoom(ev.offsetX, Math.exp(ev.deltaY * 0.002));
    });
    c.addEventListener("pointerdown", (ev) => {
      drag = { x: ev.clientX, moved: false };
      c.setPointerCapture(ev.pointerId);
    });
    c.addEventListener("pointermove", async (ev) => {
      if (drag && Math.abs(ev.clientX - drag.x) > 2) {
        drag.moved = true;
        this.pan(ev.clientX - drag.x);
        drag.x = ev.clientX;
        this.hideTip();
        return;
      }
      if (drag) return;
      const hit = await this.hitAt(ev).catch(() => null);
      if (hit) this.showTip(hit, ev);
      else this.hideTip();
    });
    c.addEventListener("pointerup", async (ev) => {
      const clicked = drag && !drag.moved;
      drag = null;
      if (!clicked) return;
      const hit = await this.hitAt(ev).catch(() => null);
      if (hit && this.onPick) this.onPick(hit);
    });
    c.addEventListener("pointerleave", () => this.hideTip());
    c.addEventListener("dblclick", () => {
      this.start = 0;
      this.end = this.positions;
      this.request();
    });
  }

  showTip(hit, ev) {
    const t = this.tooltip;
    t.replaceChildren();
    for (const line of describeHit(hit)) t.append(Object.assign(document.createElement("div"), { textContent: line }));
    t.hidden = false;
    const box = this.canvas.parentElement.getBoundingClientRect();
    t.style.left = `${Math.min(ev.clientX - box.left + 12, box.width - 320)}px`;
    t.style.top = `${ev.clientY - box.top + 12}px`;
  }

  hideTip() {
    this.tooltip.hidden = true;
  }
}

/** The lines that say what a hit is: its size, its lifetime, where it was allocated. */
export function describeHit(hit) {
  const at = `after entry ${count(hit.position - 1)}, ${bytes(hit.live_bytes)} live`;
  const a = hit.allocation;
  if (!a) return [`${count(hit.merged_count)} allocations each under a pixel, ${bytes(hit.merged_bytes)} in all`, at];
  const made = a.alloc_entry === null ? "live before recording began" : `allocated at entry ${count(a.alloc_entry)}${a.alloc_time_us !== null ? ` (${count(a.alloc_time_us)} µs)` : ""}`;
  const freed = a.free_entry === null ? "live at the end" : `freed at entry ${count(a.free_entry)}${a.free_time_us !== null ? ` (${count(a.free_time_us)} µs)` : ""}`;
  const life = `live for ${count(a.lifetime_entries)} entries${a.lifetime_us !== null ? `, ${count(a.lifetime_us)} µs` : ""}`;
  return [`${bytes(a.size_bytes)} (${count(a.size_bytes)} bytes), ${a.category}`, `${made}, ${freed}; ${life}`, a.user_frame ? `from ${a.user_frame}` : "no Python frame recorded", at];
}
