//! Analyses: everything computed from a [`crate::model::Trace`] for the tables, charts and findings.
//!
//! Each analysis is a pure function of the model returning a serde-serializable structure; the CLI
//! prints it and the viewer renders the same structure, so the numbers on the page and in the
//! terminal are one computation. Definitions follow what users compare against (PyTorch's
//! `key_averages()`, HTA, the TensorBoard plugin, TraceLens), as each module's doc writes them
//! down; anything beyond them says how it is computed.
//!
//! What is derived from one loaded trace has one owner, [`derived::Derived`]: each result computed
//! once, on first use, from the others it needs, and kept. The CLI's commands, `sightline mcp`, the
//! Python `Trace` and the page's session each hold one and ask it. The long analyses are `async
//! fn`s that pause where a [`slicing::Slicer`] says, so the page draws frames between their slices;
//! their one-go forms are the same code run without pauses.
//!
//! Files (each folder's own doc lists its files):
//! - `derived`: the store above. One-go getters (`links`, `steps`, `forest`, `flops`, `idle`,
//!   `found`, `findings`, `critical`, `path`, `memory`, `digest`, ...) and `*_sliced` getters that
//!   fill the same cells; results that depend on options (idle time's mode and gap count) kept per
//!   value. `Sync` when its trace is; it holds the trace owned, lent or shared.
//! - `slicing`: analyses that pause and resume without a clock or threads ([`slicing::Slicer`],
//!   `block_on`, `poll_once`, `each` for the hottest passes, a sliced stable `sort_by_key`).
//! - `summary`: events by phase and category, lanes, devices, model size, damage (`diagnostics`)
//!   and `observations`, each with an explanation; how texts name the devices (`devices_word`,
//!   `device_name`: `MTIA 0`, `XPU 0`; `GPU` for CUDA and ROCm and where nothing names it).
//! - `launch`: the one kernel-to-launcher rule (a device op's launch call by correlation, else by
//!   an `ac2g` flow; its launcher the innermost operator, else annotation, around the call, else
//!   the operator with its External id). `links` applies it on slices, `tables::launch` on the
//!   tree's nodes, so both always agree.
//! - `links`: each GPU op to its launch call, its operator and its `record_function` label; the
//!   parent tables of CPU lanes. Built once per trace (O(n log n)) and read by most analyses.
//! - `steps`: `ProfilerStep#N` extended to its GPU work, the TensorBoard plugin's priority
//!   breakdown, GPU utilization, step statistics (MTIA's DMA transfers count as memcpy).
//! - `idle`: HTA's temporal and per-stream idle breakdowns (exact in ns, or `Mode::Hta` matching
//!   HTA 0.5.0 to the microsecond), each device's gaps, and what the launching CPU thread did
//!   during each ("who waits for whom").
//! - `graphs`: CUDA/HIP graph replays (each graph's launches, replayed ops, device and launch
//!   time, instantiations) and, with the trace recorded while they were captured, the operator
//!   that issued each replayed op, paired as TraceLens' capture merge pairs them.
//! - `compiled`: `torch.compile` read from its names (`Torch-Compiled Region: F/C`, `## Call
//!   CompiledFxGraph H ##`, `CompiledFunction[Backward]`, `triton_*`/`cpp_fused_*` kernels and the
//!   operators their names fuse, `dynamo_timed` compile ranges): per frame the compile ids and
//!   the steps they ran in, per graph its kernels, and the eager operators between a region and
//!   the resume regions Dynamo runs inside it after a graph break.
//! - `backend`: which runtime a device runs on for advice (CUDA, ROCm/HIP, other) and the phrases
//!   that differ by it (graph APIs, `ProfilerActivity`, allocator settings, the operator table's
//!   `Self CUDA`/`Self XPU`/`Self MTIA` heading).
//! - `origin`: where a slice runs, in words a finding quotes (the `nn.Module` class or instance,
//!   the `record_function` range, the Python frame).
//! - `digest`: the per-trace digest, the interface between single-trace and cross-trace analyses
//!   (see its doc); built from the analyses `Derived` keeps.
//! - `columns`: the tables' columns declared once beside each row type (key, label, unit, type,
//!   meaning, default sort), which the CLI's text, the page, Python's Arrow schema and
//!   `docs/columns.md` are laid out from.
//! - `tables/`: the operator table (`key_averages()`), kernel, label and `nn.Module` tables and the
//!   call tree, all from one `Forest`. `findings/`: the rules, their evidence and the what-if
//!   edits that price their fixes. `flops/`: FLOPs, bytes and the roofline. `memory/`: memory over
//!   time, its holders, the allocation table. `critical/`: each step's critical path, what-if
//!   replays, findings' savings. `diff/`: two digests compared, CI gates. `ranks/`: the ranks of
//!   one distributed job, from their digests.

pub mod backend;
pub mod columns;
pub mod compiled;
pub mod critical;
pub mod derived;
pub mod diff;
pub mod digest;
pub mod findings;
pub mod flops;
pub mod graphs;
pub mod idle;
pub mod launch;
pub mod links;
pub mod memory;
pub mod origin;
pub mod ranks;
pub mod slicing;
pub mod steps;
pub mod summary;
pub mod tables;
