//! The rules, one theme a file. Each is a declaration ([`Rule`]: its id, severity, thresholds and
//! what the findings reference says of it) beside a `fn(&Context) -> Vec<Finding>` (most give one
//! finding or none; a per-device rule, one for each device it fires on). Adding a rule is the two
//! of them and a line in [`RULES`].

mod compiled;
pub(super) mod copies;
mod cpu;
mod damage;
mod device;
mod graphs;
mod input;
mod memory;
mod recording;
mod steps;

pub(crate) use damage::DEVICE_EVENTS_LOST;
pub(crate) use device::{GPU_STARVED_BY_CPU, LOW_GPU_UTILIZATION};

use super::context::Context;
use super::types::{Finding, Rule};
use crate::analysis::memory::growth::MEMORY_GROWTH;

pub(super) type Check = fn(&Context) -> Vec<Finding>;

/// Every rule with its check, in the order their findings are listed among equal severities.
pub(super) const RULES: &[(&Rule, Check)] = &[
    (&damage::DEVICE_EVENTS_LOST, damage::device_events_lost),
    (&recording::NO_CPU_ACTIVITY, recording::no_cpu_activity),
    (&recording::NO_INPUT_SHAPES, recording::no_input_shapes),
    (
        &recording::MEMORY_PROFILING_ON,
        recording::memory_profiling_on,
    ),
    (&recording::NO_PYTHON_STACK, recording::no_python_stack),
    (&recording::FEW_ACTIVE_STEPS, recording::few_active_steps),
    (&steps::WARMUP_OUTLIER, steps::warmup_outlier),
    (&input::DATALOADER_BOUND, input::dataloader_bound),
    (&input::PAGEABLE_MEMCPY, input::pageable_memcpy),
    (&copies::CPU_COPY_OVERHEAD, copies::cpu_copy_overhead),
    (&copies::DTYPE_ROUND_TRIP, copies::dtype_round_trip),
    (&cpu::SMALL_OP_STORM, cpu::small_op_storm),
    (&cpu::UNTRACED_CPU_TIME, cpu::untraced_cpu_time),
    (&cpu::ANNOTATION_OVERHEAD, cpu::annotation_overhead),
    (&cpu::OPTIMIZER_STEP_HEAVY, cpu::optimizer_step_heavy),
    (&device::LOW_GPU_UTILIZATION, device::low_gpu_utilization),
    (&device::COMMUNICATION_HEAVY, device::communication_heavy),
    (&memory::MEMORY_NEAR_CAPACITY, memory::memory_near_capacity),
    (&device::GPU_STARVED_BY_CPU, device::gpu_starved_by_cpu),
    (&graphs::GRAPH_INSTANTIATION, graphs::graph_instantiation),
    (&MEMORY_GROWTH, memory::memory_growth),
    (&compiled::RECOMPILATION, compiled::recompilation),
    (&compiled::GRAPH_BREAK, compiled::graph_break),
    (&compiled::COMPILE_IN_STEPS, compiled::compile_in_steps),
];
