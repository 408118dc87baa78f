#!/usr/bin/env python3
"""Sightline's benchmark: speed and memory on real and scaled traces, side by side with peers.

    bench/run [--sizes 56,1000,2000] [--runs 3] [--no-peers] [--no-browser] [--out BENCHMARKS.md]
              [--baseline REV [--only-baseline]]

What it does, in order:
1. Makes the inputs under bench-out/ (kept between runs): the 56 MB owlv2 fixture unzipped, and
   scaled copies of it (1 GB, 2 GB) made with ../shared/tools/scale_trace.py.
2. Native: `sightline summary` (parse alone), `sightline report` (parse, model, every analysis)
   and `sightline path` (parse, then every step's critical path),
   wall time (median of --runs), MB/s, peak RSS, model bytes per slice.
3. Peers on the same files: HTA (parse + temporal + idle breakdown) on the 56 MB file, Python's
   json.load as the floor for "read it at all", speedscope in headless Chromium on the 56 MB file when
   its npm package is installed (bench/browser.mjs: on a copy with Kineto's string pid/tid made
   numbers, with Sightline timed on the same copy in the same runs for the ratio).
4. Browser: Sightline in headless Chromium (bench/browser.mjs): file chosen to every table ready,
   peak JS heap and wasm memory, frame time at full zoom-out and during a scripted zoom/pan.
   And a gzipped copy of the largest file up to 1 GB (bench/gzip.mjs): inflated by the browser in a
   worker of its own beside the Session's wasm inflater (the way before), in turns.
5. With --baseline REV: REV's build timed beside this one in turns (bench/parser_bench.py).
6. Writes its figures into BENCHMARKS.md with the machine, the date and the command.

BENCHMARKS.md is partly generated, partly written by hand. This script rewrites only its own
sections, each between a `<!-- bench:NAME -->` line and a `<!-- /bench:NAME -->` line (`machine`,
`native`, `peers`, `browser`, `gzip`); every other line of the file (headings, hand-written sections and
notes) is kept as it is. A section not measured in a run (--no-peers, --no-browser) keeps its
previous figures, and each section ends with the command and date it was measured with. Another
script adds its own generated section the same way: `md_sections.replace_sections(path,
{NAME: (heading, body)})` (see bench/md_sections.py); a section new to the file is appended at its
end.

These machines are noisy: compare ratios measured in the same run, not seconds across runs.
"""
import argparse, datetime, json, os, platform, shutil, statistics, subprocess, sys, tempfile, time

from md_sections import replace_sections

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench-out")
BIN = os.path.join(ROOT, "target", "release", "sightline")


