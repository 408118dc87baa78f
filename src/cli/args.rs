//! The command line, declared once (clap's derive): every command, its arguments and their help.
//! `sightline --help`, `sightline CMD --help`, the errors for an unknown flag or a missing value
//! (with a suggestion, exit 2) and `sightline completions SHELL` all come from these types; the
//! commands receive them parsed and checked.

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use sightline::analysis::critical::whatif::Edit;
use sightline::analysis::diff::gate::Condition;
use sightline::analysis::ranks::Align;
use sightline::analysis::tables::OpColumn;
use sightline::query::FromText;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "sightline",
    version,
    about = "sightline: reads PyTorch profiler traces (.json or .json.gz)",
    after_help = "Exit status: 0 for a trace (also a damaged one), 1 when a diff --fail-if \
                  condition holds, 2 when the input is not a trace or the command line is wrong.",
    arg_required_else_help = true,
    // An option given twice keeps the last value, as before the grammar was declared.
    args_override_self = true
)]
pub struct Cli {
    /// Give names whole: by default a name past 64 KiB (no profiler writes one) is cut in text
    /// and JSON
    #[arg(long, global = true)]
    pub full_names: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// What the trace holds: events, lanes, devices, diagnostics, parse speed
    Summary(Trace),
    /// The operator table as PyTorch prints key_averages() (device columns headed CUDA, XPU, ...)
    #[command(
        long_about = "The operator table as PyTorch prints key_averages(): calls, self and total \
                      CPU and device time (headed CUDA, XPU, MTIA as PyTorch heads them), memory."
    )]
    Ops(OpsArgs),
    /// Device ops by name: time, share, kind, Tensor Cores (CUDA), occupancy, launching operators
    #[command(
        long_about = "Device ops by name: calls, total/avg/min/median/max, share of device time, \
                      kind, Tensor Cores (CUDA), occupancy, grid/block variants, launching operators."
    )]
    Kernels(KernelsArgs),
    /// record_function labels: calls, CPU total/self, device time launched inside
    #[command(
        long_about = "record_function labels: calls, CPU total/self, device time launched inside, \
                      per-instance min/median/max, their spans on the device."
    )]
    Labels(Listed),
    /// torch.compile: compiled frames, graphs, Inductor kernels, compile work, graph breaks
    #[command(
        long_about = "torch.compile as the trace records it: compiled frames (Torch-Compiled \
                      Region F/C) and the steps each compile id ran in, each compiled graph with \
                      its calls, CPU and device time, Inductor kernels (kind, fused operators) and \
                      the eager operators they replaced, compile and autotuning work, and the \
                      eager operators between regions after a graph break."
    )]
    Compiled(Trace),
    /// The critical path of each step (one trace per rank) and what-if predictions
    #[command(
        long_about = "The critical path of each step (one trace per rank): what bounds it (CPU, \
                      data loading, syncs, device compute, communication, launch and kernel-kernel \
                      overhead), and --what-if edits replayed to predict each step's time."
    )]
    Path(PathArgs),
    /// nn.Module hierarchy (with_modules=True): calls, host and device time
    #[command(
        long_about = "nn.Module hierarchy (with_modules=True): calls, host total/self, device time \
                      launched inside each module and outside its children."
    )]
    Modules(ModulesArgs),
    /// Device idle time: HTA's breakdowns, the gaps and what the CPU was doing
    #[command(
        long_about = "Device idle time: HTA's temporal and per-stream breakdowns, the idle gaps of \
                      each device and what the CPU thread that ended each one was doing."
    )]
    Idle(IdleArgs),
    /// ProfilerStep#N spans with the TensorBoard plugin's time breakdown
    #[command(
        long_about = "ProfilerStep#N spans with the TensorBoard plugin's time breakdown, device \
                      utilization, step statistics."
    )]
    Steps(Trace),
    /// A memory snapshot (torch.cuda.memory._dump_snapshot): peak, what holds it, segments, oom
    #[command(
        long_about = "A memory snapshot as torch.cuda.memory._dump_snapshot writes it (a pickle, \
                      plain or gzip; only its data is read, a pickle that names code is refused): \
                      per device the peak of live bytes (a replay of alloc and free_completed) and \
                      what is live at it by first user frame, file and line, file, annotation, \
                      category and compile context; the segments as _memory_viz segsum counts \
                      them; each oom explained. Given two files, what changed from the first to \
                      the second by the same groupings."
    )]
    Snapshot(SnapshotArgs),
    /// Memory per device (profile_memory=True): peak, holders, curve, live allocations
    #[command(
        long_about = "Memory per device (profile_memory=True): peak allocated and reserved, what \
                      held the peak by operator and Python frame, the least allocated per step, the \
                      curve in N points (min/max per bucket), what was live at a time, every \
                      allocation."
    )]
    Memory(MemoryArgs),
    /// Per op and shape (record_shapes=True): FLOPs, bytes, TFLOP/s, roofline
    #[command(
        long_about = "Per op and shape (record_shapes=True): GFLOPs and bytes per call as \
                      TraceLens defines them, kernel time, achieved TFLOP/s and TB/s, arithmetic \
                      intensity, compute- or memory-bound and % of the roof of the device in \
                      deviceProperties."
    )]
    Flops(Listed),
    /// Graph replays (cudaGraphLaunch, hipGraphLaunch): launches, replayed ops; --capture names them
    #[command(
        long_about = "CUDA/HIP graph replays (cudaGraphLaunch, hipGraphLaunch): each graph's \
                      launches, ops per replay, device time and launch CPU time, instantiations. \
                      With --capture FILE (the trace recorded while the graphs were captured), the \
                      operator that issued each replayed op, as TraceLens' capture merge pairs them."
    )]
    Graphs(GraphsArgs),
    /// Everything: findings (with evidence), steps, idle time and its causes
    Report(ReportArgs),
    /// Before and after: operators, device ops, labels, steps, idle time, findings
    #[command(
        long_about = "Before and after: operators, device ops (matched through their launching \
                      operator across hardware), labels, steps, idle time and findings, per step \
                      unless --total. BASE and NEW may be digests (sightline digest)."
    )]
    Diff(DiffArgs),
    /// The trace's digest as JSON: the compact analyses diff compares
    Digest(DigestArgs),
    /// The traces of one distributed job (files or folders), side by side
    #[command(
        long_about = "The traces of one distributed job (files or folders, searched for *.json and \
                      *.json.gz): per-rank table, collectives matched across ranks (wait, \
                      transfer, bus bandwidth), HTA's communication-computation overlap, \
                      stragglers per step."
    )]
    Ranks(RanksArgs),
    /// The page and LOGDIR's runs over HTTP at http://127.0.0.1:6006/
    #[command(
        long_about = "The page and LOGDIR's runs (tensorboard_trace_handler folders) over HTTP at \
                      http://127.0.0.1:6006/: pick a worker, a run (its ranks) or two runs to \
                      compare. LOGDIR may be a folder, s3://bucket/prefix or gs://bucket/prefix."
    )]
    Serve(ServeArgs),
    /// A Model Context Protocol server on stdin/stdout: the analyses as tools for coding agents
    #[command(
        long_about = "A Model Context Protocol server on stdin/stdout: the analyses as tools for \
                      coding agents (open, runs, summary, report, ops, kernels, labels, compiled, \
                      modules, flops, idle, steps, step, path with what-if, memory, graphs, \
                      ranks, diff), each answering \
                      the JSON of its command's --json. Add it to a client as the command \
                      `sightline mcp` (see docs/mcp.md)."
    )]
    Mcp(McpArgs),
    /// A completion script for a shell, on stdout
    #[command(
        long_about = "A completion script for a shell, on stdout. Bash: `sightline completions \
                      bash > ~/.local/share/bash-completion/completions/sightline`; zsh: into a \
                      folder of $fpath as _sightline; fish: \
                      `sightline completions fish > ~/.config/fish/completions/sightline.fish`."
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// One trace, and text or JSON.
#[derive(Args)]
pub struct Trace {
    /// A trace as torch.profiler writes it (.json or .json.gz)
    #[arg(value_name = "FILE")]
    pub file: String,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

/// A trace and how many rows to print.
#[derive(Args)]
pub struct Listed {
    #[command(flatten)]
    pub trace: Trace,
    /// The first N rows only (default: all)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

#[derive(Args)]
pub struct OpsArgs {
    #[command(flatten)]
    pub trace: Trace,
    /// Group by input shape (Input Dims) too
    #[arg(long)]
    pub by_shape: bool,
    /// Add each row's time on the steps' critical paths and its slack (on_path_us, slack_us)
    #[arg(long)]
    pub path: bool,
    /// Sort by a JSON field or PyTorch's sort_by name (default: self device time when device
    /// time was charged, else self CPU)
    #[arg(long, value_name = "COLUMN", value_parser = OpColumn::from_text)]
    pub sort: Option<OpColumn>,
    /// The first N rows only (default: 30 in text, all in JSON)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// The trace recorded while the CUDA/HIP graphs this trace replays were captured: their
    /// replayed ops are charged to the operators that issued them (rows with no CPU time;
    /// default: one found beside the trace; none: no capture)
    #[arg(long, value_name = "FILE")]
    pub capture: Option<String>,
}

#[derive(Args)]
pub struct ModulesArgs {
    #[command(flatten)]
    pub listed: Listed,
    /// The trace recorded while the CUDA/HIP graphs this trace replays were captured: a replayed
    /// op is charged to the modules around the call that issued it (default: one found beside
    /// the trace; none: no capture)
    #[arg(long, value_name = "FILE")]
    pub capture: Option<String>,
}

#[derive(Args)]
pub struct GraphsArgs {
    #[command(flatten)]
    pub trace: Trace,
    /// The trace recorded while the graphs were captured (StreamBeginCapture ... EndCapture;
    /// default: one found beside the trace, in capture_traces/ or named *capture*; none: no capture)
    #[arg(long, value_name = "FILE")]
    pub capture: Option<String>,
    /// The first N captured operators only (default: 20 in text)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

#[derive(Args)]
pub struct KernelsArgs {
    #[command(flatten)]
    pub listed: Listed,
    /// Add each kernel's time on the steps' critical paths and its slack
    #[arg(long)]
    pub path: bool,
    /// The trace recorded while the CUDA/HIP graphs this trace replays were captured: a replayed
    /// kernel is launched by the operator that issued it (default: one found beside the trace;
    /// none: no capture)
    #[arg(long, value_name = "FILE")]
    pub capture: Option<String>,
}

/// How a breakdown is counted: Sightline's exact figures, or HTA's.
#[derive(Clone, Copy, ValueEnum)]
pub enum Compat {
    /// As HTA 0.5.0 computes it
    Hta,
}

#[derive(Args)]
pub struct IdleArgs {
    #[command(flatten)]
    pub trace: Trace,
    /// Count as HTA does
    #[arg(long, value_enum, value_name = "TOOL")]
    pub compat: Option<Compat>,
    /// The N longest gaps of each device one by one (default 10)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

#[derive(Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub trace: Trace,
    /// Count idle time as HTA does
    #[arg(long, value_enum, value_name = "TOOL")]
    pub compat: Option<Compat>,
    /// The first N operators (default 15) and idle gaps (default 10)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// The trace recorded while the CUDA/HIP graphs this trace replays were captured: their
    /// replayed ops are charged to the operators that issued them, as in `ops` (default: one
    /// found beside the trace; none: no capture)
    #[arg(long, value_name = "FILE")]
    pub capture: Option<String>,
}

#[derive(Args)]
pub struct SnapshotArgs {
    /// The snapshot (.pickle or .pickle.gz), or BASE when NEW follows
    #[arg(value_name = "FILE")]
    pub file: String,
    /// A second snapshot: print what changed from FILE to it
    #[arg(value_name = "NEW")]
    pub new: Option<String>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// The N largest groups of each kind (default 10)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

#[derive(Args)]
pub struct MemoryArgs {
    #[command(flatten)]
    pub trace: Trace,
    /// The curve in N points, min/max per bucket (default 100)
    #[arg(long, value_name = "N")]
    pub points: Option<usize>,
    /// What was live at this time, in µs from the trace start
    #[arg(long, value_name = "US", value_parser = micros, allow_negative_numbers = true)]
    pub at: Option<f64>,
    /// Every allocation: address, size, allocated and freed at and by, lifetime
    #[arg(long)]
    pub allocations: bool,
    /// The N largest holders and live allocations (default 10)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

#[derive(Args)]
pub struct PathArgs {
    /// Traces, one per rank of a job (joined at their collectives) or unrelated ones
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<String>,
    /// Only the step of this name (ProfilerStep#N)
    #[arg(long, value_name = "NAME")]
    pub step: Option<String>,
    /// Instances of this record_function label as the steps
    #[arg(long, value_name = "NAME")]
    pub annotation: Option<String>,
    /// Which instance of --annotation, counted from 0 (default 0)
    #[arg(long, value_name = "K", requires = "annotation")]
    pub instance: Option<usize>,
    /// Follow the path as HTA does (one trace at a time)
    #[arg(long, value_enum, value_name = "TOOL")]
    pub compat: Option<Compat>,
    /// 'NAME=0' (removed), 'NAME*F' (scaled) or 'rankR:NAME=0'; NAME is a slice name with *
    /// globs, DataLoader, kernels, memcpy, pageable or communication. Repeat to combine.
    #[arg(long = "what-if", value_name = "EDIT", value_parser = Edit::parse)]
    pub what_if: Vec<Edit>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// The trace recorded while the CUDA/HIP graphs of the (one) FILE were captured: a replayed
    /// op's segment names the operator that issued it (captured_by) (default: each FILE's
    /// capture found beside it; none: no capture)
    #[arg(long, value_name = "FILE")]
    pub capture: Option<String>,
}

#[derive(Args)]
pub struct DiffArgs {
    /// The trace (or digest) before
    #[arg(value_name = "BASE")]
    pub base: String,
    /// The trace (or digest) after
    #[arg(value_name = "NEW")]
    pub new: String,
    /// Print JSON instead of tables
    #[arg(long)]
    pub json: bool,
    /// Each side divided by its active steps (the default)
    #[arg(long, conflicts_with = "total")]
    pub per_step: bool,
    /// Totals over the traces instead of per step
    #[arg(long)]
    pub total: bool,
    /// Match operators by input shape too
    #[arg(long)]
    pub by_shape: bool,
    /// The first N rows of each table (default 15 in text, all in JSON)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Exit 1 when this holds: step_time>+5%, op:aten::copy_.self_cpu>+10%,
    /// finding:pageable_memcpy (see docs/cli.md). Repeat for several.
    #[arg(long = "fail-if", value_name = "EXPR", value_parser = Condition::parse)]
    pub fail_if: Vec<Condition>,
}

#[derive(Args)]
pub struct DigestArgs {
    /// A trace as torch.profiler writes it (.json or .json.gz)
    #[arg(value_name = "FILE")]
    pub file: String,
    /// A digest is JSON already: taken, as every command takes it, and changes nothing
    #[arg(long, hide = true)]
    pub json: bool,
}

#[derive(Args)]
pub struct RanksArgs {
    /// Trace files or folders (searched recursively)
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON instead of tables
    #[arg(long)]
    pub json: bool,
    /// Align clocks on matched collectives: auto (only across hosts), none or collectives
    #[arg(long, value_name = "HOW", default_value = "auto", value_parser = align)]
    pub align: Align,
    /// Communication-computation overlap over every device op, not HTA's steps
    #[arg(long)]
    pub whole_trace: bool,
}

/// `sightline serve`'s port when none is given: TensorBoard's.
pub const DEFAULT_PORT: u16 = 6006;

#[derive(Args)]
pub struct ServeArgs {
    /// A folder of tensorboard_trace_handler runs, s3://bucket/prefix or gs://bucket/prefix
    /// (without it, the page alone)
    #[arg(value_name = "LOGDIR")]
    pub logdir: Option<String>,
    /// The port (0 picks a free one)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PORT, value_parser = port)]
    pub port: u16,
    /// The address to listen on; 0.0.0.0 shares the traces with other machines (see docs/serve.md)
    #[arg(long, value_name = "H", default_value = "127.0.0.1")]
    pub host: String,
    /// Seconds a request has to list LOGDIR or open a file before it is answered 503 (a network
    /// mount that stopped answering fails its requests, not the server)
    #[arg(long, value_name = "S", default_value = "30", value_parser = seconds)]
    pub deadline: std::time::Duration,
}

#[derive(Args)]
pub struct McpArgs {
    /// Seconds a call has before it is answered with an error (a report on a 2 GB trace takes
    /// seconds; past this, a network mount is stuck or the trace is beyond a conversation's use)
    #[arg(long, value_name = "S", default_value = "600", value_parser = seconds)]
    pub deadline: std::time::Duration,
}

/// A positive number of seconds, fractions allowed.
fn seconds(text: &str) -> Result<std::time::Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 1e9)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("'{text}': seconds, a number above 0"))
}

fn micros(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| "a time in µs from the trace start".to_string())
}

fn align(v: &str) -> Result<Align, String> {
    Align::parse(v).ok_or_else(|| "--align takes auto, none or collectives".to_string())
}

fn port(v: &str) -> Result<u16, String> {
    v.parse()
        .map_err(|_| "a port number from 0 to 65535 (0 picks a free one)".to_string())
}

/// Ends the process for a command line that did not parse. `--help` and `--version` print and
/// exit 0 (and no command at all prints the help, exit 2), as clap does; a wrong command line
/// exits 2 with what is wrong, clap's suggestion and the usage on one line, as every other error
/// of the CLI is one line (scripts and CI logs grep it).
pub fn exit_with(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit()
    }
    eprintln!("sightline: {}", one_line(&e.render().to_string()));
    std::process::exit(2)
}

