//! The tables: operators (`key_averages()`), device ops by name with their FLOPs, `record_function`
//! labels, `nn.Module`s, FLOPs per op and shape, CUDA/HIP graph replays. Each table is charged
//! with the capture its store was given (`Derived::set_capture`), which a front end reads from a
//! file before asking; the graphs can also be asked with a capture of the request's own, which
//! charges that answer only. [`DECLARED`] lists the tables whose rows declare their columns
//! (`analysis::columns`), by the name each front end knows them by.

use super::{flag, text_opt, Opened, Question};
use crate::analysis::columns::Table;
use crate::analysis::compiled::{self, Compile, Frame};
use crate::analysis::critical::savings::Assessed;
use crate::analysis::critical::slack;
use crate::analysis::diff::{KernelDiff, LabelDiff, OpDiff, StepPair, WaitDiff};
use crate::analysis::flops::kernels::annotate;
use crate::analysis::flops::FlopsReport;
use crate::analysis::flops::FlopsRow;
use crate::analysis::graphs::{Attribution, Capture, Graph, GraphsOutput};
use crate::analysis::idle::{DeviceIdle, Gap, StreamIdle};
use crate::analysis::memory::{AllocationRow, Holder, StepFloor};
use crate::analysis::ranks::{CollectiveRow, RankRow};
use crate::analysis::steps::Step;
use crate::analysis::tables::calltree::CallNode;
use crate::analysis::tables::{
    label_table, KernelTable, LabelTable, ModuleTable, OpColumn, OpTable,
};
use crate::analysis::tables::{KernelRow, LabelRow, ModuleRow, OpRow};
use serde::Deserialize;

/// The tables whose rows declare their columns (`analysis::columns`), in the order the reference
/// lists them: each by the command that prints it and the member that holds its rows (a command
/// may print more than one: `idle`'s per stream, per device and its gaps, `compiled`'s graphs,
/// their kernels, frames and compile work, `report`'s findings and notes on the recording,
/// `diff`'s operators, device ops, labels and steps). A member path `a.b` is the member `b` of
/// the answer's `a`.
pub const DECLARED: &[Table] = &[
    Table::of::<OpRow>("ops", "rows", "Operators"),
    Table::of::<KernelRow>("kernels", "rows", "Kernels (device ops by name)"),
    Table::of::<LabelRow>("labels", "rows", "record_function labels"),
    Table::of::<ModuleRow>("modules", "rows", "nn.Module hierarchy"),
    Table::of::<FlopsRow>("flops", "rows", "FLOPs per operator and input shape"),
    Table::of::<Graph>("graphs", "graphs", "CUDA/HIP graphs"),
    Table::of::<Step>("steps", "steps", "Training steps"),
    Table::of::<StreamIdle>("idle", "idle", "Idle time per stream, HTA's idle breakdown"),
    Table::of::<DeviceIdle>("idle", "devices", "Idle time per device"),
    Table::of::<Gap>(
        "idle",
        "gaps",
        "Idle gaps of the devices, each with what the CPU was doing",
    ),
    Table::of::<compiled::Graph>("compiled", "graphs", "torch.compile: compiled graphs"),
    Table::of::<compiled::Kernel>(
        "compiled",
        "graphs[].kernels",
        "torch.compile: each compiled graph's Inductor kernels",
    ),
    Table::of::<Frame>("compiled", "frames", "torch.compile: compiled frames"),
    Table::of::<Compile>("compiled", "compiles", "torch.compile: compile work"),
    Table::of::<RankRow>("ranks", "ranks", "Ranks of a distributed job"),
    Table::of::<CollectiveRow>(
        "ranks",
        "collectives",
        "Ranks: collectives, per process group, name and size",
    ),
    Table::of::<CallNode>("calltree", "nodes", "Call tree (the page's), top-down"),
    Table::of::<Holder>(
        "memory",
        "devices[].holders",
        "Memory: what held each device's peak, by allocating operator",
    ),
    Table::of::<Holder>(
        "memory",
        "devices[].frames",
        "Memory: what held each device's peak, by Python frame",
    ),
    Table::of::<StepFloor>("memory", "devices[].step_floors", "Memory: per step"),
    Table::of::<AllocationRow>(
        "memory",
        "devices[].allocation_table",
        "Memory: every allocation (with `allocations`)",
    ),
    Table::of::<OpDiff>("diff", "ops", "Comparison: operators"),
    Table::of::<KernelDiff>(
        "diff",
        "kernels",
        "Comparison: device ops by name, launching operator and module",
    ),
    Table::of::<LabelDiff>("diff", "labels", "Comparison: record_function labels"),
    Table::of::<StepPair>("diff", "steps.pairs", "Comparison: the steps side by side"),
    Table::of::<WaitDiff>(
        "diff",
        "idle.waits",
        "Comparison: what the CPU did while the device waited",
    ),
    Table::of::<Assessed>(
        "report",
        "findings",
        "Findings: what costs time, with what each fix saves",
    ),
    Table::of::<Assessed>(
        "report",
        "recording",
        "Findings: notes on how the trace was recorded",
    ),
];

/// The declared table named `name` ([`DECLARED`]): of a command with more than one, the first
/// listed, the one Python and the page lay out (`idle`'s per stream).
pub fn declared(name: &str) -> Option<&'static Table> {
    tables_of(name).next()
}