def shared_dir():
    env = os.environ.get("SIGHTLINE_FIXTURES")
    if env:
        return os.path.dirname(env.rstrip("/"))
    d = ROOT
    while d != "/":
        if os.path.isdir(os.path.join(d, "shared", "fixtures")):
            return os.path.join(d, "shared")
        d = os.path.dirname(d)
    sys.exit("bench: no shared/fixtures above the repository; set SIGHTLINE_FIXTURES")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def make_inputs(sizes):
    os.makedirs(OUT, exist_ok=True)
    shared = shared_dir()
    src = os.path.join(shared, "fixtures", "real", "tracelens_h100_owlv2_stack_mem.json.gz")
    files = {}
    real = os.path.join(OUT, "owlv2_56mb.json")
    if not os.path.exists(real):
        log("bench: unzipping the 56 MB fixture")
        import gzip
        with gzip.open(src, "rb") as f, open(real + ".tmp", "wb") as o:
            shutil.copyfileobj(f, o, 1 << 20)
        os.rename(real + ".tmp", real)
    for mb in sizes:
        if mb <= 100:
            files[mb] = real
            continue
        path = os.path.join(OUT, f"owlv2_{mb}mb.json")
        if not os.path.exists(path):
            log(f"bench: making a {mb} MB trace with scale_trace.py (a minute or two)")
            subprocess.run([sys.executable, os.path.join(shared, "tools", "scale_trace.py"), src,
                            path + ".tmp.json", "--target-mb", str(mb)], check=True)
            os.rename(path + ".tmp.json", path)
        files[mb] = path
    return files


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time; returns (wall seconds, peak RSS bytes, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    rss_kb = int(p.stderr.strip().splitlines()[-1])
    return wall, rss_kb * 1024, p.stdout


def median_run(cmd, runs):
    results = [timed(cmd) for _ in range(runs)]
    walls = [r[0] for r in results]
    return statistics.median(walls), max(r[1] for r in results), results[-1][2]


def native(files, runs):
    rows = []
    for mb, path in files.items():
        size = os.path.getsize(path)
        log(f"bench: native on {os.path.basename(path)}")
        parse_s, parse_rss, out = median_run([BIN, "summary", path, "--json"], runs)
        summary = json.loads(out)
        report_s, report_rss, _ = median_run([BIN, "report", path, "--json"], runs)
        path_s, path_rss, _ = median_run([BIN, "path", path, "--json"], runs)
        m = summary["model"]
        rows.append({
            "file": os.path.basename(path), "mb": size / 1e6, "events": summary["events"]["total"],
            "slices": m["slices"], "parse_s": parse_s, "report_s": report_s,
            "parse_mbps": size / 1e6 / parse_s, "report_mbps": size / 1e6 / report_s,
            "path_s": path_s, "peak_rss": max(parse_rss, report_rss, path_rss), "model_bytes": m["total_bytes"],
            "bytes_per_slice": m["bytes_per_slice"],
        })
    return rows


HTA_SCRIPT = r"""
import sys, time, logging
logging.disable(logging.CRITICAL)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
t1 = time.perf_counter()
a = TraceAnalysis(trace_dir=sys.argv[1])
a.get_temporal_breakdown(visualize=False)
a.get_idle_time_breakdown(visualize=False)
print(time.perf_counter() - t1)
"""

JSON_LOAD = r"""
import json, sys, time
t = time.perf_counter()
with open(sys.argv[1], 'rb') as f:
    json.load(f)
print(time.perf_counter() - t)
"""


def python_peer(script, arg):
    # The script lives in bench-out/: Python puts a script's folder first on sys.path, and a stray
    # hta.py beside it (in /tmp, say) would shadow the real package.
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, dir=OUT) as f:
        f.write(script)
    try:
        wall, rss, out = timed([sys.executable, f.name, arg])
        return float(out.strip().splitlines()[-1]), rss
    finally:
        os.unlink(f.name)


def peers(files, rows):
    res = {}
    real = files[min(files)]
    try:
        import hta  # noqa: F401
        d = tempfile.mkdtemp()
        os.symlink(real, os.path.join(d, "rank-0.pt.trace.json"))
        log("bench: HTA on the 56 MB file")
        res["hta_56"] = python_peer(HTA_SCRIPT, d)
        shutil.rmtree(d)
    except ImportError:
        log("bench: HTA not installed (pip install holistictraceanalysis psutil); skipped")
    for mb, path in files.items():
        if mb > 1100:
            continue  # json.load of 2 GB needs ~20 GB of RAM on a 24 GB machine
        log(f"bench: json.load on {os.path.basename(path)}")
        res[f"json_{mb}"] = python_peer(JSON_LOAD, path)
    return res


def browser(files, runs, peers=True):
    script = os.path.join(ROOT, "bench", "browser.mjs")
    if not os.path.exists(os.path.join(ROOT, "dist", "index.html")):
        log("bench: no dist/ (run trunk build --release); browser figures skipped")
        return None
    log("bench: browser (headless Chromium)")
    cmd = ["node", script, "--runs", str(runs)] + ([] if peers else ["--no-speedscope"]) + [files[mb] for mb in sorted(files)]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        log(p.stderr[-3000:])
        return None
    return json.loads(p.stdout)


