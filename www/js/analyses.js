// The background analyses of an opened trace, run a slice at a time: each
// `Session::analyse_step()` call does a few ms of work in the worker and returns, so the frames
// the page asks for meanwhile (posted while a step runs) are drawn between two steps: calls run
// in the order they were made. Used by the page (app.js), a comparison's second trace
// (compare.js), the ranks of a job (ranks.js) and <sightline-trace>.

/** What decides whether the analyses run; a test may lower `memoryLimit` (bytes; 0: wasm32's 4 GiB). */
export const settings = { memoryLimit: 0 };

/** The analyses did not start: they would not fit in the worker's memory (the message says so). */
export class AnalysesTooLarge extends Error {}

/**
 * @typedef {object} AnalysesProgress
 * @property {number} steps
 * @property {string} phase
 * @property {string | null} last
 * @property {number[]} stepMs
 */

/**
 * Runs the analyses of `session`. `onAnalyses()` is awaited once the reports (steps, idle,
 * findings) are ready; resolves once the operator forest the tables read is built, or with
 * `until: "analyses"`, once the reports are ready (the forest is then not built).
 * `progress` (optional) is kept up to date for tests and benchmarks: `steps` (calls made),
 * `phase` ("analyses", then "tables"), `last` (what the last call returned: "" while a phase
 * is under way) and `stepMs` (each call, from posting it to its answer: with no frames asked
 * for meanwhile, its slice plus the round trip).
 * @param {import("./worker/client.js").SessionClient} session
 * @param {{ onAnalyses?: () => unknown, until?: string, progress?: AnalysesProgress | {} }} [options]
 */
export async function analyse(session, { onAnalyses, until = "tables", progress = {} } = {}) {
  const record = /** @type {AnalysesProgress} */ (Object.assign(progress, { steps: 0, phase: "analyses", last: null, stepMs: [] }));
  // A module out of memory stops dead, taking the timeline with it: analyses that would not fit
  // are not started (Session::analyses_room).
  const room = await session.analyses_room(settings.memoryLimit);
  if (room) throw new AnalysesTooLarge(room);
  for (;;) {
    const posted = performance.now();
    // 0: the Session's own slice size.
    const done = await session.analyse_step(0);
    record.stepMs.push(performance.now() - posted);
    record.steps++;
    record.last = done;
    if (done === "analyses") {
      record.phase = "tables";
      if (onAnalyses) await onAnalyses();
    }
    if (done === until || done === "tables") return;
  }
}
