"""`sightline.open(p).idle()` against HTA 0.5.0's idle time breakdown on the same trace.

Usage: PYTHON bench/python_vs_hta.py TRACE.json [--repeat N]
PYTHON is an interpreter with both `sightline` (pip install ./python) and `holistictraceanalysis`
0.5.0; keep it outside the repository's .venv (HTA pins its own pandas). Times come from one
process, the two libraries alternating; memory (peak RSS above the process after its imports)
from one fresh child process per library, so neither inherits the other's heap.
"""

import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def status_mb(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise KeyError(key)


def peak_mb() -> float:
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over exec, so a child started by
    # a large parent would report the parent's size.
    return status_mb("VmHWM")


def rss_mb() -> float:
    return status_mb("VmRSS")


def run_sightline(path: str) -> object:
    import sightline

    return sightline.open(path).idle()


def run_hta(trace_dir: str) -> object:
    from hta.trace_analysis import TraceAnalysis

    a = TraceAnalysis(trace_dir=trace_dir)
    return a.get_idle_time_breakdown(visualize=False)


def hta_dir(path: str) -> str:
    # HTA reads every trace in a directory; give it this one alone.
    d = tempfile.mkdtemp()
    os.symlink(os.path.abspath(path), os.path.join(d, "rank-0.pt.trace.json"))
    return d


def child(which: str, path: str) -> None:
    """One library once, in a fresh process: its peak RSS over the baseline after imports."""
    logging.disable(logging.CRITICAL)
    import sightline  # noqa: F401
    from hta.trace_analysis import TraceAnalysis  # noqa: F401

    base = rss_mb()
    if which == "sightline":
        run_sightline(path)
    else:
        d = hta_dir(path)
        run_hta(d)
        shutil.rmtree(d)
    print(json.dumps({"peak_mb": peak_mb(), "base_mb": base}))


def main() -> None:
    if sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3])
    path = sys.argv[1]
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    logging.disable(logging.CRITICAL)
    import sightline
    import hta

    d = hta_dir(path)
    times = {"sightline": [], "hta": []}
    for _ in range(repeat):
        t = time.perf_counter()
        run_sightline(path)
        times["sightline"].append(time.perf_counter() - t)
        t = time.perf_counter()
        run_hta(d)
        times["hta"].append(time.perf_counter() - t)
    shutil.rmtree(d)
    mem = {}
    for which in ("sightline", "hta"):
        out = subprocess.run(
            [sys.executable, __file__, "--child", which, path], capture_output=True, text=True, check=True
        )
        mem[which] = json.loads(out.stdout.strip().splitlines()[-1])
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"trace: {path} ({os.path.getsize(path) / 1e6:.1f} MB)")
    print(f"sightline {sightline.__version__}, HTA {getattr(hta, '__version__', '0.5.0')}, {repeat} runs each")
    for k in ("sightline", "hta"):
        runs = ", ".join(f"{x:.2f}" for x in times[k])
        extra = mem[k]["peak_mb"] - mem[k]["base_mb"]
        print(f"  {k:9}  median {med[k]:.3f} s  ({runs})  peak RSS +{extra:.0f} MB over {mem[k]['base_mb']:.0f} MB")
    print(f"  ratio (HTA / sightline): {med['hta'] / med['sightline']:.1f}x")


if __name__ == "__main__":
    main()
