#!/usr/bin/env python3
"""`sightline ranks` on jobs of many ranks: wall time and peak memory (max RSS); with `--page`, the
same jobs opened in the page too (`bench/ranks-page.mjs`, headless Chromium, needs dist/).

    python3 bench/ranks.py [--ranks 8,32] [--mb 1,50] [--runs 3] [--bin target/release/sightline]
                           [--jobs 8x1,32x1,8x100] [--page] [--write BENCHMARKS.md]

A job of N ranks is made from the eight real `param_dlrm_v100_rank*of8` traces of the shared fixtures:
rank r is a copy of DLRM rank r % 8 with its `distributedInfo` rewritten to rank r of N, made about M MB
(plain JSON) with `shared/tools/scale_trace.py` when M is larger than the original (about 1 MB). Each
job is opened with `sightline ranks DIR --json` (output discarded) `--runs` times; the median wall time
and the largest max RSS (`/usr/bin/time -v`) are printed as a Markdown table with the machine's cores.
Jobs are kept in `bench-out/ranks/` between runs. `--write` puts the tables in their generated sections
of BENCHMARKS.md (`ranks-cli`, `ranks-page`; see bench/md_sections.py), keeping the rest of the file.
"""
import argparse, gzip, json, os, re, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from md_sections import replace_sections  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shared():
    env = os.environ.get("SIGHTLINE_FIXTURES")
    return env if env else os.path.join(os.path.dirname(ROOT), "shared", "fixtures")


def base_trace(rank8, mb, work):
    """DLRM rank `rank8` as plain JSON of about `mb` MB."""
    src = os.path.join(shared(), "real", f"param_dlrm_v100_rank{rank8}of8.pt.trace.json.gz")
    out = os.path.join(work, f"base{rank8}_{mb}mb.json")
    if not os.path.exists(out):
        if mb <= 1:
            with gzip.open(src, "rb") as f, open(out, "wb") as g:
                shutil.copyfileobj(f, g)
        else:
            tool = os.path.join(os.path.dirname(shared()), "tools", "scale_trace.py")
            subprocess.run([sys.executable, tool, src, out, "--target-mb", str(mb)], check=True)
    return out


def make_job(n, mb, work):
    job = os.path.join(work, f"job{n}x{mb}mb")
    if os.path.isdir(job) and len(os.listdir(job)) == n:
        return job
    os.makedirs(job, exist_ok=True)
    pattern = re.compile(rb'"distributedInfo": ?\{[^}]*\}')
    for r in range(n):
        with open(base_trace(r % 8, mb, work), "rb") as f:
            text = f.read()
        info = b'"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d}' % (r, n)
        text, k = pattern.subn(info, text, count=1)
        assert k == 1, "no distributedInfo"
        with open(os.path.join(job, f"rank{r}.pt.trace.json"), "wb") as g:
            g.write(text)
    return job


def measure(binary, job, runs):
    walls, rss = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-v", binary, "ranks", job, "--json"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
        walls.append(time.perf_counter() - t)
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        rss = max(rss, int(m.group(1)) * 1024)
    return statistics.median(walls), rss


def commit():
    p = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return p.stdout.strip() or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="8,32")
    ap.add_argument("--mb", default="1,50")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "sightline"))
    ap.add_argument("--jobs", help="RANKSxMB,... instead of every --ranks with every --mb")
    ap.add_argument("--page", action="store_true", help="also open each job in the page")
    ap.add_argument("--write", metavar="MD", help="write the tables into MD's generated sections")
    a = ap.parse_args()
    work = os.path.join(ROOT, "bench-out", "ranks")
    os.makedirs(work, exist_ok=True)
    load = os.getloadavg()[0]
    num = lambda x: float(x) if "." in x else int(x)
    if a.jobs:
        plan = [(int(j.split("x")[0]), num(j.split("x")[1])) for j in a.jobs.split(",")]
        asked = f"--jobs {a.jobs}"
    else:
        plan = [(n, mb) for mb in map(num, a.mb.split(",")) for n in map(int, a.ranks.split(","))]
        asked = f"--ranks {a.ranks} --mb {a.mb}"
    head = (f"`python3 bench/ranks.py {asked} --runs {a.runs}"
            f"{' --page' if a.page else ''}` (commit {commit()}, release build), {os.cpu_count()} cores, "
            f"load average {load:.1f} at the start.")
    cli = [head, "",
           "Rank r is a copy of `param_dlrm_v100_rank{r % 8}of8` with its `distributedInfo` rewritten to rank r of N "
           "(larger ranks scaled with `shared/tools/scale_trace.py`, plain JSON). Each run is "
           "`sightline ranks DIR --json`: every file parsed (one thread per file, a core's worth at a time), "
           "reduced to its digest and dropped, then the ranks compared.", "",
           "| ranks | MB per rank | total MB | wall s (median) | max RSS MB | RSS per rank MB |",
           "|---|---|---|---|---|---|"]
    page = [head, "",
            "The same jobs chosen together in the page's file input (`bench/ranks-page.mjs`, headless Chromium): "
            "from the input's change event to every rank digested (each in its own worker, "
            "`navigator.hardwareConcurrency` at a time) and to the job shown (report, tables, bands drawn). "
            "At most 8 ranks keep their timeline and worker; the others keep their digest only. Memory: the "
            "wasm heap (trace and timeline index) of a rank with a timeline, and the resident memory Chromium "
            "gained with the job open, per rank.", "",
            "| ranks | MB per rank | digested s | shown s | timelines | wasm heap per timeline MB | digest kB per rank | Chromium RSS added per rank MB |",
            "|---|---|---|---|---|---|---|---|"]
    print("\n".join(cli))
    jobs = []
    for n, mb in plan:
        job = make_job(n, mb, work)
        jobs.append((n, job))
        total = sum(os.path.getsize(os.path.join(job, f)) for f in os.listdir(job)) / 1e6
        wall, rss = measure(a.bin, job, a.runs)
        row = f"| {n} | {total / n:.1f} | {total:.0f} | {wall:.2f} | {rss / 1e6:.0f} | {rss / 1e6 / n:.1f} |"
        cli.append(row)
        print(row, flush=True)
    sections = {"ranks-cli": ("Many ranks: `sightline ranks`", "\n".join(cli))}
    if a.page:
        out = subprocess.run(["node", os.path.join(ROOT, "bench", "ranks-page.mjs")] + [j for _, j in jobs],
                             capture_output=True, text=True, check=True, cwd=ROOT).stdout
        for line in out.splitlines():
            r = json.loads(line)
            row = (f"| {r['files']} | {r['total_mb'] / r['files']:.1f} | {r['digested_ms'] / 1e3:.2f} | "
                   f"{r['ready_ms'] / 1e3:.2f} | {r['timelines']} | {r['wasm_heap_per_timeline_mb']} | "
                   f"{r['digest_kb_per_rank']} | {r['chromium_rss_added_per_rank_mb']} |")
            page.append(row)
            print(row, flush=True)
        sections["ranks-page"] = ("Many ranks in the page", "\n".join(page))
    if a.write:
        replace_sections(a.write, sections)


if __name__ == "__main__":
    main()
