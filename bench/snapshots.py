#!/usr/bin/env python3
"""Memory snapshots in the page, side by side with PyTorch's own viewer (memory_viz) on the same files.

    bench/run --snapshots [--large] [--dir DIR] [--limit-s S] [--out BENCHMARKS.md]
    python3 bench/snapshots.py --memory-viz DIR [--large] [--dir DIR] [--limit-s S] [--out BENCHMARKS.md]

Makes the snapshots with tests/fixtures/snapshot/make.py --large under --dir (bench-out/snapshots/,
kept between runs): frames shared as `py_symbolize` shares them, 11,000 steps (196 MB); every entry
with its own frames (`--unshared`), 3,500 steps (200 MB); and with --large the same at 35,000 steps
(1.99 GB), made only when the machine has the memory to write it (Python holds it whole: about
15 GB) and to open it. Then bench/snapshot-page.mjs --memory-viz opens each in this page and in
memory_viz (bench/run fetches MemoryViz.js and d3 into --memory-viz), each in a Chromium of its
own, and this writes the figures, failures included, into BENCHMARKS.md's `snapshot-viewers`
section.
"""
import argparse, datetime, json, os, platform, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from md_sections import replace_sections

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAKE = os.path.join(ROOT, "tests", "fixtures", "snapshot", "make.py")
GB = 1 << 30

# (steps, every entry with its own frames, what it is); the last only with --large.
SNAPSHOTS = [
    (11_000, False, "frames shared, 11,000 steps"),
    (3_500, True, "a stack per entry (`--unshared`), 3,500 steps"),
    (35_000, True, "a stack per entry, 35,000 steps"),
]
# make.py holds the snapshot in Python objects while it writes it: about 0.42 MB per step with
# a stack per entry (1.48 GB of peak RSS at 3,500 steps), plus a margin.
MAKE_BYTES_PER_STEP = 0.45e6
# Opening the largest: both viewers' renderers (one at a time), with room to spare.
OPEN_BYTES = 8 * GB


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def available():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def make(d, steps, unshared):
    """The snapshot's path, made when missing; None when the machine lacks the memory to make it."""
    path = os.path.join(d, f"snapshot-{steps}{'-unshared' if unshared else ''}.pickle")
    if os.path.exists(path):
        return path
    need = steps * MAKE_BYTES_PER_STEP + GB
    if available() < need:
        log(f"snapshots: {os.path.basename(path)} skipped: making it needs about {need / GB:.0f} GB "
            f"of memory, {available() / GB:.1f} GB available")
        return None
    log(f"snapshots: making {os.path.basename(path)}")
    cmd = [sys.executable, MAKE, "--large", path + ".tmp", "--steps", str(steps)] + (["--unshared"] if unshared else [])
    subprocess.run(cmd, check=True)
    os.rename(path + ".tmp", path)
    return path


def fmt_s(ms):
    return f"{ms / 1000:.1f} s" if ms >= 100 else f"{ms:.0f} ms"


def fmt_mb(b):
    return f"{b / 1e6:,.0f} MB"


