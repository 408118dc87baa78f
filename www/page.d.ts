// The page's globals, for the page's modules only (tsconfig.json; the workers, checked with
// tsconfig.worker.json, have no window). Read by `tsc --noEmit` only; nothing ships it.

interface Window {
  /** The page's one context (js/context.js), for tests and benchmarks: app.js sets it. */
  sightline: import("./js/context.js").PageContext;
  /** Set once app.js has run to its end (tests wait for it). */
  sightlineReady: boolean;
}
