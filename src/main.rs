//! `sightline`: the analyses of the viewer, in a terminal, for CI gates and traces too big for a tab.

// The CLI is native (its server runs on tokio and hyper, which have no wasm32 build); the browser
// tests' wasm32 build still builds this binary, empty there.
#[cfg(not(target_arch = "wasm32"))]
mod cli;

#[cfg(not(target_arch = "wasm32"))]
use std::process::ExitCode;

#[cfg(not(target_arch = "wasm32"))]
const USAGE: &str = "\
sightline: reads PyTorch profiler traces (.json or .json.gz)

usage: sightline COMMAND FILE [options]

commands:
  summary FILE [--json]   what the trace holds: events, lanes, devices, diagnostics, parse speed
  ops FILE [--json] [--by-shape] [--path] [--sort COLUMN] [--top N]
                          the operator table as PyTorch prints key_averages(): calls, self and
                          total CPU and device time (headed CUDA, XPU, MTIA as PyTorch heads
                          them), memory; --by-shape groups by Input Dims too; --sort takes a
                          JSON field or PyTorch's sort_by name (default: self device time when
                          device time was charged, else self CPU); --top defaults to 30 in
                          text, all rows in JSON; --path adds each row's time on the steps'
                          critical paths and its slack (on_path_us, slack_us)
  kernels FILE [--json] [--path] [--top N]
                          device ops by name: calls, total/avg/min/median/max, share of device
                          time, kind, Tensor Cores (CUDA), occupancy, grid/block variants,
                          launching operators; --path as for ops
  labels FILE [--json] [--top N]
                          record_function labels: calls, CPU total/self, device time launched
                          inside, per-instance min/median/max, their spans on the device
  path FILE... [--step NAME] [--annotation NAME --instance K] [--what-if EDIT]... [--json]
                          the critical path of each step (one trace per rank): what bounds it
                          (CPU, data loading, syncs, device compute, communication, launch and
                          kernel-kernel overhead), and --what-if 'NAME=0' / 'NAME*F' /
                          'rankR:NAME=0' (NAME: a slice name with * globs, DataLoader, kernels,
                          memcpy, communication) replayed to predict each step's time
  modules FILE [--json] [--top N]
                          nn.Module hierarchy (with_modules=True): calls, host total/self,
                          device time launched inside each module and outside its children
  idle FILE [--json] [--compat hta] [--top N]
                          device idle time: HTA's temporal and per-stream breakdowns, the idle
                          gaps of each device and what the CPU thread that ended each one was
                          doing
  steps FILE [--json]     ProfilerStep#N spans with the TensorBoard plugin's time breakdown,
                          device utilization, step statistics
  memory FILE [--json] [--points N] [--at US] [--allocations] [--top N]
                          memory per device (profile_memory=True): peak allocated and reserved,
                          what held the peak by operator and Python frame, the least allocated
                          per step, the curve in N points (min/max per bucket, default 100),
                          what was live at a time (--at, µs), every allocation (--allocations)
  flops FILE [--json] [--top N]
                          per op and shape (record_shapes=True): GFLOPs and bytes per call as
                          TraceLens defines them, kernel time, achieved TFLOP/s and TB/s,
                          arithmetic intensity, compute- or memory-bound and % of the roof of
                          the device in deviceProperties
  report FILE [--json] [--compat hta] [--top N]
                          everything: findings (with evidence), steps, idle time and its causes
  diff BASE NEW [--json] [--per-step|--total] [--by-shape] [--top N] [--fail-if EXPR]...
                          before and after: operators, device ops (matched through their launching
                          operator across hardware), labels, steps, idle time and findings, per
                          step unless --total; each --fail-if (step_time>+5%,
                          op:aten::copy_.self_cpu>+10%, finding:pageable_memcpy; see README)
                          that holds exits 1. BASE and NEW may be digests (below)
  digest FILE             the trace's digest as JSON: the compact analyses diff compares
  ranks PATH... [--json] [--align auto|none|collectives]
                          the traces of one distributed job (files or folders): per-rank table,
                          collectives matched across ranks (wait, transfer, bus bandwidth),
                          HTA's communication-computation overlap, stragglers per step; --align
                          aligns clocks on matched collectives (auto: only across hosts)
  serve [LOGDIR] [--port N] [--host H]
                          the page and LOGDIR's runs (tensorboard_trace_handler folders) over
                          HTTP at http://127.0.0.1:6006/: pick a worker, a run (its ranks) or two
                          runs to compare; --port 0 picks a free port; --host 0.0.0.0 shares the
                          traces with other machines (see README)

Every command takes --full-names: names are given whole (by default a name past 64 KiB, which
no profiler writes, is cut in text and JSON).

Exit status: 0 for a trace (also a damaged one), 1 when a diff --fail-if condition holds, 2 when
the input is not a trace or the command line is wrong.";

/// `sightline report x | head` closes stdout early; Rust ignores SIGPIPE, so `println!` panics on
/// the broken pipe. That is the reader saying "enough", not an error: exit quietly.
#[cfg(not(target_arch = "wasm32"))]
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> ExitCode {
    quiet_broken_pipe();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // Global: every command's outputs give names whole (by default a name past 64 KiB is cut).
    let before = args.len();
    args.retain(|a| a != "--full-names");
    cli::set_full_names(args.len() != before);
    let Some((cmd, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if matches!(cmd.as_str(), "-h" | "--help" | "help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    // diff reads two files and repeated options; it parses its own command line.
    if cmd == "diff" {
        return match cli::diff::run(rest) {
            Ok(false) => ExitCode::SUCCESS,
            Ok(true) => ExitCode::from(1),
            Err(e) => {
                eprintln!("sightline: {e}");
                ExitCode::from(2)
            }
        };
    }
    // `serve` (an optional LOGDIR, runs until stopped), `path` (several files, repeated --what-if)
    // and `ranks` (many paths) parse their own command lines.
    type Run = fn(&[String]) -> Result<(), String>;
    let own: Option<Run> = match cmd.as_str() {
        "serve" => Some(cli::serve::run),
        "path" => Some(cli::path::run),
        "ranks" => Some(cli::ranks::run),
        _ => None,
    };
    if let Some(run) = own {
        return match run(rest) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                let who = if cmd == "serve" {
                    "sightline serve"
                } else {
                    "sightline"
                };
                eprintln!("{who}: {e}");
                ExitCode::from(2)
            }
        };
    }
    let opts = match cli::Opts::parse(rest) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sightline: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match cmd.as_str() {
        "summary" => cli::summary::run(&opts),
        "ops" => cli::ops::run(&opts),
        "kernels" => cli::kernels::run(&opts),
        "labels" => cli::labels::run(&opts),
        "modules" => cli::modules::run(&opts),
        "memory" => cli::memory::run(&opts),
        "flops" => cli::flops::run(&opts),
        "idle" => cli::idle::run(&opts),
        "steps" => cli::steps::run(&opts),
        "report" => cli::report::run(&opts),
        "digest" => cli::digest::run(&opts),
        other => Err(format!("unknown command '{other}'\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sightline: {e}");
            ExitCode::from(2)
        }
    }
}
