// The memory chart under the timeline: one strip per device (each GPU and the CPU) with its
// allocated and reserved bytes over the timeline's window, on the timeline's own x scale. It is
// one of the timeline's layers (timeline.js `layers`): each frame asks the worker for
// `Session::memory_columns()` right behind its own layout and paints both, so the chart zooms and
// pans with the lanes. Per pixel column it draws the least and largest allocated value and the
// largest reserved one, so a spike narrower than a pixel is never lost. The peak is marked; hover
// shows the time and the values; a click asks what was live then (`onPick`). Device names are
// trace text: they are painted on the canvas or set as textContent, never parsed as HTML.

import { GUTTER } from "./timeline.js";
import { bytes, duration } from "./format.js";

const STRIP = 64; // px per device
const PAD = 6; // px above each strip's curve
const FONT = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
const PER_COLUMN = 3; // least allocated, largest allocated, largest reserved

export class MemoryChart {
  /**
   * box: the element shown only when the trace has memory events; canvas inside it; tooltip: an
   * element for hover tips; legend: where each device's peak is written; note: where the words go
   * when the events show no device memory worth a chart;
   * onPick(device, t_ns): a click on a strip (t_ns NaN: the device's peak, from the legend).
   * onZoom(x, factor), onPan(dx): wheel and drag over the chart, forwarded to the timeline.
   * @param {object} parts
   * @param {HTMLElement} parts.box
   * @param {HTMLCanvasElement} parts.canvas
   * @param {HTMLElement} parts.tooltip
   * @param {HTMLElement} parts.legend
   * @param {HTMLElement} parts.note
   * @param {(device: string, t_ns: number) => unknown} parts.onPick
   * @param {(x: number, factor: number) => unknown} parts.onZoom
   * @param {(dx: number) => unknown} parts.onPan
   */
  constructor({ box, canvas, tooltip, legend, note, onPick, onZoom, onPan }) {
    this.box = box;
    this.canvas = canvas;
    this.tooltip = tooltip;
    this.legend = legend;
    this.note = note;
    this.onPick = onPick;
    this.onZoom = onZoom;
    this.onPan = onPan;
    this.ctx = canvas.getContext("2d");
    this.session = null;
    this.devices = [];
    this.columns = null;
    this.meta = null;
    /** The picked time, marked on its strip: { device, t_ns } or null. */
    this.marker = null;
    /** Milliseconds of each `memory_columns` round trip (the worker call and its transfer). */
    this.fetchTimes = [];
    this.bindPointer();
  }

  /**
   * Shows the memory of `session`'s trace, or hides the chart when it has none (or `session` is
   * null). Resolves to the devices.
   */
  async attach(session) {
    this.session = session;
    this.devices = [];
    this.columns = null;
    this.marker = null;
    this.paintedKey = null;
    this.box.hidden = true;
    this.legend.replaceChildren();
    this.note.hidden = true;
    if (!session) return [];
    const [devices, recorded] = await Promise.all([session.memory_devices(), session.memory_recorded()]);
    if (this.session !== session) return [];
    // Strips only where one says something: a peak of a few bytes draws a flat line, which reads
    // as a broken chart; the words say what was recorded and what to record instead.
    this.devices = recorded.worth_a_chart ? devices : [];
    this.note.textContent = recorded.note || "";
    this.note.hidden = !recorded.note;
    this.box.hidden = this.devices.length === 0 && !recorded.note;
    this.canvas.parentElement.hidden = this.devices.length === 0;
    this.canvas.style.height = `${this.devices.length * STRIP}px`;
    this.renderLegend();
    return devices;
  }

