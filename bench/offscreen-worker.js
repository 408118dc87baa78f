// bench/offscreen.mjs's worker: paints a real frame with the page's own painter
// (TimelineView.paint from js/timeline.js) on an OffscreenCanvas, as a worker that painted the
// timeline itself would. Served under the site's js/ by the benchmark only; not part of the site.

import { TimelineView } from "./timeline.js";

self.onmessage = async ({ data }) => {
  const { canvas, overview, state, frame, layers, n } = data;
  // A TimelineView without its DOM: only what painting reads.
  const view = Object.assign(Object.create(TimelineView.prototype), state, {
    ctx: canvas.getContext("2d", { alpha: false }),
    overviewCanvas: overview,
    textWidth: new Map(),
    frameTimes: [],
    layers: [],
    cb: {},
    drag: null,
    shown: 0,
    session: null,
    meta: null,
  });
  const paint = [];
  const intervals = [];
  let last = 0;
  for (let i = 0; i < n; i++) {
    // One paint per animation frame, as a worker that paints would: the interval between animation
    // frames shows when painting and committing the OffscreenCanvas no longer fit in one.
    const t = await new Promise((resolve) => self.requestAnimationFrame(resolve));
    if (last) intervals.push(t - last);
    last = t;
    const t0 = performance.now();
    view.paint({ session: null, t0, seq: i + 1 }, [{ rects: frame.rects.slice(), meta: frame.meta }, layers]);
    paint.push(performance.now() - t0);
  }
  self.postMessage({ paint, intervals });
};
