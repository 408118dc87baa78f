#!/usr/bin/env python3
"""The worst input shapes for lookups by device, process, lane and depth, timed at full size.

    bench/run --shapes [--baseline-bin PATH]
    python3 bench/shapes.py [--baseline-bin PATH] [--out BENCHMARKS.md]

Writes each shape under bench-out/shapes/ (kept between runs): one kernel on each of 10k to 80k
device processes (each its own pid), 10^6 kernels on 10^5 device processes, 10^6 CPU slices on
10^5 pids, 100k slices each inside the one before, one slice on each of 40k threads. Times
`sightline summary` and `sightline report` on each (wall time, peak resident memory from the
child's VmHWM) with this checkout's release build, and with --baseline-bin another build beside
it, and writes the table into BENCHMARKS.md's `shapes` section. tests/shapes.rs checks the same
shapes, smaller, for linear work and the memory bound; this gives the times.
"""
import argparse, datetime, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from md_sections import replace_sections

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench-out", "shapes")
BIN = os.path.join(ROOT, "target", "release", "sightline")
LIMIT_S = 300


def kernel(i, pid, ts):
    return (f'{{"ph":"X","cat":"kernel","name":"k","pid":{pid},"tid":7,"ts":{ts},"dur":1,'
            f'"args":{{"device":{pid},"stream":7,"correlation":{i}}}}}')


def cpu(pid, tid, ts, dur):
    return f'{{"ph":"X","cat":"cpu_op","name":"op","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur}}}'


def shapes():
    """(name, events) for each shape; events is a function giving the event texts."""
    out = [(f"{n // 1000}k device processes", lambda n=n: (kernel(i, i, i) for i in range(n)))
           for n in (10_000, 20_000, 40_000, 80_000)]
    out += [
        ("10^6 kernels on 10^5 device processes",
         lambda: (kernel(i, i % 100_000, i // 100_000 * 10) for i in range(1_000_000))),
        ("10^6 slices on 10^5 pids",
         lambda: (cpu(i % 100_000, 1, i // 100_000 * 10, 5) for i in range(1_000_000))),
        ("100k nested slices", lambda: (cpu(1, 1, i, 2 * (100_000 - i)) for i in range(100_000))),
        ("40k lanes", lambda: (cpu(1, i, i, 5) for i in range(40_000))),
    ]
    return out


def write(name, events):
    path = os.path.join(OUT, name.replace(" ", "_").replace("^", "") + ".json")
    if not os.path.exists(path):
        os.makedirs(OUT, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write('{"traceEvents":[\n')
            f.write(",\n".join(events()))
            f.write("\n]}\n")
        os.replace(path + ".tmp", path)
    return path


def run(binary, command, path):
    """Wall seconds and peak RSS in MB of one run (VmHWM read while it runs), or None past LIMIT_S."""
    start = time.monotonic()
    p = subprocess.Popen([binary, command, path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak_kb = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
        except OSError:
            pass
        if time.monotonic() - start > LIMIT_S:
            p.kill()
            p.wait()
            return None
        time.sleep(0.005)
    return time.monotonic() - start, peak_kb / 1024


def cell(r):
    return f"over {LIMIT_S} s" if r is None else f"{r[0]:.2f} s, {r[1]:.0f} MB"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-bin", help="another build of sightline, timed beside this one")
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    a = ap.parse_args()
    builds = [("this build", BIN)] + ([("baseline", a.baseline_bin)] if a.baseline_bin else [])
    head = "| shape | file | command | " + " | ".join(b for b, _ in builds) + " |"
    rows = [head, "|" + "---|" * (3 + len(builds))]
    for name, events in shapes():
        path = write(name, events)
        mb = os.path.getsize(path) / 1e6
        for command in ("summary", "report"):
            cells = [cell(run(binary, command, path)) for _, binary in builds]
            rows.append(f"| {name} | {mb:.1f} MB | {command} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = "\n".join(rows) + f"\n\n(`bench/run --shapes {' '.join(sys.argv[1:])}`, {now}; wall time and peak RSS.)"
    replace_sections(a.out, {"shapes": ("Hostile shapes: device processes, pids, nesting, lanes", body)})


if __name__ == "__main__":
    main()