  renderLegend() {
    for (const d of this.devices) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "memory-peak";
      b.dataset.device = d.device;
      b.dataset.peakBytes = String(d.peak_allocated_bytes);
      b.dataset.peakAtNs = String(d.peak_at_ns);
      const cap = d.capacity_bytes ? ` of ${bytes(d.capacity_bytes)}` : "";
      b.textContent = `${d.device}: peak ${bytes(d.peak_allocated_bytes)}${cap} at ${duration(d.peak_at_ns)}`;
      // Before PyTorch 1.10 the events carry no totals: the curve is then the sum of `Bytes` from
      // the trace start, a change since then rather than a level.
      if (!d.totals_recorded) b.textContent += " (allocated since the trace start: no totals in this trace)";
      b.title = `Show what was live at ${d.device}'s peak (reserved peak ${bytes(d.peak_reserved_bytes)})`;
      b.addEventListener("click", () => this.onPick(d.device, NaN));
      this.legend.append(b);
    }
  }

  /** The timeline's layer hook: this frame's columns, or nothing without memory events. */
  async fetch(session) {
    if (session !== this.session || !this.devices.length) return null;
    const t0 = performance.now();
    const columns = await session.memory_columns();
    this.fetchTimes.push(performance.now() - t0);
    if (this.fetchTimes.length > 600) this.fetchTimes.shift();
    return columns;
  }

  /**
   * The timeline's layer hook: paints `columns` for the frame whose meta is `meta`. The curves are
   * written pixel by pixel into one ImageData (a few hundred thousand writes, under a millisecond)
   * rather than as thousands of one-pixel rectangles, which cost the browser's rasterizer about
   * ten times the frame's own layout (measured with bench/memory.mjs).
   */
  paint(columns, meta) {
    if (!columns || !this.devices.length) return;
    this.columns = columns;
    this.meta = meta;
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const cssW = Math.max(1, c.clientWidth);
    const cssH = this.devices.length * STRIP;
    if (c.width !== Math.round(cssW * dpr) || c.height !== Math.round(cssH * dpr)) {
      c.width = Math.round(cssW * dpr);
      c.height = Math.round(cssH * dpr);
    }
    // A moved window (zoom, pan, resize): the tooltip told of a pixel column that shows another
    // time now, so it goes until the pointer moves again.
    const windowKey = `${meta.start_ns} ${meta.ns_per_px} ${cssW}`;
    if (windowKey !== this.windowKey) this.hideTip();
    this.windowKey = windowKey;
    const ctx = this.ctx;
    const th = this.theme();
    // A frame that did not move the window (a selection, a hover's redraw) leaves the chart as it
    // is: every repaint of a canvas costs the compositor its whole area.
    const key = [meta.start_ns, meta.ns_per_px, c.width, c.height, this.themeKey, this.marker && this.marker.device, this.marker && this.marker.t_ns].join(" ");
    if (key === this.paintedKey) return;
    this.paintedKey = key;
    const n = columns.length / this.devices.length / PER_COLUMN;
    if (!this.image || this.image.width !== c.width || this.image.height !== c.height) this.image = ctx.createImageData(c.width, c.height);
    const px = new Uint32Array(this.image.data.buffer);
    px.fill(th.px.bg);
    this.devices.forEach((d, i) => this.fillCurves(px, c.width, dpr, th.px, d, columns.subarray(i * n * PER_COLUMN, (i + 1) * n * PER_COLUMN), n, i * STRIP));
    ctx.putImageData(this.image, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.devices.forEach((d, i) => this.paintMarks(ctx, th, d, n, i * STRIP, cssW));
  }

  /** Theme colours as CSS text and, for the pixel writer, as packed RGBA over the background. */
  theme() {
    const css = getComputedStyle(this.canvas);
    const v = (name) => css.getPropertyValue(name).trim();
    const th = { bg: v("--bg"), fg: v("--fg"), muted: v("--muted"), line: v("--line"), ruler: v("--ruler"), accent: v("--accent"), arrow: v("--arrow"), reserved: v("--memory-reserved"), allocated: v("--memory-allocated") };
    const key = `${th.bg} ${th.reserved} ${th.allocated}`;
    if (this.themeKey !== key) {
      this.themeKey = key;
      const bg = rgba(th.bg);
      const reserved = over(rgba(th.reserved), bg);
      const allocated = over(rgba(th.allocated), bg);
      const light = (under) => over([...allocated.slice(0, 3), 0.45], under);
      this.packed = { bg: pack(bg), reserved: pack(reserved), allocated: pack(allocated), lightOnReserved: pack(light(reserved)), lightOnBg: pack(light(bg)) };
    }
    th.px = this.packed;
    return th;
  }

  /**
   * One device's curves into `px` (the canvas' pixels, `width` wide): per column, reserved up to
   * its largest value, allocated filled (lighter) up to its least value, and solid from the least
   * to the largest, at least one pixel, so a spike inside a column shows as a taller bar.
   */
  fillCurves(px, width, dpr, colour, d, col, n, top) {
    const max = Math.max(1, d.peak_reserved_bytes, d.peak_allocated_bytes);
    const y0 = Math.round((top + PAD) * dpr);
    const base = Math.round((top + STRIP - 1) * dpr);
    const h = base - y0;
    const y = (b) => base - Math.round((b / max) * h);
    const left = Math.round(GUTTER * dpr);
    for (let x = 0; x < n; x++) {
      const lo = col[x * PER_COLUMN];
      if (Number.isNaN(lo)) continue;
      const yHi = y(col[x * PER_COLUMN + 1]);
      const yLo = Math.max(yHi + 1, y(lo));
      const yRes = y(col[x * PER_COLUMN + 2]);
      const x0 = left + Math.round(x * dpr);
      const x1 = Math.min(width, left + Math.round((x + 1) * dpr));
      for (let row = Math.min(yRes, yHi); row < base; row++) {
        const c =
          row < yHi ? colour.reserved : row < yLo ? colour.allocated : row >= yRes ? colour.lightOnReserved : colour.lightOnBg;
        const o = row * width;
        for (let X = x0; X < x1; X++) px[o + X] = c;
      }
    }
  }

  /** The peak, the picked time, and the gutter's device name and scale, over the curves. */
  paintMarks(ctx, th, d, n, top, cssW) {
    const meta = this.meta;
    const px = (t) => (t - meta.start_ns) / meta.ns_per_px;
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, top, cssW - GUTTER, STRIP);
    ctx.clip();
    ctx.translate(GUTTER, 0);
    const peakX = px(d.peak_at_ns);
    if (peakX >= -1 && peakX <= n + 1) {
      ctx.fillStyle = th.arrow;
      ctx.fillRect(Math.round(peakX), top + 2, 1, STRIP - 3);
      ctx.font = FONT;
      ctx.textBaseline = "top";
      const label = `peak ${bytes(d.peak_allocated_bytes)}`;
      const w = ctx.measureText(label).width;
      ctx.fillText(label, peakX + 4 + w > n ? peakX - 4 - w : peakX + 4, top + 2);
    }
    if (this.marker && this.marker.device === d.device) {
      ctx.fillStyle = th.accent;
      ctx.fillRect(Math.round(px(this.marker.t_ns)), top, 1.5, STRIP);
    }
    ctx.restore();
    ctx.fillStyle = th.ruler;
    ctx.fillRect(0, top, GUTTER, STRIP);
    ctx.fillStyle = th.line;
    ctx.fillRect(0, top + STRIP - 1, cssW, 1);
    ctx.fillRect(GUTTER - 1, top, 1, STRIP);
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    ctx.fillStyle = th.fg;
    ctx.fillText(fitText(ctx, `${d.device} memory`, GUTTER - 20), 16, top + 14);
    ctx.fillStyle = th.muted;
    ctx.fillText(`0 – ${bytes(Math.max(d.peak_reserved_bytes, d.peak_allocated_bytes))}`, 16, top + 30);
    ctx.fillStyle = th.allocated;
    ctx.fillRect(16, top + 42, 8, 8);
    ctx.fillStyle = th.reserved;
    ctx.fillRect(80, top + 42, 8, 8);
    ctx.fillStyle = th.muted;
    ctx.fillText("allocated", 27, top + 46);
    ctx.fillText("reserved", 91, top + 46);
  }

  // ---- input ---------------------------------------------------------------

  /** The device strip and time under a pointer event, or null outside the curves. */
  at(ev) {
    if (!this.meta || !this.devices.length) return null;
    const r = this.canvas.getBoundingClientRect();
    const x = ev.clientX - r.left - GUTTER;
    const i = Math.floor((ev.clientY - r.top) / STRIP);
    const d = this.devices[i];
    if (x < 0 || !d) return null;
    return { d, i, x, t_ns: this.meta.start_ns + x * this.meta.ns_per_px };
  }

  bindPointer() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0) return;
      drag = { x: ev.clientX, last: ev.clientX, moved: false };
      c.setPointerCapture(ev.pointerId);
    });
    c.addEventListener("pointermove", (ev) => {
      if (drag) {
        if (Math.abs(ev.clientX - drag.x) > 3) drag.moved = true;
        if (drag.moved) this.onPan(drag.last - ev.clientX);
        drag.last = ev.clientX;
        this.hideTip();
        return;
      }
      this.hover(ev);
    });
    c.addEventListener("pointerup", (ev) => {
      const moved = drag && drag.moved;
      drag = null;
      if (moved) return;
      const p = this.at(ev);
      if (!p) return;
      this.marker = { device: p.d.device, t_ns: p.t_ns };
      this.onPick(p.d.device, p.t_ns);
    });
    c.addEventListener("pointercancel", () => (drag = null));
    c.addEventListener("pointerleave", () => this.hideTip());
    c.addEventListener(
      "wheel",
      (ev) => {
        const r = this.canvas.getBoundingClientRect();
        ev.preventDefault();
        const scale = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
        if (ev.deltaY) this.onZoom(Math.max(0, ev.clientX - r.left - GUTTER), Math.exp(ev.deltaY * scale * 0.0025));
        if (ev.deltaX) this.onPan(ev.deltaX * scale);
      },
      { passive: false },
    );
  }

  /** The tooltip: the time under the pointer and the values of its pixel column. */
  hover(ev) {
    const p = this.at(ev);
    const col = p && this.columns;
    const n = col ? col.length / this.devices.length / PER_COLUMN : 0;
    const x = p ? Math.floor(p.x) : -1;
    if (!p || x >= n) return this.hideTip();
    const o = (p.i * n + x) * PER_COLUMN;
    const [lo, hi, reserved] = [col[o], col[o + 1], col[o + 2]];
    const lines = Number.isNaN(hi)
      ? ["no memory event yet"]
      : [
          lo === hi ? `allocated ${bytes(hi)}` : `allocated ${bytes(lo)} – ${bytes(hi)} in this pixel`,
          `reserved ${bytes(reserved)}`,
          "click: what was live then",
        ];
    const title = document.createElement("div");
    title.className = "name";
    title.textContent = `${p.d.device} at ${duration(p.t_ns)}`;
    this.tooltip.replaceChildren(
      title,
      ...lines.map((text) => Object.assign(document.createElement("div"), { className: "muted", textContent: text })),
    );
    this.tooltip.hidden = false;
    const box = this.box.getBoundingClientRect();
    const left = ev.clientX - box.left + 14;
    this.tooltip.style.left = `${Math.min(left, box.width - this.tooltip.offsetWidth - 4)}px`;
    this.tooltip.style.top = `${ev.clientY - box.top + 14}px`;
  }

  hideTip() {
    this.tooltip.hidden = true;
  }
}

/** `text` cut with an ellipsis to fit `width` px in the context's font. */
function fitText(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(s + "…").width > width) s = s.slice(0, -1);
  return s + "…";
}

/** The one-pixel canvas `rgba` reads colours back from, made on first use. */
let probe = null;

/** A CSS colour as [r, g, b, a] (a in 0..1), read back from a one-pixel canvas. */
function rgba(colour) {
  const c = (probe ??= new OffscreenCanvas(1, 1).getContext("2d", { willReadFrequently: true }));
  c.clearRect(0, 0, 1, 1);
  c.fillStyle = "#000";
  c.fillStyle = colour;
  c.fillRect(0, 0, 1, 1);
  const [r, g, b, a] = c.getImageData(0, 0, 1, 1).data;
  return [r, g, b, a / 255];
}

/** `top` composited over the opaque `under`. */
function over(top, under) {
  const a = top[3];
  return [0, 1, 2].map((i) => Math.round(top[i] * a + under[i] * (1 - a))).concat(1);
}

/** An opaque colour as one little-endian RGBA pixel. */
/** @param {number[]} rgb */
function pack([r, g, b]) {
  return (255 << 24) | (b << 16) | (g << 8) | r;
}
