//! `sightline mcp`: the analyses as tools of a Model Context Protocol server on stdin/stdout, for
//! coding agents (the official SDK, `rmcp`).
//!
//! A tool's parameters are a `sightline::query` request, the one its command asks, beside the
//! file it is about and, for a list, the page ([`OnFile`], [`Paged`]; the request's JSON Schema is
//! the tool's input schema). Each tool answers with the JSON its command prints with `--json`
//! (the same request's answer), as the text of the result. `step` (one step) is a question with
//! no command. Long lists are pages: `top` rows from `offset` (the CLI's
//! `--top` is the first page), and a second text block says how many rows there are and the next
//! offset. An answer past [`MAX_ANSWER_BYTES`] is refused with what to ask instead, so one call
//! cannot flood an agent's context. A failure (not a trace, a file that is not there or not a
//! regular file, an edit that matches nothing) is a result flagged `isError` whose text is the
//! CLI's message, which the agent reads and can act on; so is a call whose arguments do not fit
//! the tool's schema (the SDK's answer, as MCP's 2025-11-25 revision asks); an unknown tool is a
//! protocol error. The stream itself (lines that are not JSON, or too long; the end of stdin) is
//! [`stdio`]'s.
//!
//! Traces are parsed once per session: the server keeps the last [`KEPT_TRACES`] files asked
//! about with what was derived from them ([`sightline::analysis::derived::Derived`]), and parses
//! a file again only when its size or modification time changed.

use super::args::McpArgs;
use super::serve::listing::{self, HeaderRank};
use super::serve::store::{Local, Store};
use super::{graphs, json_text, load, ranks, snapshot, Loaded};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, ServerHandler};
use serde::Deserialize;
use sightline::analysis::critical::PathReport;
use sightline::query::{Compiled, Diff, Flops, Graphs, Idle, Kernels, Labels, Memory, Modules};
use sightline::query::{Opened, Ops, Path, Ranks, Report, Step, Steps, Summary};
use std::path::{Path as FilePath, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

mod stdio;

/// Traces kept parsed between calls; the least recently asked about goes first.
const KEPT_TRACES: usize = 4;
/// The rows of a list when the call does not say `top`.
const DEFAULT_ROWS: usize = 25;
/// The largest answer: about 50,000 tokens of JSON.
const MAX_ANSWER_BYTES: usize = 200_000;

pub fn run(opts: &McpArgs) -> Result<(), String> {
    stdio::serve(
        Sightline::new(opts.deadline),
        tokio::io::stdin(),
        tokio::io::stdout(),
    )
}

/// A trace file kept parsed, with what identifies its contents.
struct Kept {
    path: PathBuf,
    stamp: (u64, Option<SystemTime>),
    loaded: Arc<Loaded>,
}

/// The server: its tools and the traces this session has read.
#[derive(Clone)]
pub struct Sightline {
    tool_router: ToolRouter<Sightline>,
    kept: Arc<Mutex<Vec<Kept>>>,
    /// The longest a call may take (`mcp --deadline`).
    deadline: std::time::Duration,
}

/// The file's size and modification time: a trace written again is parsed again.
fn stamp(path: &FilePath) -> Result<(u64, Option<SystemTime>), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((meta.len(), meta.modified().ok()))
}

impl Sightline {
    pub fn new(deadline: std::time::Duration) -> Sightline {
        Sightline {
            tool_router: Self::tool_router(),
            kept: Arc::new(Mutex::new(Vec::new())),
            deadline,
        }
    }

    /// The trace at `file`, parsed now or kept from an earlier call.
    fn trace(&self, file: &str) -> Result<Arc<Loaded>, String> {
        let path = std::fs::canonicalize(file).map_err(|e| format!("{file}: {e}"))?;
        let stamp = stamp(&path)?;
        let lock = || self.kept.lock().unwrap_or_else(|e| e.into_inner());
        {
            let mut kept = lock();
            if let Some(i) = kept.iter().position(|k| k.path == path) {
                let k = kept.remove(i);
                if k.stamp == stamp {
                    let loaded = k.loaded.clone();
                    kept.push(k);
                    return Ok(loaded);
                }
            }
        }
        // Parsed without the lock: another call may ask about another trace meanwhile.
        let loaded = Arc::new(load(file)?);
        let mut kept = lock();
        kept.retain(|k| k.path != path);
        if kept.len() >= KEPT_TRACES {
            kept.remove(0);
        }
        kept.push(Kept {
            path,
            stamp,
            loaded: loaded.clone(),
        });
        Ok(loaded)
    }