def rows(label, f):
    """The table's two rows for one file, and a sentence comparing them (None if one failed)."""
    s, m = f["sightline"], f["memory_viz"]
    ours = (f"| {label} | Sightline | {fmt_s(s['timeline_drawn_ms'])} | read and parsed {fmt_s(s['read_ms'])}, "
            f"model {fmt_s(s['build_ms'])} | {fmt_mb(s['renderer_peak_rss_bytes'])} | {fmt_mb(s['page_js_heap_bytes'])} | "
            f"{fmt_mb(s['worker_wasm_bytes'])} | drawn ({s['rects_zoomed_out']:,} rects) |")
    if m.get("failed"):
        where = f"after {fmt_s(m['wall_ms'])}"
        if m.get("read_ms") is not None:
            where += f" (file read in {fmt_s(m['read_ms'])})"
        heap = f"{fmt_mb(m['js_heap_at_crash_bytes'])} at the crash" if m.get("js_heap_at_crash_bytes") else ""
        theirs = (f"| | memory_viz | none | {where} | {fmt_mb(m['renderer_peak_rss_bytes'])} | {heap} | | "
                  f"**failed**: {m['failed']} |")
        return [ours, theirs], None
    theirs = (f"| | memory_viz | {fmt_s(m['timeline_drawn_ms'])} | file read {fmt_s(m['read_ms'])}, unpickled and "
              f"laid out {fmt_s(m['scripts_done_ms'] - m['read_ms'])}, SVG painted "
              f"{fmt_s(m['timeline_drawn_ms'] - m['scripts_done_ms'])} | {fmt_mb(m['renderer_peak_rss_bytes'])} | "
              f"{fmt_mb(m['page_js_heap_bytes'])} | | drawn ({m['polygons']:,} polygons) |")
    ratio = (f"{label}: Sightline draws its timeline {m['timeline_drawn_ms'] / s['timeline_drawn_ms']:.1f}x sooner, "
             f"with {m['renderer_peak_rss_bytes'] / s['renderer_peak_rss_bytes']:.1f}x less memory at the renderer's peak.")
    return [ours, theirs], ratio


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory-viz", required=True, help="MemoryViz.js, VERSION and node_modules/d3 (bench/run fills it)")
    ap.add_argument("--large", action="store_true", help="also the 1.99 GB snapshot, where the memory allows")
    ap.add_argument("--dir", default=os.path.join(ROOT, "bench-out", "snapshots"), help="where the snapshots are kept")
    ap.add_argument("--limit-s", type=int, default=600, help="a viewer with no timeline by then has failed")
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    files = []
    for steps, unshared, what in SNAPSHOTS[: 3 if a.large else 2]:
        path = make(a.dir, steps, unshared)
        if path is None:
            continue
        size = os.path.getsize(path)
        if size > GB and available() < OPEN_BYTES:
            log(f"snapshots: {os.path.basename(path)} not opened: {available() / GB:.1f} GB of memory available")
            continue
        files.append((path, f"{what}, {size / 1e6:,.0f} MB" if size < 1e9 else f"{what}, {size / 1e9:.2f} GB"))
    load = os.getloadavg()[0]
    free = available()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                             cwd=ROOT).stdout.splitlines()
    if [c for c in changed if c[3:] != os.path.relpath(a.out, ROOT)]:  # the figures' own file aside
        commit += " with uncommitted changes"
    chromium = subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True, text=True).stdout.strip()
    cmd = ["node", os.path.join(ROOT, "bench", "snapshot-page.mjs"), "--memory-viz", a.memory_viz,
           "--limit-s", str(a.limit_s)] + [p for p, _ in files]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit(f"snapshots: bench/snapshot-page.mjs failed ({p.returncode})")
    res = json.loads(p.stdout)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    mv = res["memory_viz"]
    lines = [
        f"memory_viz: `MemoryViz.js` of torch {mv['torch']} (Debian 13's pytorch source package), d3 {mv['d3']} "
        f"(npm). {chromium}, headless, one Chromium per viewer and file, in turn; {platform.node() or 'this machine'}, "
        f"{os.cpu_count()} cores, load average {load:.1f} and {free / GB:.1f} GB of memory available at the start; "
        f"commit {commit}.",
        "",
        "| file | viewer | file chosen -> timeline drawn | where the time goes | renderer's peak RSS | page's JS heap once drawn (after a GC) | worker's wasm memory | outcome |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    by_path = {p: label for p, label in files}
    for f in res["files"]:
        two, ratio = rows(by_path[f["file"]], f)
        lines += two
        if ratio:
            ratios.append(ratio)
    if ratios:
        lines += [""] + ratios
    # bench/run names the peer's folder itself.
    args = sys.argv[1:]
    if "--memory-viz" in args:
        i = args.index("--memory-viz")
        args = args[:i] + args[i + 2:]
    stamp = f"\n\n(`{' '.join(['bench/run', '--snapshots'] + args)}`, {now}.)"
    replace_sections(a.out, {"snapshot-viewers": ("Memory snapshots: the page beside memory_viz", "\n".join(lines) + stamp)})
    log(f"snapshots: wrote snapshot-viewers in {a.out}")
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
