//! The worst input shapes for lookups by device, process, lane and depth, generated at two sizes:
//! the CPU time the binary spends (its own, from `wait4`, not wall time) must grow with the input,
//! not with its square, and its peak resident memory stay within four times the file or 64 MB.
//! `bench/run --shapes` and BENCHMARKS.md give the times of the full-size shapes. Linux only: the
//! peak is read from `/proc`.
#![cfg(target_os = "linux")]

use crate::common;
use crate::serve::scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// What one run of the binary cost: CPU time and peak resident memory.
struct Cost {
    cpu: Duration,
    peak_bytes: u64,
}

/// Runs `sightline ARGS` to its end and reads its own costs from the kernel: the CPU time from
/// `wait4`, and the peak from the child's `VmHWM`, read every few ms while it runs. (`wait4`'s
/// `ru_maxrss` will not do: a process started from this one counts this one's memory, which
/// its `exec` replaced.)
fn cost_of(args: &[&str]) -> Cost {
    // Reaped by wait4 below, which also gives its CPU time; `Child::wait` would not.
    let pid = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
        .id() as i32;
    let status_file = format!("/proc/{pid}/status");
    let mut peak_bytes = 0;
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value; wait4 fills it for this child alone.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            if let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak_bytes = peak_bytes.max(kib * 1024);
            }
        }
        // SAFETY: the pid is our own child's, not yet reaped; both pointers are to live locals.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break;
        }
        assert_eq!(reaped, 0, "wait4 failed");
        std::thread::sleep(Duration::from_millis(3));
    }
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}: {status}"
    );
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Cost {
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        peak_bytes,
    }
}

/// Writes the shape `kind` of `n` events ([`common::shape`]) to a file in `dir`.
fn write_shape(dir: &Path, kind: common::Shape, n: usize) -> PathBuf {
    let path = dir.join(format!("{kind:?}-{n}.json"));
    std::fs::write(&path, common::shape(kind, n)).unwrap();
    path
}

/// Checks `command` on `shape` of `n` and of `8 * n` events: eight times the input may cost at
/// most 16 times the CPU (a quadratic step costs 64), and each run's peak memory stays within
/// four times its file or 64 MB.
fn linear(command: &str, shape: common::Shape, n: usize) {
    let dir = scratch(&format!("{shape:?}"));
    let mut costs = Vec::new();
    for size in [n, 8 * n] {
        let file = write_shape(&dir, shape, size);
        let bytes = std::fs::metadata(&file).unwrap().len();
        // The least CPU of two runs: a run that lost its core to a build beside it is not
        // the one measured.
        let runs = [0, 1].map(|_| cost_of(&[command, file.to_str().unwrap()]));
        let cost = Cost {
            cpu: runs[0].cpu.min(runs[1].cpu),
            peak_bytes: runs[0].peak_bytes.max(runs[1].peak_bytes),
        };
        let bound = (4 * bytes).max(64 << 20);
        assert!(
            cost.peak_bytes <= bound,
            "{command} on {shape:?} x{size}: peak {} MB for a file of {} MB",
            cost.peak_bytes >> 20,
            bytes >> 20
        );
        costs.push(cost.cpu);
    }
    // The small run's CPU time, at least 10 ms: below that the start of a process is all there is.
    let small = costs[0].max(Duration::from_millis(10));
    eprintln!(
        "{command} on {shape:?}: {:?} at {n}, {:?} at {}",
        costs[0],
        costs[1],
        8 * n
    );
    assert!(
        costs[1] <= small * 16,
        "{command} on {shape:?}: {:?} at {n}, {:?} at {}",
        costs[0],
        costs[1],
        8 * n
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn device_processes_cost_linear_work() {
    linear("summary", common::Shape::DeviceProcesses, 2_500);
}

#[test]
fn kernels_on_many_pids_cost_linear_work() {
    linear("summary", common::Shape::KernelsOnPids, 5_000);
}

#[test]
fn deep_nesting_costs_linear_work() {
    linear("report", common::Shape::Nested, 12_500);
}

#[test]
fn deep_nesting_in_a_step_costs_linear_work() {
    linear("report", common::Shape::NestedInStep, 12_500);
}

#[test]
fn operators_on_many_processes_cost_linear_work() {
    linear("report", common::Shape::CpuPids, 5_000);
}

#[test]
fn many_lanes_cost_linear_work() {
    linear("report", common::Shape::Lanes, 2_500);
}

/// A rule that fires on each device tells at most 16 of them one by one and the rest in one
/// finding: one finding per device had been most of a report's memory on 80,000 device processes.
#[test]
fn many_devices_share_their_findings() {
    use sightline::analysis::derived::Derived;
    let trace =
        sightline::parse::parse_bytes(&common::shape(common::Shape::DeviceProcesses, 200)).unwrap();
    let d = Derived::new(&trace);
    let judged = d.findings(&Default::default());
    let low: Vec<_> = judged
        .findings
        .iter()
        .map(|a| &a.finding)
        .filter(|f| f.id == "low_gpu_utilization")
        .collect();
    assert_eq!(
        low.len(),
        16,
        "{:?}",
        low.iter().map(|f| &f.title).collect::<Vec<_>>()
    );
    let rest = low.last().unwrap();
    assert!(
        rest.title.starts_with("185 more devices are busy only"),
        "{}",
        rest.title
    );
    assert!(rest.detail.contains("and 182 more"), "{}", rest.detail);
}