    /// Runs `answer` off the async threads (parsing and analyses take seconds on a large
    /// trace) and makes its text the tool's result.
    async fn answer<F>(&self, answer: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Sightline) -> Result<Answer, String> + Send + 'static,
    {
        let me = self.clone();
        let deadline = self.deadline;
        let work = tokio::task::spawn_blocking(move || answer(&me));
        // A call past the deadline is answered; its thread is left to finish alone, one of the
        // pool's few, so a stuck call costs a thread, never the session.
        let out = match tokio::time::timeout(deadline, work).await {
            Ok(done) => done.map_err(|e| {
                ErrorData::internal_error(format!("the analysis failed: {e}"), None)
            })?,
            Err(_) => Err(format!(
                "no answer within {} s (`sightline mcp --deadline`): the file system did not \
                 answer, or the trace is too large for a call; the CLI has no such limit",
                deadline.as_secs_f64()
            )),
        };
        Ok(match out.and_then(Answer::blocks) {
            Ok(blocks) => CallToolResult::success(blocks),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        })
    }
}

/// A tool's answer: the JSON its command prints with `--json` (the same text: serialized from the
/// same value, keys in the same order), and what was left out of it.
struct Answer {
    json: String,
    notes: Vec<String>,
}

impl Answer {
    fn of<T: serde::Serialize>(value: &T) -> Result<Answer, String> {
        Ok(Answer {
            json: json_text(value)?,
            notes: Vec::new(),
        })
    }

    fn noted(mut self, note: Option<String>) -> Answer {
        self.notes.extend(note);
        self
    }

    /// The result's text blocks, or why the answer is not given.
    fn blocks(self) -> Result<Vec<ContentBlock>, String> {
        if self.json.len() > MAX_ANSWER_BYTES {
            return Err(format!(
                "the answer is {} KB of JSON, more than the {} KB a call returns: ask for fewer \
                 rows (top) or a narrower question",
                self.json.len() / 1000,
                MAX_ANSWER_BYTES / 1000
            ));
        }
        let mut blocks = vec![ContentBlock::text(self.json)];
        blocks.extend(self.notes.into_iter().map(ContentBlock::text));
        Ok(blocks)
    }
}

/// Cuts `rows` to the page of `top` rows (default [`DEFAULT_ROWS`]) from `offset`, and says so
/// when rows were left out: the first page is what `--json --top N` prints.
fn page<T>(
    rows: &mut Vec<T>,
    list: &str,
    offset: Option<usize>,
    top: Option<usize>,
) -> Option<String> {
    let total = rows.len();
    let offset = offset.unwrap_or(0);
    let from = offset.min(total);
    let to = from.saturating_add(top.unwrap_or(DEFAULT_ROWS)).min(total);
    rows.truncate(to);
    rows.drain(..from);
    if from == to && total > 0 {
        Some(format!(
            "{list}: no rows from offset {offset}; there are {total}"
        ))
    } else if from > 0 || to < total {
        let next = if to < total {
            format!("; the next page is offset={to}")
        } else {
            String::new()
        };
        Some(format!(
            "{list}: rows {from} to {} of {total}{next}",
            to - 1
        ))
    } else {
        None
    }
}

/// Each step path's `n` longest segments, kept in time order: a step's path has a segment per
/// slice it runs through, thousands in a step of small operators, and an agent asks what bounds
/// the step. `None` when no path had more.
fn longest_segments(report: &mut PathReport, n: usize) -> Option<String> {
    let mut most = 0;
    for p in &mut report.paths {
        let segments = &mut p.segments;
        most = most.max(segments.len());
        if segments.len() <= n {
            continue;
        }
        let mut order: Vec<usize> = (0..segments.len()).collect();
        let length = |i: usize| segments[i].end_us - segments[i].start_us;
        order.sort_by(|&a, &b| length(b).total_cmp(&length(a)));
        let mut keep = vec![false; segments.len()];
        for &i in order.iter().take(n) {
            keep[i] = true;
        }
        let mut i = 0;
        segments.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }
    (most > n).then(|| {
        format!(
            "each step's segments: its {n} longest (in time order) of up to {most}; ask with \
             segments=N for more"
        )
    })
}

