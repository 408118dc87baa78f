//! FLOPs in the kernel table: each kernel's share of the operator call that launched it.
//!
//! A GPU op gets the cost of the innermost modelled operator call above its launch (the call
//! whose shapes set its work: `aten::mm` for a cuBLAS kernel, not the `aten::linear` around it).
//! A call that launched several GPU ops (a GEMM and its split-K reduction, a copy and a fill)
//! shares its FLOPs and bytes among them in proportion to their time, so the kernels of one call
//! add up to the call's cost and each runs at the call's rate. Per kernel name: GFLOPs and bytes
//! per call (over the calls a model covers), and TFLOP/s and TB/s over those calls' time. Kernels
//! that no modelled operator launched keep `None`.

use super::Flops;
use crate::analysis::tables::{KernelFlops, KernelTable};
use crate::model::Trace;
use std::collections::HashMap;

#[derive(Default)]
struct Sum {
    calls: u64,
    flops: f64,
    ns: i64,
    bytes: f64,
    bytes_ns: i64,
    bytes_calls: u64,
}

/// Fills the FLOPs columns of a kernel table from the calls that launched its kernels.
pub fn annotate(table: &mut KernelTable, trace: &Trace, flops: &Flops) {
    let mut by_name: HashMap<&str, Sum> = HashMap::new();
    for &(g, k) in &flops.launched {
        let inst = &flops.instances[k as usize];
        if inst.kernel_ns <= 0 {
            continue;
        }
        let s = trace.slices(g.lane as usize);
        let dur = s.dur_ns[g.index as usize];
        let share = dur as f64 / inst.kernel_ns as f64;
        let sum = by_name
            .entry(trace.str(s.name[g.index as usize]))
            .or_default();
        sum.calls += 1;
        sum.flops += inst.cost.flops as f64 * share;
        sum.ns += dur;
        if let Some(b) = inst.cost.bytes {
            sum.bytes += b as f64 * share;
            sum.bytes_ns += dur;
            sum.bytes_calls += 1;
        }
    }
    for row in &mut table.rows {
        let Some(sum) = by_name.get(row.name.as_str()) else {
            continue;
        };
        let rate = |x: f64, ns: i64| (ns > 0).then(|| x / ns as f64 / 1e3);
        row.flops = KernelFlops {
            flops_calls: Some(sum.calls),
            gflops: Some(sum.flops / sum.calls as f64 / 1e9),
            bytes: (sum.bytes_calls > 0).then(|| sum.bytes / sum.bytes_calls as f64),
            tflops_s: rate(sum.flops, sum.ns),
            tb_s: rate(sum.bytes, sum.bytes_ns),
        };
    }
}