def gzip_browser(files, runs):
    """bench/gzip.mjs on a gzipped copy (made once, `gzip -6`) of the largest file up to 1 GB."""
    mb = max([m for m in files if m <= 1000] or [min(files)])
    src = files[mb]
    gz = src + ".gz"
    if not os.path.exists(gz):
        log(f"bench: gzipping {os.path.basename(src)} for the .gz figures")
        with open(gz + ".tmp", "wb") as out:
            subprocess.run(["gzip", "-6", "-c", src], stdout=out, check=True)
        os.rename(gz + ".tmp", gz)
    log("bench: a .json.gz in the browser, both inflaters")
    p = subprocess.run(["node", os.path.join(ROOT, "bench", "gzip.mjs"), "--runs", str(runs), gz],
                       capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        log(p.stderr[-3000:])
        return None
    return json.loads(p.stdout)


def long_task(ms):
    """The longest page task: the `longtask` observer reports only tasks over 50 ms."""
    return f"{ms:.0f} ms" if ms else "none over 50 ms"


def fmt_s(s):
    return f"{s:.2f} s" if s >= 0.1 else f"{s * 1000:.0f} ms"


def write_markdown(path, args, files, rows, peer, web, gz=None):
    """Replaces this script's sections of `path` (see md_sections.py); a section not measured in
    this run (peers with --no-peers, the browser with --no-browser) keeps its previous text."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    sections = {}
    sections["machine"] = ("Machine", "\n".join([
        f"Measured {now} on {platform.node() or 'this machine'}: {cpu}, {os.cpu_count()} cores, "
        f"{platform.system()} {platform.release()}.",
        f"Command: `bench/run {' '.join(args)}`. Wall time is the median of the runs; "
        "machines like this are noisy, so the ratios matter more than the seconds.",
    ]))
    lines = [
        "| file | MB | events | parse | parse MB/s | report (all analyses) | report MB/s | path (every step's critical path) | path minus parse | peak RSS | model | model / JSON | bytes per slice (columns) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['file']} | {r['mb']:.0f} | {r['events']:,} | {fmt_s(r['parse_s'])} | {r['parse_mbps']:.0f} | "
            f"{fmt_s(r['report_s'])} | {r['report_mbps']:.0f} | {fmt_s(r['path_s'])} | "
            f"{fmt_s(max(r['path_s'] - r['parse_s'], 0.0))} | {r['peak_rss'] / 1e6:.0f} MB | "
            f"{r['model_bytes'] / 1e6:.0f} MB | {r['model_bytes'] / (r['mb'] * 1e6):.2f}x | {r['bytes_per_slice']:.1f} |")
    sections["native"] = ("Native (`sightline`, release build)", "\n".join(lines))
    by_mb = {round(r["mb"]): r for r in rows}
    lines = ["| tool | file | time | peak RSS | Sightline `report` on the same file | ratio |", "|---|---|---|---|---|---|"]
    def peer_row(name, key, mb):
        if key not in peer:
            return
        secs, rss = peer[key]
        r = rows[[round(x["mb"]) for x in rows].index(mb)] if mb in by_mb else None
        if r:
            lines.append(f"| {name} | {r['file']} | {fmt_s(secs)} | {rss / 1e6:.0f} MB | {fmt_s(r['report_s'])} | "
                         f"{secs / r['report_s']:.0f}x faster |")
    small = min(by_mb)
    peer_row("HTA 0.5.0 (parse + temporal + idle breakdown)", "hta_56", small)
    for mb in sorted(files):
        peer_row("Python json.load (read it at all)", f"json_{mb}", round(os.path.getsize(files[mb]) / 1e6))
    if peer:
        sections["peers"] = ("Peers on the same files", "\n".join(lines))
    if web:
        lines = ["| file | MB | chosen -> timeline drawn | chosen -> every table ready | MB/s | longest page task | peak JS heap | peak wasm memory (session worker) | memory held at once (÷ file) | frame p50 / p95 zoomed out | frames painted per s, dragged zoomed out | frame p50 / p95 zoom+pan | frame p50 / p95 while the analyses run |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for w in web.get("sightline", []):
            lines.append(
                f"| {w['file']} | {w['mb']:.0f} | {fmt_s(w['drawn_s'])} | {fmt_s(w['ready_s'])} | {w['mb'] / w['ready_s']:.0f} | "
                f"{long_task(w['longest_task_ms'])} | {w['js_heap'] / 1e6:.0f} MB | {w['wasm_memory'] / 1e6:.0f} MB | "
                f"{w['held'] / 1e6:.0f} MB ({w['held'] / (w['mb'] * 1e6):.2f}x) | "
                f"{w['frame_idle_p50']:.1f} / {w['frame_idle_p95']:.1f} ms | {w['drag_fps']:.0f} | "
                f"{w['frame_zoom_p50']:.1f} / {w['frame_zoom_p95']:.1f} ms | {w['frame_busy_p50']:.0f} / {w['frame_busy_p95']:.0f} ms |")
        for s in web.get("speedscope", []):
            lines.append("")
            lines.append(f"speedscope (npm {s['version']}) on {s['file']}: {fmt_s(s['ready_s'])} from file chosen to "
                         f"its flame chart drawn ({s['note']}); Sightline on the same file in the same runs: "
                         f"{fmt_s(s['sightline_ready_s'])} to every table ready, {s['ratio']:.1f}x faster.")
        sections["browser"] = ("Browser (headless Chromium, the built site)", "\n".join(lines))
    if gz:
        lines = [f"{gz['file']} ({gz['gz_mb']:.0f} MB gzipped), median of {gz['runs']} runs each, in turns; "
                 f"the browser's inflater alone on the file: {fmt_s(gz['inflate_alone_s'])}.", "",
                 "| inflated by | reading | model build | chosen -> timeline drawn | MB of JSON per s to drawn | chosen -> every table ready | longest page task |",
                 "|---|---|---|---|---|---|---|"]
        names = {"browser": "the browser (`DecompressionStream`), in a worker of its own (the page's default)",
                 "wasm": "the Session's flate2, in the parsing worker (`?inflate=wasm`, as before)"}
        for way in ("browser", "wasm"):
            w = gz[way]
            lines.append(f"| {names[way]} | {fmt_s(w['read_s'])} | {fmt_s(w['finish_s'])} | {fmt_s(w['drawn_s'])} | "
                         f"{w['json_mb_per_s']:.0f} | {fmt_s(w['ready_s'])} | {long_task(w['longest_task_ms'])} |")
        sections["gzip"] = ("Browser, a `.json.gz`: the two inflaters", "\n".join(lines))
    # Each section says when and how it was measured, since a later run may leave some of them.
    stamp = f"\n\n(`bench/run {' '.join(args)}`, {now}.)"
    sections = {k: (h, b + (stamp if k != "machine" else "")) for k, (h, b) in sections.items()}
    replace_sections(path, sections)
    log(f"bench: wrote {', '.join(sections)} in {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="56,1000,2000", help="MB: 56 is the real trace, others are scaled")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--baseline", metavar="REV",
                    help="also time REV's build beside this one (the parser section; see bench/parser_bench.py)")
    ap.add_argument("--only-baseline", action="store_true",
                    help="with --baseline: measure only the parser section")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    subprocess.run(["cargo", "build", "--release", "--quiet"], check=True, cwd=ROOT)
    files = make_inputs(sizes)
    if a.baseline:
        import parser_bench
        sha, base_bin = parser_bench.build_baseline(ROOT, OUT, a.baseline, log)
        prows = parser_bench.compare(files, BIN, base_bin, a.runs, timed, log)
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        body = parser_bench.section(prows, sha) + f"\n\n(`bench/run {' '.join(sys.argv[1:])}`, {now}.)"
        replace_sections(a.out, {"parser": (f"The parser: this build beside an earlier one", body)})
        print(json.dumps({"parser": prows}, indent=1))
        if a.only_baseline:
            return
    rows = native(files, a.runs)
    peer = {} if a.no_peers else peers(files, rows)
    web = None if a.no_browser else browser(files, a.runs, not a.no_peers)
    gz = None if a.no_browser or web is None else gzip_browser(files, a.runs)
    write_markdown(a.out, sys.argv[1:], files, rows, peer, web, gz)
    print(json.dumps({"native": rows, "peers": peer, "browser": web, "gzip": gz}, indent=1))


if __name__ == "__main__":
    main()