/// A question about one trace file: the question's own fields beside `file`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct OnFile<Q> {
    /// A trace file as torch.profiler writes it (.json or .json.gz); a path on this machine
    pub file: String,
    #[serde(flatten)]
    pub question: Q,
}

/// Which rows of a long list an answer gives.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct Page {
    /// Rows per page (default 25)
    pub top: Option<usize>,
    /// The first row of the page, from 0
    pub offset: Option<usize>,
}

/// A question about one trace file whose answer is a list, given a page at a time.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct Paged<Q> {
    /// A trace file (.json or .json.gz)
    pub file: String,
    #[serde(flatten)]
    pub question: Q,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct ReportParams {
    /// A trace file (.json or .json.gz)
    pub file: String,
    #[serde(flatten)]
    pub question: Report,
    /// The first operator of the page, from 0
    pub offset: Option<usize>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct GraphsParams {
    /// A trace file (.json or .json.gz)
    pub file: String,
    /// The trace recorded while the graphs were captured (StreamBeginCapture ... EndCapture):
    /// names the operator of each replayed op
    pub capture: Option<String>,
    #[serde(flatten)]
    pub question: Graphs,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct SnapshotParams {
    /// A memory snapshot as torch.cuda.memory._dump_snapshot writes it (.pickle, plain or gzip);
    /// a path on this machine
    pub file: String,
    /// A second snapshot: the answer is then what changed from `file` to it
    pub new: Option<String>,
    /// The largest groups of each kind (default 10)
    pub top: Option<usize>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct LogdirArgs {
    /// A folder of tensorboard_trace_handler runs on this machine
    pub logdir: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct PathParams {
    /// Traces, one per rank of a job (joined at their collectives) or unrelated ones
    pub files: Vec<String>,
    #[serde(flatten)]
    pub question: Path,
    /// The longest segments of each step's path, kept in time order (default 10)
    pub segments: Option<usize>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct RanksParams {
    /// Trace files or folders (searched for *.json and *.json.gz) of one distributed job
    pub paths: Vec<String>,
    #[serde(flatten)]
    pub question: Ranks,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct DiffParams {
    /// The trace (or digest) before
    pub base: String,
    /// The trace (or digest) after
    pub new: String,
    #[serde(flatten)]
    pub question: Diff,
    /// The first N rows of each table (default 25)
    pub top: Option<usize>,
}

#[tool_router]
impl Sightline {
    #[tool(
        description = "Read a PyTorch profiler trace (.json or .json.gz) and keep it for the next \
                       questions; answers its summary (events, lanes, devices, damage). Every \
                       other tool also opens the file it is given."
    )]
    async fn open(
        &self,
        Parameters(a): Parameters<OnFile<Summary>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| Answer::of(&s.trace(&a.file)?.ask(&a.question)?))
            .await
    }

    #[tool(
        description = "The runs of a tensorboard_trace_handler log folder, their workers and \
                       each worker's trace files (path relative to the folder) with their rank, \
                       as `sightline serve LOGDIR` lists them."
    )]
    async fn runs(
        &self,
        Parameters(a): Parameters<LogdirArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |_| {
            let store = Local::new(FilePath::new(&a.logdir))?;
            let entries = store.list()?;
            let rank_of = |e: &listing::Entry| {
                store
                    .head(e)
                    .map_or_else(HeaderRank::default, |h| listing::rank_in_header(&h))
            };
            Answer::of(&listing::build(&a.logdir, &entries, &rank_of))
        })
        .await
    }

    #[tool(
        description = "What the trace holds: events by phase and category, lanes, devices, \
                       diagnostics of a damaged file, parse speed (`sightline summary --json`)."
    )]
    async fn summary(
        &self,
        Parameters(a): Parameters<OnFile<Summary>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| Answer::of(&s.trace(&a.file)?.ask(&a.question)?))
            .await
    }

    #[tool(
        description = "Everything at once: findings (what costs time, each with evidence and \
                       what its fix saves per step), notes on how the trace was recorded, top \
                       operators, steps and idle time (`sightline report --json`). Start here."
    )]
    async fn report(
        &self,
        Parameters(a): Parameters<ReportParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let loaded = s.trace(&a.file)?;
            let t = std::time::Instant::now();
            let mut report = loaded.ask(&a.question)?;
            report.analysis_seconds = t.elapsed().as_secs_f64();
            let rows = &mut report.top_operators.rows;
            let top = Some(a.question.operators());
            let note = page(rows, "top_operators.rows", a.offset, top);
            Ok(Answer::of(&report)?.noted(note))
        })
        .await
    }

    #[tool(
        description = "The operator table as PyTorch's key_averages() computes it: calls, self \
                       and total CPU and device time, memory (`sightline ops --json`)."
    )]
    async fn ops(
        &self,
        Parameters(a): Parameters<Paged<Ops>>,
    ) -> Result<CallToolResult, ErrorData> {
        // The trace is kept for the session's later questions: no capture found beside it is
        // applied, which would change their answers unasked (the graphs tool takes one).
        self.answer(move |s| {
            let mut table = s.trace(&a.file)?.ask(&a.question)?;
            let note = page(&mut table.rows, "rows", a.page.offset, a.page.top);
            Ok(Answer::of(&table)?.noted(note))
        })
        .await
    }

    #[tool(
        description = "Device ops (kernels, memcpy, memset) by name: time, share, kind, Tensor \
                       Cores, occupancy, the operators that launched them (`sightline kernels \
                       --json`)."
    )]
    async fn kernels(
        &self,
        Parameters(a): Parameters<Paged<Kernels>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let mut table = s.trace(&a.file)?.ask(&a.question)?;
            let note = page(&mut table.rows, "rows", a.page.offset, a.page.top);
            Ok(Answer::of(&table)?.noted(note))
        })
        .await
    }

    #[tool(
        description = "record_function labels: calls, CPU total and self, device time launched \
                       inside (`sightline labels --json`)."
    )]
    async fn labels(
        &self,
        Parameters(a): Parameters<Paged<Labels>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let mut table = s.trace(&a.file)?.ask(&a.question)?;
            let note = page(&mut table.rows, "rows", a.page.offset, a.page.top);
            Ok(Answer::of(&table)?.noted(note))
        })
        .await
    }

    #[tool(
        description = "torch.compile: compiled frames and the steps each compile id ran in, \
                       compiled graphs with their Inductor kernels and fused operators, compile \
                       work, eager operators between regions (`sightline compiled --json`)."
    )]
    async fn compiled(
        &self,
        Parameters(a): Parameters<OnFile<Compiled>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| Answer::of(&s.trace(&a.file)?.ask(&a.question)?))
            .await
    }

    #[tool(
        description = "The nn.Module hierarchy (traces recorded with with_modules=True): calls, \
                       host and device time per module (`sightline modules --json`)."
    )]
    async fn modules(
        &self,
        Parameters(a): Parameters<Paged<Modules>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let mut table = s.trace(&a.file)?.ask(&a.question)?;
            let note = page(&mut table.rows, "rows", a.page.offset, a.page.top);
            Ok(Answer::of(&table)?.noted(note))
        })
        .await
    }

    #[tool(
        description = "Per operator and input shape (record_shapes=True): FLOPs and bytes as \
                       TraceLens defines them, achieved TFLOP/s and TB/s, compute- or \
                       memory-bound, % of the device's roof (`sightline flops --json`)."
    )]
    async fn flops(
        &self,
        Parameters(a): Parameters<Paged<Flops>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let mut report = s.trace(&a.file)?.ask(&a.question)?;
            let note = page(&mut report.rows, "rows", a.page.offset, a.page.top);
            Ok(Answer::of(&report)?.noted(note))
        })
        .await
    }

    #[tool(
        description = "CUDA/HIP graph replays (cudaGraphLaunch, hipGraphLaunch): each graph's \
                       launches, ops per replay, device time and launch CPU time, its ops by time, \
                       instantiations; with `capture` (the trace recorded while the graphs were \
                       captured), the operators that issued the replayed ops, as table rows \
                       (`sightline graphs --json`; the op-by-op first replays only with \
                       `replays`)."
    )]
    async fn graphs(
        &self,
        Parameters(a): Parameters<GraphsParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let loaded = s.trace(&a.file)?;
            // A capture asked for here is this answer's only (the request's own): the kept trace
            // is not given it, so the session's later questions are not charged with it.
            let capture = a.capture.as_deref().map(graphs::read_capture).transpose()?;
            let mut out = loaded.ask(&Graphs {
                capture,
                ..a.question
            })?;
            let note = match &mut out.captured_ops {
                Some(rows) => page(rows, "captured_ops", a.page.offset, a.page.top),
                None => None,
            };
            Ok(Answer::of(&out)?.noted(note))
        })
        .await
    }

    #[tool(
        description = "Device idle time: HTA's temporal and per-stream breakdowns, the longest \
                       idle gaps of each device and what the CPU was doing in each (`sightline \
                       idle --json`)."
    )]
    async fn idle(
        &self,
        Parameters(a): Parameters<OnFile<Idle>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| Answer::of(&s.trace(&a.file)?.ask(&a.question)?))
            .await
    }

    #[tool(
        description = "ProfilerStep#N spans with the TensorBoard plugin's time breakdown \
                       (kernel, memcpy, communication, runtime, dataloader, CPU exec, other), \
                       device utilization and step statistics (`sightline steps --json`)."
    )]
    async fn steps(
        &self,
        Parameters(a): Parameters<Paged<Steps>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let mut report = s.trace(&a.file)?.ask(&a.question)?.clone();
            let note = page(&mut report.steps, "steps", a.page.offset, a.page.top);
            Ok(Answer::of(&report)?.noted(note))
        })
        .await
    }

    #[tool(
        description = "One step (ProfilerStep#N, as steps names them): its span, the TensorBoard \
                       plugin's breakdown and device utilization, and what bounds it on its \
                       critical path with the path's longest segments."
    )]
    async fn step(
        &self,
        Parameters(a): Parameters<OnFile<Step>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| Answer::of(&s.trace(&a.file)?.ask(&a.question)?))
            .await
    }

    #[tool(
        description = "The critical path of each step (one trace per rank of a job, joined at \
                       their collectives): what bounds it, its longest segments, and with \
                       what_if edits each step's predicted time and saving (`sightline path \
                       --json`)."
    )]
    async fn path(
        &self,
        Parameters(a): Parameters<PathParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            if a.files.is_empty() {
                return Err("name at least one trace in files".to_string());
            }
            let kept = a
                .files
                .iter()
                .map(|f| s.trace(f))
                .collect::<Result<Vec<_>, _>>()?;
            let opened: Vec<Opened<'_>> = kept.iter().map(|l| l.opened()).collect();
            let mut report = a.question.answer_all(&opened)?;
            let cut = longest_segments(&mut report, a.segments.unwrap_or(10));
            let note = page(&mut report.paths, "paths", a.page.offset, a.page.top);
            Ok(Answer::of(&report)?.noted(note).noted(cut))
        })
        .await
    }

    #[tool(
        description = "Memory per device (profile_memory=True): peak allocated and reserved, what \
                       held the peak by operator and Python frame, the curve, what was live at a \
                       time (`sightline memory --json`)."
    )]
    async fn memory(
        &self,
        Parameters(a): Parameters<OnFile<Memory>>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| Answer::of(&s.trace(&a.file)?.ask(&a.question)?))
            .await
    }

    #[tool(
        description = "A memory snapshot (torch.cuda.memory._dump_snapshot; a pickle that names \
                       code is refused, nothing of it run): per device the peak of live bytes and \
                       what is live at it by first user frame, file and line, annotation, \
                       category and compile context, the segments as _memory_viz segsum counts \
                       them, each oom explained; with `new`, what changed from one to the other \
                       (`sightline snapshot --json`)."
    )]
    async fn snapshot(
        &self,
        Parameters(a): Parameters<SnapshotParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |_| {
            let base = snapshot::load(&a.file)?;
            match &a.new {
                Some(new) => Answer::of(&snapshot::diff(&base, &snapshot::load(new)?, a.top)),
                None => Answer::of(&snapshot::report(&base, a.top)),
            }
        })
        .await
    }

    #[tool(
        description = "The traces of one distributed job side by side: per-rank table, \
                       collectives matched across ranks (wait, transfer, bus bandwidth), \
                       communication-computation overlap, stragglers per step (`sightline ranks \
                       --json`)."
    )]
    async fn ranks(
        &self,
        Parameters(a): Parameters<RanksParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |_| {
            if a.paths.is_empty() {
                return Err("name the job's traces or their folder in paths".to_string());
            }
            let paths: Vec<PathBuf> = a.paths.iter().map(PathBuf::from).collect();
            Answer::of(&ranks::report(&paths, &a.question)?)
        })
        .await
    }

    #[tool(
        description = "Before and after: operators, device ops, labels, steps, idle time and \
                       findings of two traces (or digests), per step unless total, and the \
                       fail_if conditions checked (`sightline diff --json`)."
    )]
    async fn diff(
        &self,
        Parameters(a): Parameters<DiffParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let base = s.digest(&a.base)?;
            let new = s.digest(&a.new)?;
            let mut out = a.question.answer(&base, &new, &a.base, &a.new)?;
            out.keep_top(a.top.unwrap_or(DEFAULT_ROWS));
            Answer::of(&out)
        })
        .await
    }
}