/// clap's error text (`error: ...`, a blank line, `  tip: ...`, the usage, "For more information")
/// joined into one line.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    let parts = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l));
    for part in parts {
        if !out.is_empty() {
            // "...were not provided:" goes on with the arguments it lists.
            out.push_str(if out.ends_with(':') { " " } else { "; " });
        }
        out.push_str(part);
    }
    out
}

/// The whole grammar, with the top-level help's list of commands made from it: each command's
/// name, its positional arguments as a user types them (`diff BASE NEW`, `ranks PATH...`,
/// `serve [LOGDIR]`) and its one-line description.
pub fn command() -> clap::Command {
    let cmd = Cli::command();
    let rows: Vec<(String, String)> = cmd
        .get_subcommands()
        .map(|sub| {
            let mut left = sub.get_name().to_string();
            for a in sub.get_positionals() {
                let name = a
                    .get_value_names()
                    .and_then(|v| v.first())
                    .map_or_else(|| a.get_id().to_string().to_uppercase(), |v| v.to_string());
                let many = matches!(a.get_action(), clap::ArgAction::Append);
                let shown = format!("{name}{}", if many { "..." } else { "" });
                left.push(' ');
                left.push_str(
                    &if a.is_required_set() || !a.get_default_values().is_empty() {
                        shown
                    } else {
                        format!("[{shown}]")
                    },
                );
            }
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            (left, about)
        })
        .collect();
    let width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 2;
    let list: Vec<String> = rows
        .iter()
        .map(|(l, a)| format!("  {l:<width$}{a}"))
        .collect();
    let template = format!(
        "{{about}}\n\n{{usage-heading}} {{usage}}\n\nCommands (sightline COMMAND --help for its \
         options):\n{}\n  help                   this, or a command's help\n\nOptions:\n{{options}}\
         {{after-help}}",
        list.join("\n")
    );
    cmd.help_template(template)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn the_help_lists_every_command_with_its_arguments() {
        let help = command().render_help().to_string();
        for line in [
            "summary FILE",
            "diff BASE NEW",
            "ranks PATH...",
            "path FILE...",
            "serve [LOGDIR]",
            "completions SHELL",
        ] {
            assert!(help.contains(line), "{line} is not in:\n{help}");
        }
    }

    #[test]
    fn a_usage_error_is_one_line() {
        let e = command()
            .try_get_matches_from(["sightline", "report", "t.json", "--jsn"])
            .err()
            .unwrap();
        let line = one_line(&e.render().to_string());
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with("unexpected argument '--jsn' found; tip: a similar argument exists: '--json'; Usage: sightline report"),
            "{line}"
        );
    }

    #[test]
    fn serve_options_parse_as_before() {
        let parse = |args: &[&str]| {
            let argv = ["sightline", "serve"].iter().chain(args);
            match command().try_get_matches_from(argv) {
                Ok(m) => {
                    use clap::FromArgMatches;
                    match Cli::from_arg_matches(&m).map(|c| c.command) {
                        Ok(Command::Serve(s)) => Ok((s.logdir, s.port, s.host)),
                        _ => Err(()),
                    }
                }
                Err(_) => Err(()),
            }
        };
        assert_eq!(
            parse(&["log", "--port", "0"]),
            Ok((Some("log".into()), 0, "127.0.0.1".into()))
        );
        assert_eq!(
            parse(&["--host=0.0.0.0"]),
            Ok((None, DEFAULT_PORT, "0.0.0.0".into()))
        );
        assert!(parse(&["a", "b"]).is_err());
        assert!(parse(&["--port", "x"]).is_err());
        assert!(parse(&["--bogus"]).is_err());
    }
}