/// Every declared table of the command `name`, in [`DECLARED`]'s order (`compiled`'s four,
/// `diff`'s five, ...).
pub fn tables_of(name: &str) -> impl Iterator<Item = &'static Table> + '_ {
    DECLARED.iter().filter(move |t| t.name == name)
}

/// The declared table of the command `name` whose rows are under `rows` (`idle`'s `gaps`).
pub fn declared_at(name: &str, rows: &str) -> Option<&'static Table> {
    tables_of(name).find(|t| t.rows == rows)
}

/// The operator table as PyTorch's `key_averages()` computes it: calls, self and total CPU and
/// device time, memory.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Ops {
    /// Group by input shape too
    #[serde(deserialize_with = "flag")]
    pub by_shape: bool,
    /// Add each row's time on the steps' critical paths and its slack
    #[serde(deserialize_with = "flag")]
    pub path: bool,
    /// Sort by a JSON field or PyTorch's sort_by name (self_cpu_time_total, cuda_time_total, ...);
    /// by default self device time when device time was charged, else self CPU
    #[serde(deserialize_with = "text_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub sort: Option<OpColumn>,
}

impl<'a> Question<'a> for Ops {
    type Answer = OpTable;
    fn answer(&self, t: &Opened<'a>) -> Result<OpTable, String> {
        let d = t.derived;
        let mut table = d.op_table(self.by_shape);
        if self.path {
            slack::annotate_ops(&mut table, d.trace(), d.forest(), d.slice_times()?);
        }
        table.sort_by(self.sort.unwrap_or_else(|| table.default_sort()));
        Ok(table)
    }
}

/// Device ops (kernels, memcpy, memset) by name: time, share, kind, Tensor Cores, occupancy, the
/// operators that launched them, and their FLOPs where a model gives them.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Kernels {
    /// Add each kernel's time on the steps' critical paths and its slack
    #[serde(deserialize_with = "flag")]
    pub path: bool,
}

impl<'a> Question<'a> for Kernels {
    type Answer = KernelTable;
    fn answer(&self, t: &Opened<'a>) -> Result<KernelTable, String> {
        let d = t.derived;
        let mut table = d.kernel_table();
        annotate(&mut table, d.trace(), d.flops());
        if self.path {
            slack::annotate_kernels(&mut table, d.trace(), d.slice_times()?);
        }
        Ok(table)
    }
}

/// `record_function` labels: calls, CPU total and self, device time launched inside.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Labels {}

impl<'a> Question<'a> for Labels {
    type Answer = LabelTable;
    fn answer(&self, t: &Opened<'a>) -> Result<LabelTable, String> {
        Ok(label_table(t.derived.trace(), t.derived.forest()))
    }
}

/// The `nn.Module` hierarchy (`with_modules=True`): calls, host and device time per module.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Modules {}

impl<'a> Question<'a> for Modules {
    type Answer = ModuleTable;
    fn answer(&self, t: &Opened<'a>) -> Result<ModuleTable, String> {
        Ok(t.derived.module_table())
    }
}

/// Per operator and input shape (`record_shapes=True`): FLOPs and bytes as TraceLens defines them,
/// achieved TFLOP/s and TB/s, compute- or memory-bound, % of the device's roof.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Flops {}

impl<'a> Question<'a> for Flops {
    type Answer = FlopsReport;
    fn answer(&self, t: &Opened<'a>) -> Result<FlopsReport, String> {
        Ok(t.derived.flops().report(t.derived.trace()))
    }
}

/// torch.compile: compiled frames and the steps each compile id ran in, compiled graphs with
/// their Inductor kernels and fused operators, compile work, eager operators between regions.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Compiled {}

impl<'a> Question<'a> for Compiled {
    type Answer = &'a crate::analysis::compiled::Compiled;
    fn answer(&self, t: &Opened<'a>) -> Result<Self::Answer, String> {
        Ok(t.derived.compiled())
    }
}

/// CUDA/HIP graph replays (`cudaGraphLaunch`, `hipGraphLaunch`): each graph's launches, ops per
/// replay, device and launch time, instantiations; with a capture (the request's own, else the
/// store's), the operators that issued the replayed ops.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Graphs {
    /// Each graph's first replay op by op (544 entries for one SGLang decode graph)
    #[serde(deserialize_with = "flag")]
    pub replays: bool,
    /// A capture for this answer alone, in place of the store's (`Derived::set_capture`): what a
    /// front end that keeps a trace for later questions asks with (`sightline mcp`'s graphs tool),
    /// since a capture given to the store charges its tables from then on. Read from a file by
    /// the front end; not part of the request's JSON.
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub capture: Option<Capture>,
}

impl<'a> Question<'a> for Graphs {
    type Answer = GraphsOutput;
    fn answer(&self, t: &Opened<'a>) -> Result<GraphsOutput, String> {
        let d = t.derived;
        let own = self
            .capture
            .clone()
            .map(|c| Attribution::new(d.trace(), d.graphs(), c));
        Ok(GraphsOutput::of(
            d.trace(),
            d.graphs(),
            own.as_ref().or_else(|| d.attribution()),
            self.replays,
        ))
    }
}
