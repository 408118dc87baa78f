"""The parser side by side with an earlier build: `bench/run --baseline REV` (bench.py calls this).

Builds REV's `sightline` (a git worktree under bench-out/, its own target folder, kept between runs),
then times both builds on the same files in turns (A B A B ...), so a drift of the machine's speed
hits both: `summary` on one core (`taskset -c 0`: the parse and little else), `report` on every
core (the parse in parallel, then every analysis), and `report`'s peak RSS against the file size.
Writes the `parser` section of BENCHMARKS.md.
"""
import os
import shutil
import statistics
import subprocess


def build_baseline(root, out, rev, log):
    """The release binary of `rev`, built once into bench-out/."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=root, check=True,
                         capture_output=True, text=True).stdout.strip()
    tree = os.path.join(out, f"baseline-{sha}")
    target = os.path.join(out, "baseline-target")
    binary = os.path.join(target, "release", "sightline")
    stamp = os.path.join(out, "baseline-target", "built-from")
    if os.path.exists(binary) and os.path.exists(stamp) and open(stamp).read() == sha:
        return sha, binary
    if not os.path.exists(tree):
        log(f"bench: checking out {sha} for the baseline")
        subprocess.run(["git", "worktree", "add", "--detach", tree, sha], cwd=root, check=True,
                       capture_output=True)
    # The fixtures live beside the repository; the baseline's build script does not need them.
    log(f"bench: building {sha}'s sightline (a few minutes)")
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "sightline"], cwd=tree,
                   env=env, check=True)
    with open(stamp, "w") as f:
        f.write(sha)
    subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=root, capture_output=True)
    return sha, binary


def compare(files, this_bin, base_bin, runs, timed, log):
    """Rows per file: median wall of each build for `summary` on one core and `report` on all."""
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    rows = []
    for mb, path in sorted(files.items()):
        size = os.path.getsize(path)
        log(f"bench: parser, this build and the baseline on {os.path.basename(path)}")
        fig = {k: [] for k in ("one_new", "one_old", "rep_new", "rep_old")}
        rss = {"new": 0, "old": 0}
        for _ in range(runs):
            for key, binary in (("new", this_bin), ("old", base_bin)):
                wall, _, _ = timed(pin + [binary, "summary", path, "--json"])
                fig[f"one_{key}"].append(wall)
                wall, peak, _ = timed([binary, "report", path, "--json"])
                fig[f"rep_{key}"].append(wall)
                rss[key] = max(rss[key], peak)
        med = {k: statistics.median(v) for k, v in fig.items()}
        rows.append({"file": os.path.basename(path), "mb": size / 1e6, **med,
                     "rss_new": rss["new"], "rss_old": rss["old"]})
    return rows


def section(rows, sha):
    lines = [
        f"| file | MB | `summary`, one core: this build | {sha} | speed-up | `report`, all cores: this build | {sha} | speed-up | peak RSS ÷ file: this build | {sha} |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mb = r["mb"]
        lines.append(
            f"| {r['file']} | {mb:.0f} | {r['one_new']:.2f} s ({mb / r['one_new']:.0f} MB/s) | "
            f"{r['one_old']:.2f} s ({mb / r['one_old']:.0f} MB/s) | {r['one_old'] / r['one_new']:.2f}x | "
            f"{r['rep_new']:.2f} s ({mb / r['rep_new']:.0f} MB/s) | {r['rep_old']:.2f} s ({mb / r['rep_old']:.0f} MB/s) | "
            f"{r['rep_old'] / r['rep_new']:.2f}x | {r['rss_new'] / (mb * 1e6):.2f}x | {r['rss_old'] / (mb * 1e6):.2f}x |")
    return "\n".join(lines)
