"""sightline.ray on a local Ray cluster against the same digests in a plain loop, and the memory one
worker needs per GB of trace.

Usage: .venv/bin/python bench/python_ray.py [--copies N] [--cpus N] [--memory TRACE...]
Throughput: N copies of a 1 MB rank trace (param_dlrm rank 0, 3,290 events), digested by
`sightline.ray.digests` on `ray.init(num_cpus=CPUS)` (cluster start excluded, each run after one
warm-up run) and by `sightline.ray.digest` in a loop in this process. Memory: each TRACE digested
in a fresh process, its peak RSS (VmHWM) over the process after imports.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(os.environ.get("SIGHTLINE_FIXTURES", ROOT.parent / "shared" / "fixtures"))
SMALL = FIXTURES / "real" / "param_dlrm_v100_rank0of8.pt.trace.json.gz"


def status_mb(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise KeyError(key)


def memory_child(path: str) -> None:
    import sightline.ray as sray

    base = status_mb("VmRSS")
    row = sray.digest(path)
    assert row["ok"], row["error"]
    print(json.dumps({"peak_mb": status_mb("VmHWM"), "base_mb": base}))


def arg(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main() -> None:
    if sys.argv[1:2] == ["--memory-child"]:
        return memory_child(sys.argv[2])
    copies, cpus = arg("--copies", 400), arg("--cpus", 2)
    import ray

    import sightline.ray as sray

    d = Path(tempfile.mkdtemp())
    for i in range(copies):
        shutil.copy(SMALL, d / f"c{i:04}.pt.trace.json.gz")
    paths = sray.list_traces(str(d))
    sray.digest(paths[0])
    t = time.perf_counter()
    for p in paths:
        sray.digest(p)
    loop = time.perf_counter() - t

    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    sray.digests(str(d)).take_all()
    t = time.perf_counter()
    rows = sray.digests(str(d)).take_all()
    dist = time.perf_counter() - t
    ray.shutdown()
    shutil.rmtree(d)
    assert len(rows) == copies and all(r["ok"] for r in rows)

    per_core_loop = copies / loop
    per_core_ray = copies / dist / cpus
    print(f"{copies} copies of {SMALL.name} ({os.path.getsize(SMALL) / 1e3:.0f} KB gz), load {os.getloadavg()[0]:.1f}")
    print(f"  plain loop, 1 core:      {loop:6.2f} s   {per_core_loop:6.1f} traces/s/core")
    print(f"  Ray, num_cpus={cpus}:        {dist:6.2f} s   {per_core_ray:6.1f} traces/s/core")
    print(f"  Ray overhead per core:   {100 * (per_core_loop / per_core_ray - 1):.0f}%")

    for trace in sys.argv[sys.argv.index("--memory") + 1 :] if "--memory" in sys.argv else []:
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", trace], capture_output=True, text=True, check=True
        )
        m = json.loads(out.stdout.strip().splitlines()[-1])
        size = os.path.getsize(trace)
        gzipped = trace.endswith(".gz")
        if gzipped:
            import gzip

            with gzip.open(trace) as f:
                size = sum(len(b) for b in iter(lambda: f.read(1 << 20), b""))
        extra = m["peak_mb"] - m["base_mb"]
        print(
            f"  digest of {Path(trace).name} ({size / 1e6:.0f} MB of JSON): peak RSS +{extra:.0f} MB"
            f" = {extra / (size / 1e9):.0f} MB per GB of JSON"
        )


if __name__ == "__main__":
    main()
