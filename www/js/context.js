// The page's one application context: what app.js makes once and hands to every feature
// (memory, modules, graphs, compiled, critical path, snapshots, links, embedding, comparison,
// ranks, LOGDIR), in place of a bag of hooks per feature. Features add the state they own
// (`cx.compare`, `cx.ranks`, ...), and the page sets it as `window.sightline` for tests and
// benchmarks, so there is one object to read. Types only: app.js builds it.

/**
 * A trace shown on the page: its worker, the session's calls, its name, the summary its load
 * ended with, and the address it was opened from (null for a file).
 * @typedef {Object} ActiveTrace
 * @property {import("./worker/client.js").SessionWorker} worker
 * @property {import("./worker/client.js").SessionClient} session
 * @property {string} name
 * @property {import("../generated/answers.js").Summary} summary
 * @property {string | null} url
 * @property {{ name: string } & import("../generated/answers.js").CaptureMatch} [capture] the capture
 *   file whose graphs name the replays (graphs-view.js), and what it matched
 */

/**
 * The shown trace and the loads, as app.js keeps them.
 * @typedef {Object} AppState
 * @property {ActiveTrace | null} active the shown trace
 * @property {any} loading the worker of the load in progress, or null
 * @property {number} loadToken bumped to cancel or supersede a load in progress
 * @property {any} timings figures of the last load, for tests and benchmarks
 * @property {string} tab the tab shown under the timeline
 * @property {Record<string, Promise<any>>} tables the shown trace's tables by tab, made when first opened
 * @property {boolean} opsByShape
 * @property {any} range the range table of a dragged time range, or null
 */

/**
 * @typedef {Object} PageContext
 * @property {AppState} app
 * @property {import("./timeline.js").TimelineView} view
 * @property {import("./worker/client.js").Bindings} bindings
 * @property {import("./load.js").Workers} workers
 * @property {string} version
 * @property {string} wasmBuild the build the page runs: simd128 or plain (wasm-choice.js)
 * @property {(lane: number, index: number) => void} pick selects a slice
 * @property {(err: any, name?: string) => void} fail shows an error; the page stays usable
 * @property {(t0: number, t1: number) => void} showRange shows a time span on the timeline
 * @property {(kind: string) => Promise<any>} tableOf a table of the shown trace, parsed, computed on first use
 * @property {(host: HTMLElement, kind: string, render: (table: any) => void) => Promise<void>} withTable
 *   renders a tab from its table once the worker has it
 * @property {(name: string) => Promise<void>} highlight the slices of a name on the timeline
 * @property {() => void} showTabs
 * @property {(loaded: any) => any} captured
 * @property {(href: string, startedAt?: number) => Promise<void>} openUrl
 * @property {(name: string, buffer: ArrayBuffer, startedAt?: number) => any} openBuffer
 * @property {(file: File, startedAt?: number) => any} openFile
 * @property {(state: string) => void} setState
 * @property {() => void} stopLoading
 * @property {boolean} openAddress whether what the address asks to open is to be opened
 * @property {any} [memory] memory.js's controller
 * @property {any} [modules]
 * @property {any} [graphs]
 * @property {any} [compiled]
 * @property {any} [critical] critical.js's controller
 * @property {any} [snapshots] snapshot.js's controller
 * @property {any} [compare] compare.js's state
 * @property {any} [ranks] ranks.js's state
 * @property {any} [logdir] logdir.js's state
 * @property {any} [snapshot] snapshot.js's state
 * @property {any} [snapshotDiff] snapshot-diff.js's state
 */

export {};