impl Sightline {
    /// A trace's digest from the kept trace, or a digest file read back (not parsed again).
    fn digest(&self, file: &str) -> Result<sightline::analysis::digest::Digest, String> {
        match self.trace(file) {
            Ok(loaded) => Ok(loaded.derived.digest("")),
            Err(trace_error) => sightline::native::digest_file(FilePath::new(file))
                .map_err(|e| format!("{file}: {e}"))?
                .ok_or(trace_error),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Sightline {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sightline", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Sightline reads PyTorch profiler traces (torch.profiler's .pt.trace.json[.gz]) \
                 on this machine. Ask `report` first: its findings name what costs time and what \
                 each fix saves per step; then `ops`, `kernels`, `idle`, `steps` or `path` (with \
                 what_if edits) for the evidence. Files are parsed once per session.",
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sightline::analysis::critical::{Segment, StepPath};

    #[test]
    fn a_page_cuts_the_list_and_says_where_the_next_starts() {
        let rows = || vec![0, 1, 2, 3, 4];
        let mut r = rows();
        let note = page(&mut r, "rows", Some(1), Some(2));
        assert_eq!(r, [1, 2]);
        assert_eq!(
            note.unwrap(),
            "rows: rows 1 to 2 of 5; the next page is offset=3"
        );
        // The whole list in one page: nothing to say.
        let mut r = rows();
        assert_eq!(page(&mut r, "rows", None, None), None);
        assert_eq!(r, rows());
        // The last page, and past the end.
        let mut r = rows();
        let note = page(&mut r, "rows", Some(3), Some(9)).unwrap();
        assert_eq!((r, note.as_str()), (vec![3, 4], "rows: rows 3 to 4 of 5"));
        let mut r = rows();
        let note = page(&mut r, "rows", Some(9), Some(2)).unwrap();
        assert!(r.is_empty());
        assert_eq!(note, "rows: no rows from offset 9; there are 5");
    }

    #[test]
    fn a_path_keeps_its_longest_segments_in_time_order() {
        let seg = |start_us: f64, end_us: f64| Segment {
            start_us,
            end_us,
            rank: 0,
            lane: String::new(),
            name: String::new(),
            kind: "cpu",
            bound_by: "cpu_op",
            slice: None,
            captured_by: None,
        };
        let path_of = |segments| StepPath {
            rank: 0,
            step: "ProfilerStep#1".into(),
            start_us: 0.0,
            end_us: 9.0,
            length_us: 9.0,
            device_end_us: None,
            length_with_device_us: None,
            bound_by: Default::default(),
            hta_bound_by: Default::default(),
            segments,
        };
        let mut r = PathReport::default();
        r.paths.push(path_of(vec![
            seg(0.0, 1.0),
            seg(1.0, 5.0),
            seg(5.0, 6.0),
            seg(6.0, 9.0),
        ]));
        r.paths.push(path_of(vec![seg(0.0, 2.0)]));
        let note = longest_segments(&mut r, 2).unwrap();
        let spans = |p: &StepPath| -> Vec<(f64, f64)> {
            p.segments.iter().map(|s| (s.start_us, s.end_us)).collect()
        };
        assert_eq!(spans(&r.paths[0]), [(1.0, 5.0), (6.0, 9.0)]);
        assert_eq!(spans(&r.paths[1]), [(0.0, 2.0)]);
        assert!(
            note.contains("its 2 longest") && note.contains("up to 4"),
            "{note}"
        );
        assert_eq!(longest_segments(&mut r, 2), None);
    }

    #[test]
    fn an_answer_too_large_is_refused_with_what_to_ask() {
        let rows: Vec<String> = (0..5_000).map(|i| format!("{i:0>60}")).collect();
        let e = Answer::of(&rows).unwrap().blocks().unwrap_err();
        assert!(e.contains("fewer rows (top)"), "{e}");
    }
}
