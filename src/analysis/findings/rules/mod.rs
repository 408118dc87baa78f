//! The rules, one theme a file. Each is `fn(&Context) -> Vec<Finding>` (most give one finding or
//! none; a per-device rule, one for each device it fires on). Adding a rule is a function here
//! and a line in [`RULES`]; the README's table says what each id means.

mod compiled;
mod copies;
mod cpu;
mod damage;
mod device;
mod graphs;
mod input;
mod memory;
mod recording;
mod steps;

use super::context::Context;
use super::types::Finding;

pub(super) type Rule = fn(&Context) -> Vec<Finding>;

/// Every rule, in the order their findings are listed among equal severities.
pub(super) const RULES: &[Rule] = &[
    damage::device_events_lost,
    recording::no_cpu_activity,
    recording::no_input_shapes,
    recording::memory_profiling_on,
    recording::no_python_stack,
    recording::few_active_steps,
    steps::warmup_outlier,
    input::dataloader_bound,
    input::pageable_memcpy,
    copies::cpu_copy_overhead,
    copies::dtype_round_trip,
    cpu::small_op_storm,
    cpu::untraced_cpu_time,
    cpu::annotation_overhead,
    cpu::optimizer_step_heavy,
    device::low_gpu_utilization,
    device::communication_heavy,
    memory::memory_near_capacity,
    device::gpu_starved_by_cpu,
    graphs::graph_instantiation,
    memory::growth,
    compiled::recompilation,
    compiled::graph_break,
    compiled::compile_in_steps,
];
