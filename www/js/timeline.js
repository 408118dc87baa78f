// The timeline canvas: paints the draw list the wasm Session computes, and turns mouse and keys
// into Session calls. It decides nothing about what to draw: rectangles, labels, ticks, steps and
// arrows all come from `session.frame()`, in CSS pixels of the timeline area (a critical path shown
// too: its slices flagged, the rest dimmed, its lane changes as `path_arrows`). The Session is in a
// Web Worker (worker/client.js): every call is async, and calls run in the order they are made, so
// a pan followed by a frame request draws the panned view. At most one frame is being laid out in
// the worker and one waits to be painted; requests made meanwhile are merged into one more (see
// request()).

export const GUTTER = 190; // lane names, left of the timeline area
const RULER = 26; // time ruler, above it
const FONT = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
const BOLD = "600 12px system-ui, -apple-system, 'Segoe UI', sans-serif";

export class TimelineView {
  /**
   * canvas: the #timeline canvas; overview: the #overview canvas; statics: the module's
   * `constants()` and `palette()`, parsed;
   * callbacks: { onSelect(details|null), onRange(table), onStatus(text), onError(err), and
   * optionally onFrame(meta) after each drawn frame and tooltip: the element for hover tips
   * (default: #tooltip in the document), rangeLabel: the element that shows the selected
   * range's duration (none: not shown) }
   */
  constructor(canvas, overview, statics, callbacks) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d", { alpha: false });
    this.overviewCanvas = overview;
    this.cb = callbacks;
    this.k = statics.constants;
    this.paletteAll = statics.palette;
    /** @type {import("./worker/client.js").SessionClient | null} */
    this.session = null;
    this.meta = null;
    this.frameTimes = [];
    this.textWidth = new Map();
    // Frames: asked for (`asked`, a sequence), on the canvas (`shown`), asked for in this task
    // (`queued`), being laid out (`fetching`) with another asked for meanwhile (`dirty`), arrived
    // and waiting for the animation frame that paints them (`arrived`, `pending`); see request().
    // `drawing`, `redraw`: draw().
    this.asked = 0;
    this.shown = 0;
    this.queued = false;
    this.fetching = null;
    this.dirty = false;
    this.arrived = null;
    this.pending = false;
    this.drawing = null;
    this.redraw = false;
    this.mouse = null; // last pointer position in area coordinates
    this.viewKey = null; // the view of the last painted frame (hideTooltipIfMoved)
    this.drag = null;
    this.tipAt = null; // the canvas' place when the tooltip was shown (watchTooltip)
    this.fitAll = null; // what key 0 shows instead of this view's whole trace, when set
    this.tipWatch = 0;
    this.overviewData = null;
    /**
     * Charts drawn on the timeline's time axis (memory-chart.js): each `{ fetch(session),
     * paint(data, meta) }`. A frame asks the worker for their data right behind its own layout,
     * so both describe the same window, and paints them with it.
     */
    this.layers = [];
    this.readTheme();
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
      this.readTheme();
      this.request();
    });
    new ResizeObserver(() => this.resize()).observe(canvas.parentElement);
    this.bindPointer();
  }

  /** Shows a loaded session (or nothing). The view owns no trace data; the session does. */
  async attach(session) {
    this.session = session;
    this.meta = null;
    this.viewKey = null;
    this.hideTooltip();
    this.textWidth.clear();
    this.overviewData = null;
    this.resize();
    if (!session) return;
    const overview = await this.call(() => session.overview(800));
    if (overview !== undefined && this.session === session) this.overviewData = overview;
  }

  readTheme() {
    // The canvas inherits the variables: from :root on the page, from :host in <sightline-trace>.
    const css = getComputedStyle(this.canvas);
    const v = (name) => css.getPropertyValue(name).trim();
    this.dark = matchMedia("(prefers-color-scheme: dark)").matches;
    this.palette = this.paletteAll.map((p) => p[this.dark ? 1 : 0]);
    this.theme = {
      bg: v("--bg"), fg: v("--fg"), muted: v("--muted"), line: v("--line"), ruler: v("--ruler"),
      grid: v("--grid"), stepA: v("--step-a"), stepB: v("--step-b"), header: v("--header"),
      match: v("--match"), select: v("--select"), range: v("--range"), rangeFill: v("--range-fill"), arrow: v("--arrow"),
      path: v("--path") || v("--accent"),
      text: v("--text-on-slice"), overview: v("--overview"), accent: v("--accent"), gap: v("--gap"),
    };
  }

  /** Area size in CSS px. */
  areaSize() {
    return { w: Math.max(1, this.cssW - GUTTER), h: Math.max(1, this.cssH - RULER) };
  }

  resize() {
    // Client sizes exclude borders: the backing store must match the drawn box exactly, or
    // the browser rescales it and HiDPI edges blur.
    const box = this.canvas.parentElement;
    this.dpr = window.devicePixelRatio || 1;
    this.cssW = Math.max(1, box.clientWidth);
    this.cssH = Math.max(1, box.clientHeight);
    this.canvas.width = Math.round(this.cssW * this.dpr);
    this.canvas.height = Math.round(this.cssH * this.dpr);
    const ov = this.overviewCanvas;
    ov.width = Math.max(1, Math.round(ov.clientWidth * this.dpr));
    ov.height = Math.max(1, Math.round(ov.clientHeight * this.dpr));
    if (this.session) {
      const { w, h } = this.areaSize();
      this.call(() => this.session.resize(w, h));
    }
    this.request();
  }

  /**
   * Runs a session call and resolves to its result; a throw (a wasm panic included) goes to the
   * page's error handler and resolves to undefined. A call on a session that was replaced or
   * closed meanwhile resolves to undefined quietly.
   */
  async call(fn) {
    const session = this.session;
    try {
      return await fn();
    } catch (err) {
      if (session === this.session) this.cb.onError(err);
      return undefined;
    }
  }

  /**
   * Asks for a frame of the current view, painted at the next animation frame. The worker lays it
   * out at once (requests made in one task are one frame); one asked for while a frame is being
   * laid out is asked for as soon as that one arrives, so the worker lays out the next frame while
   * the page waits for the display and paints: at most one frame in the worker and one waiting
   * to be painted, and only the newest is painted.
   */
  request() {
    if (this.queued) return;
    if (this.fetching) {
      this.dirty = true;
      return;
    }
    this.queued = true;
    queueMicrotask(() => {
      this.queued = false;
      const f = (this.fetching = this.fetch());
      f.replies.then((replies) => {
        this.fetching = null;
        this.arrived = { f, replies };
        if (this.dirty) {
          this.dirty = false;
          this.request();
        }
        if (this.pending) return;
        this.pending = true;
        requestAnimationFrame(() => {
          this.pending = false;
          const a = this.arrived;
          this.arrived = null;
          if (a) this.paint(a.f, a.replies);
        });
      });
    });
  }

  /** Resolves once no frame is asked for, being laid out or waiting to be painted. */
  async idle() {
    for (;;) {
      if (this.drawing) await this.drawing;
      else if (this.fetching) await this.fetching.replies;
      else if (this.queued || this.pending || this.arrived) await /** @type {Promise<void>} */ (new Promise((resolve) => requestAnimationFrame(() => resolve())));
      else return;
    }
  }

  /**
   * Draws a frame now; resolves to the milliseconds it took (the layout in the worker, the
   * transfer and the painting). A draw asked for while one is in flight is done once, after it.
   */
  draw() {
    if (this.drawing) {
      this.redraw = true;
      return this.drawing;
    }
    this.drawing = (async () => {
      const f = this.fetch();
      return this.paint(f, await f.replies);
    })().finally(() => {
      this.drawing = null;
      if (this.redraw) {
        this.redraw = false;
        this.request();
      }
    });
    return this.drawing;
  }

  /** Asks the worker for a frame and the layers' data, for the same view. */
  fetch() {
    const session = this.session;
    const t0 = performance.now();
    const framed = session ? this.call(() => session.frame()) : undefined;
    const layered = Promise.all(this.layers.map((l) => (session ? this.call(() => l.fetch(session)) : undefined)));
    return { session, t0, seq: ++this.asked, replies: Promise.all([framed, layered]) };
  }

  /** Paints a frame's replies, unless a newer frame is on the canvas already; returns its ms. */
  paint({ session, t0, seq }, [frame, layers]) {
    if (seq < this.shown) return 0;
    this.shown = seq;
    const ctx = this.ctx;
    const th = this.theme;
    if (session !== this.session) return 0;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = th.bg;
    ctx.fillRect(0, 0, this.cssW, this.cssH);
    if (!frame) return 0;
    const rects = frame.rects;
    const meta = frame.meta;
    this.meta = meta;
    const { w, h } = this.areaSize();
    this.hideTooltipIfMoved(meta, w, h);

    // Timeline area.
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, RULER, w, h);
    ctx.clip();
    ctx.translate(GUTTER, RULER);
    meta.steps.forEach((s, i) => {
      ctx.fillStyle = i % 2 ? th.stepB : th.stepA;
      ctx.fillRect(s.x0, 0, s.x1 - s.x0, h);
    });
    ctx.fillStyle = th.grid;
    for (const t of meta.ticks) ctx.fillRect(this.snap(t.x), 0, 1 / this.dpr, h);
    for (const t of meta.tracks) {
      if (t.kind === "group") {
        ctx.fillStyle = th.header;
        ctx.fillRect(0, t.y, w, t.height);
      } else {
        ctx.fillStyle = th.line;
        ctx.fillRect(0, t.y + t.height - 1 / this.dpr, w, 1 / this.dpr);
      }
    }
    if (meta.gaps.length) {
      ctx.fillStyle = th.gap;
      for (const g of meta.gaps) ctx.fillRect(g.x0, g.y + 1, g.x1 - g.x0, g.h - 2);
    }
    this.paintRects(rects);
    this.paintLabels(meta.labels);
    this.paintArrows(meta.arrows, th.arrow);
    this.paintArrows(meta.path_arrows, th.path);
    if (meta.range) {
      const { x0, x1 } = meta.range;
      ctx.fillStyle = th.rangeFill;
      ctx.fillRect(x0, 0, x1 - x0, h);
      ctx.fillStyle = th.accent;
      ctx.fillRect(this.snap(x0), 0, 1, h);
      ctx.fillRect(this.snap(x1), 0, 1, h);
    }
    this.showRangeDuration(meta.range, w);
    if (this.drag && this.drag.range) {
      const [a, b] = [this.drag.x0, this.drag.x1].sort((p, q) => p - q);
      ctx.fillStyle = th.range;
      ctx.fillRect(a, 0, b - a, h);
    }
    ctx.restore();

    this.paintGutter(meta.tracks, h);
    this.paintRuler(meta, w);
    this.paintOverview();
    this.layers.forEach((l, i) => l.paint(layers[i], meta));
    const ms = performance.now() - t0;
    this.frameTimes.push(ms);
    if (this.frameTimes.length > 600) this.frameTimes.shift();
    if (this.cb.onFrame) this.cb.onFrame(meta);
    return ms;
  }

  /**
   * The selected range's duration, written over the range at the top of the tracks (an element
   * the page gives as `rangeLabel`), so that a shift-drag's length is read where it was made.
   */
  showRangeDuration(range, w) {
    const el = this.cb.rangeLabel;
    if (!el) return;
    if (!range || range.x1 < 0 || range.x0 > w) {
      el.hidden = true;
      return;
    }
    el.textContent = range.label;
    el.hidden = false;
    const mid = (Math.max(range.x0, 0) + Math.min(range.x1, w)) / 2;
    el.style.left = `${GUTTER + mid}px`;
    el.style.top = `${RULER + 2}px`;
  }

  snap(x) {
    return Math.round(x * this.dpr) / this.dpr;
  }

  paintRects(r) {
    const ctx = this.ctx;
    const k = this.k;
    const n = r.length / k.rect_stride;
    // Batch by colour and alpha: one fill style per batch. Each box is its own fillRect, not one
    // path per batch: snapped to device pixels, a rectangle is a plain blit for the rasterizer,
    // where a path of thousands of rectangles goes through path scan conversion (at 1 GB zoomed
    // out, 10k boxes: the canvas commit fell from 16.7 to 10.2 ms a frame; BENCHMARKS.md).
    const batches = new Map();
    const outlines = [];
    const onPath = [];
    const selected = [];
    for (let i = 0; i < n; i++) {
      const o = i * k.rect_stride;
      const style = r[o + 4];
      const flags = style >> 8;
      if (flags & k.flag_selected) {
        selected.push(o);
        continue;
      }
      let alpha = r[o + 5];
      if (flags & k.flag_dim) alpha *= 0.22;
      const key = (style & 255) * 8 + Math.min(7, Math.round(alpha * 7));
      let b = batches.get(key);
      if (!b) batches.set(key, (b = []));
      b.push(o);
      if (flags & k.flag_match) outlines.push(o);
      // Outlined when wide enough to show one: thousands of thin ones in one path would cost the
      // rasterizer more than the boxes (they stand out undimmed anyway).
      if (flags & k.flag_path && r[o + 2] >= 4) onPath.push(o);
    }
    for (const [key, list] of batches) {
      ctx.fillStyle = this.palette[key >> 3] || "#888";
      ctx.globalAlpha = (key & 7) / 7;
      for (const o of list) this.box(r[o], r[o + 1], r[o + 2], r[o + 3]);
    }
    ctx.globalAlpha = 1;
    if (outlines.length) {
      ctx.strokeStyle = this.theme.match;
      ctx.lineWidth = 2;
      ctx.beginPath();
      for (const o of outlines) ctx.rect(r[o] + 1, r[o + 1] + 1, Math.max(0, r[o + 2] - 2), r[o + 3] - 2);
      ctx.stroke();
    }
    if (onPath.length) {
      ctx.strokeStyle = this.theme.path;
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (const o of onPath) ctx.rect(r[o] + 0.5, r[o + 1] + 0.5, Math.max(0, r[o + 2] - 1), r[o + 3] - 1);
      ctx.stroke();
    }
    for (const o of selected) {
      ctx.strokeStyle = this.theme.select;
      ctx.lineWidth = 2;
      ctx.strokeRect(r[o] - 1, r[o + 1] - 1, r[o + 2] + 2, r[o + 3] + 2);
    }
  }

  /** A rectangle on device-pixel edges, at least one device pixel wide: crisp on HiDPI. */
  box(x, y, w, h) {
    const d = this.dpr;
    const x0 = Math.round(x * d) / d;
    const x1 = Math.max(x0 + 1 / d, Math.round((x + w) * d) / d);
    this.ctx.fillRect(x0, Math.round(y * d) / d, x1 - x0, Math.round(h * d) / d);
  }

  paintLabels(labels) {
    const ctx = this.ctx;
    ctx.font = FONT;
    ctx.fillStyle = this.theme.text;
    ctx.textBaseline = "middle";
    for (const l of labels) {
      const text = this.fit(l.text, l.w - 6);
      if (text) ctx.fillText(text, l.x + 3, l.y + this.k.box_px / 2 + 0.5);
    }
  }

  /** `text` cut to `width` px with an ellipsis; widths are measured once per string. */
  fit(text, width) {
    if (width < 8) return "";
    let full = this.textWidth.get(text);
    if (full === undefined) {
      full = this.ctx.measureText(text).width;
      if (this.textWidth.size > 50000) this.textWidth.clear();
      this.textWidth.set(text, full);
    }
    if (full <= width) return text;
    const chars = Math.floor((text.length * width) / full) - 1;
    return chars >= 2 ? text.slice(0, chars) + "…" : "";
  }

  /** Arrows as one path of curves and one of heads: two rasterizer calls however many there are. */
  paintArrows(arrows, colour) {
    if (!arrows.length) return;
    const ctx = this.ctx;
    ctx.strokeStyle = colour;
    ctx.fillStyle = colour;
    ctx.lineWidth = 1.25;
    ctx.beginPath();
    for (const a of arrows) {
      const mx = (a.x0 + a.x1) / 2;
      ctx.moveTo(a.x0, a.y0);
      ctx.bezierCurveTo(mx, a.y0, mx, a.y1, a.x1, a.y1);
    }
    ctx.stroke();
    ctx.beginPath();
    for (const a of arrows) {
      // The curve ends level (its last control point is at y1), so the head points along x.
      const mx = (a.x0 + a.x1) / 2;
      const ang = Math.abs(a.x1 - mx) > 0.5 ? (a.x1 > mx ? 0 : Math.PI) : Math.atan2(a.y1 - a.y0, 0);
      ctx.moveTo(a.x1, a.y1);
      ctx.lineTo(a.x1 - 8 * Math.cos(ang - 0.4), a.y1 - 8 * Math.sin(ang - 0.4));
      ctx.lineTo(a.x1 - 8 * Math.cos(ang + 0.4), a.y1 - 8 * Math.sin(ang + 0.4));
      ctx.closePath();
    }
    ctx.fill();
  }

  paintGutter(tracks, h) {
    const ctx = this.ctx;
    const th = this.theme;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, RULER, GUTTER, h);
    ctx.clip();
    ctx.translate(0, RULER);
    ctx.fillStyle = th.ruler;
    ctx.fillRect(0, 0, GUTTER, h);
    ctx.textBaseline = "middle";
    for (const t of tracks) {
      if (t.kind === "group") {
        ctx.fillStyle = th.header;
        ctx.fillRect(0, t.y, GUTTER, t.height);
      } else {
        ctx.fillStyle = th.fg;
        ctx.font = FONT;
        // The name sticks to the top while the lane is scrolled partly out of view.
        const ty = Math.min(Math.max(t.y, 0), t.y + t.height - this.k.row_px - 6);
        ctx.fillText(this.fitIn(t.title, GUTTER - 22, FONT), 16, ty + 3 + this.k.box_px / 2);
        if (t.all_rows > t.rows) {
          ctx.fillStyle = th.accent;
          ctx.fillText(`▸ ${t.all_rows - t.rows} more rows`, 16, t.y + t.height - 10);
        } else if (t.all_rows > this.k.folded_rows) {
          ctx.fillStyle = th.accent;
          ctx.fillText("▴ fold rows", 16, t.y + t.height - 10);
        }
        ctx.fillStyle = th.line;
        ctx.fillRect(0, t.y + t.height - 1 / this.dpr, GUTTER, 1 / this.dpr);
      }
    }
    ctx.fillStyle = th.line;
    ctx.fillRect(GUTTER - 1, 0, 1, h);
    ctx.restore();
    // Group titles run across the header rows, which hold no slices.
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, RULER, this.cssW, h);
    ctx.clip();
    ctx.translate(0, RULER);
    ctx.fillStyle = th.fg;
    ctx.textBaseline = "middle";
    for (const t of tracks) {
      if (t.kind !== "group") continue;
      const mark = t.collapsed ? "▸ " : "▾ ";
      ctx.fillText(this.fitIn(mark + t.title, this.cssW - 12, BOLD), 6, t.y + t.height / 2);
    }
    ctx.restore();
  }

  fitIn(text, width, font) {
    this.ctx.font = font;
    return this.fit(text, width);
  }

  paintRuler(meta, w) {
    const ctx = this.ctx;
    const th = this.theme;
    ctx.fillStyle = th.ruler;
    ctx.fillRect(0, 0, this.cssW, RULER);
    ctx.fillStyle = th.line;
    ctx.fillRect(0, RULER - 1, this.cssW, 1);
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, 0, w, RULER);
    ctx.clip();
    ctx.translate(GUTTER, 0);
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    meta.steps.forEach((s, i) => {
      ctx.fillStyle = i % 2 ? th.stepB : th.stepA;
      ctx.fillRect(s.x0, 0, s.x1 - s.x0, 11);
      ctx.fillStyle = th.accent;
      ctx.fillRect(this.snap(s.x0), 0, 1, RULER);
      const label = this.fit(s.name, Math.min(s.x1, w) - Math.max(s.x0, 0) - 6);
      ctx.fillStyle = th.muted;
      if (label) ctx.fillText(label, Math.max(s.x0, 0) + 3, 6);
    });
    ctx.fillStyle = th.fg;
    for (const t of meta.ticks) {
      ctx.fillRect(this.snap(t.x), RULER - 7, 1, 6);
      ctx.fillText(t.label, t.x + 3, RULER - 8);
    }
    ctx.restore();
    ctx.fillStyle = th.muted;
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    ctx.fillText("time from trace start", 6, RULER / 2);
  }

  paintOverview() {
    const c = this.overviewCanvas;
    const ctx = c.getContext("2d");
    const d = this.dpr;
    const W = c.width / d;
    const H = c.height / d;
    ctx.setTransform(d, 0, 0, d, 0, 0);
    ctx.fillStyle = this.theme.bg;
    ctx.fillRect(0, 0, W, H);
    const o = this.overviewData;
    if (!o || !this.meta) return;
    const n = o.values.length;
    ctx.fillStyle = this.theme.overview;
    ctx.beginPath();
    ctx.moveTo(0, H);
    for (let i = 0; i < n; i++) {
      const y = H - o.values[i] * (H - 2);
      ctx.lineTo((i / n) * W, y);
      ctx.lineTo(((i + 1) / n) * W, y);
    }
    ctx.lineTo(W, H);
    ctx.closePath();
    ctx.fill();
    const { w } = this.areaSize();
    const a = (this.meta.start_ns / o.span_ns) * W;
    const b = ((this.meta.start_ns + this.meta.ns_per_px * w) / o.span_ns) * W;
    ctx.strokeStyle = this.theme.accent;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(Math.max(0, a), 1, Math.max(2, Math.min(W, b) - Math.max(0, a)), H - 2);
  }

  // ---- input ---------------------------------------------------------------

  /** Pointer position relative to the timeline area. */
  local(ev) {
    const r = this.canvas.getBoundingClientRect();
    return { x: ev.clientX - r.left - GUTTER, y: ev.clientY - r.top - RULER };
  }

  bindPointer() {
    const c = this.canvas;
    c.addEventListener("pointerdown", (ev) => {
      if (!this.session || ev.button !== 0) return;
      const p = this.local(ev);
      c.focus();
      c.setPointerCapture(ev.pointerId);
      this.drag = { sx: p.x, sy: p.y, lx: p.x, ly: p.y, x0: p.x, x1: p.x, moved: false, range: ev.shiftKey && p.x >= 0 };
      this.hideTooltip();
    });
    c.addEventListener("pointermove", (ev) => {
      if (!this.session) return;
      const p = this.local(ev);
      this.mouse = p;
      const d = this.drag;
      if (!d) {
        this.hover(p, ev);
        return;
      }
      if (Math.abs(p.x - d.sx) + Math.abs(p.y - d.sy) > 3) d.moved = true;
      if (d.range) {
        d.x1 = p.x;
      } else if (d.moved) {
        c.classList.add("dragging");
        this.call(() => this.session.pan(d.lx - p.x, d.ly - p.y));
      }
      d.lx = p.x;
      d.ly = p.y;
      this.request();
    });
    const end = async (ev) => {
      const d = this.drag;
      if (!d || !this.session) return;
      this.drag = null;
      c.classList.remove("dragging");
      const p = this.local(ev);
      if (d.range && d.moved) {
        const table = await this.call(() => this.session.select_range(d.x0, p.x, 500));
        if (table !== undefined) this.cb.onRange(table);
      } else if (!d.moved) {
        await this.click(p.x, p.y);
      }
      this.request();
    };
    c.addEventListener("pointerup", end);
    c.addEventListener("pointercancel", () => {
      this.drag = null;
      c.classList.remove("dragging");
    });
    c.addEventListener("pointerleave", () => this.hideTooltip());
    c.addEventListener(
      "wheel",
      (ev) => {
        if (!this.session) return;
        ev.preventDefault();
        const p = this.local(ev);
        const scale = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
        const dx = ev.deltaX * scale;
        const dy = ev.deltaY * scale;
        if (ev.shiftKey) {
          this.call(() => this.session.pan(0, dy || dx));
        } else {
          if (dy) this.call(() => this.session.zoom_at(Math.max(0, p.x), Math.exp(dy * 0.0025)));
          if (dx) this.call(() => this.session.pan(dx, 0));
        }
        this.request();
      },
      { passive: false },
    );
    this.overviewCanvas.addEventListener("click", (ev) => {
      if (!this.session || !this.overviewData) return;
      const r = this.overviewCanvas.getBoundingClientRect();
      const t = ((ev.clientX - r.left) / r.width) * this.overviewData.span_ns;
      this.call(() => this.session.center_on(t));
      this.request();
    });
  }

  async click(x, y) {
    const v = await this.call(() => this.session.click(x, y));
    if (v === undefined) return;
    if (v && ("group" in v || "fold_lane" in v)) return;
    this.cb.onSelect(v);
  }

  hover(p, ev) {
    if (this.hoverPending) return;
    this.hoverPending = true;
    requestAnimationFrame(async () => {
      if (!this.session || this.drag || p.x < 0 || p.y < 0) {
        this.hoverPending = false;
        return this.hideTooltip();
      }
      const tip = await this.call(() => this.session.tooltip(p.x, p.y));
      this.hoverPending = false;
      // A drag may have started while the worker answered.
      if (!tip || this.drag) return this.hideTooltip();
      const t = tip;
      const el = this.tooltipElement();
      const title = document.createElement("div");
      title.className = "name";
      title.textContent = t.title;
      const lines = t.lines.map((text, i) => {
        const line = document.createElement("div");
        if (i > 0) line.className = "muted";
        line.textContent = text;
        return line;
      });
      el.replaceChildren(title, ...lines);
      el.hidden = false;
      const box = this.canvas.getBoundingClientRect();
      const x = ev.clientX - box.left + 14;
      const y = ev.clientY - box.top + 14;
      el.style.left = `${Math.min(x, box.width - el.offsetWidth - 4)}px`;
      el.style.top = `${y + el.offsetHeight > box.height ? y - el.offsetHeight - 20 : y}px`;
      this.watchTooltip(box);
    });
  }

  /**
   * Hides the tooltip once the timeline moves on the page while the pointer stays (a scroll, the
   * header growing as a search is typed, a panel above it opening): the slice it names is no
   * longer under the pointer. No event says that the page's layout moved, so each animation frame
   * compares the canvas' place with where it was when the tooltip was shown, while one is shown.
   */
  watchTooltip(box) {
    this.tipAt = { left: box.left, top: box.top };
    if (this.tipWatch) return;
    const check = () => {
      const el = this.tooltipElement();
      if (!el || el.hidden || !this.tipAt) {
        this.tipWatch = 0;
        return;
      }
      const r = this.canvas.getBoundingClientRect();
      if (r.left !== this.tipAt.left || r.top !== this.tipAt.top) {
        this.tipWatch = 0;
        return this.hideTooltip();
      }
      this.tipWatch = requestAnimationFrame(check);
    };
    this.tipWatch = requestAnimationFrame(check);
  }

  /**
   * Hides the tooltip when this frame shows another view than the last one: zoomed, panned,
   * framed or fitted, moved to a search match or a finding, its rows laid out anew (a fold, the
   * Python frames hidden) or resized. The tooltip described what was under the pointer before;
   * the next pointer move shows what is there now. Every way of changing the view ends in a frame,
   * so this is the one place that sees them all.
   */
  hideTooltipIfMoved(meta, w, h) {
    const rows = meta.tracks.map((t) => `${t.y}:${t.height}`).join(",");
    const key = `${meta.start_ns} ${meta.ns_per_px} ${meta.scroll_px} ${meta.content_px} ${w}x${h} ${rows}`;
    if (this.viewKey !== null && key !== this.viewKey) this.hideTooltip();
    this.viewKey = key;
  }

  tooltipElement() {
    return this.cb.tooltip || document.getElementById("tooltip");
  }

  hideTooltip() {
    const el = this.tooltipElement();
    if (el) el.hidden = true;
  }

  /** Keyboard, as users know it from Perfetto. Returns true when the key was used. */
  key(ev) {
    if (!this.session) return false;
    const { w } = this.areaSize();
    const x = this.mouse && this.mouse.x >= 0 && this.mouse.x <= w ? this.mouse.x : w / 2;
    const s = this.session;
    switch (ev.key.toLowerCase()) {
      case "w": this.call(() => s.zoom_at(x, 0.8)); break;
      case "s": this.call(() => s.zoom_at(x, 1.25)); break;
      case "a": this.call(() => s.pan(-w * 0.15, 0)); break;
      case "d": this.call(() => s.pan(w * 0.15, 0)); break;
      case "f": this.call(() => s.fit_selection()); break;
      // The page may fit more than this view's trace (a comparison fits both: compare.js).
      case "0": if (this.fitAll) this.fitAll(); else this.call(() => s.reset_view()); break;
      case "escape":
        this.call(() => s.clear_selection());
        this.cb.onSelect(null);
        break;
      default: return false;
    }
    this.request();
    return true;
  }
}
