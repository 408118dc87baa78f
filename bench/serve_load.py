#!/usr/bin/env python3
"""`sightline serve` under load, on 127.0.0.1: what a normal client meets while others hold
connections, and what holding them costs the server.

Usage: bench/serve_load.py [SIGHTLINE] [--held N] [--stream-gb G]

SIGHTLINE defaults to target/release/sightline. For each kind of held client (slow request heads,
a byte every 250 ms; clients that ask for a 64 MB file and never read; idle connections past the
connection cap) it holds N connections (default 200; the cap case holds the cap plus N) for 3 s,
fetches /api/runs five times meanwhile, and prints the slowest fetch and the statuses it got, the
server's threads (from /proc/PID/status) and its resident memory, idle and held. Then it streams
a G GB sparse file (default 3) with curl, once to fill the page cache and once timed, and prints
MB/s and the peak RSS. Linux only (/proc).
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAP = 512


def status(pid):
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        fields[k] = v.split()[0] if v.split() else ""
    return int(fields["Threads"]), int(fields["VmRSS"]) / 1024


def start(exe, logdir):
    p = subprocess.Popen(
        [exe, "serve", str(logdir), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "SIGHTLINE_DIST"},
    )
    line = p.stdout.readline()
    port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
    return p, port


def fetch(port, target="/api/runs"):
    """The status of a GET of `target`."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    return int(data.split(b" ")[1])


def worst_latency(port):
    """The slowest of five listings, and the statuses they got."""
    worst, statuses = 0.0, set()
    for _ in range(5):
        t = time.perf_counter()
        statuses.add(fetch(port))
        worst = max(worst, time.perf_counter() - t)
    return worst, statuses


def hold(port, kind, n):
    conns = []
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        if kind == "slow heads":
            c.sendall(f"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
        elif kind == "never read":
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            c.sendall(f"GET /logdir/big.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        conns.append(c)
    return conns


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sightline", nargs="?", default=str(ROOT / "target/release/sightline"))
    ap.add_argument("--held", type=int, default=200)
    ap.add_argument("--stream-gb", type=float, default=3)
    a = ap.parse_args()
    logdir = Path(tempfile.mkdtemp(prefix="sightline-serve-load-"))
    try:
        shutil.copytree(ROOT / "tests/fixtures/logdir", logdir, dirs_exist_ok=True)
        with open(logdir / "big.json", "wb") as f:
            f.truncate(64 << 20)
        print(f"| held clients | normal client's listing, slowest of 5 | threads idle / held | RSS idle / held |")
        print("| --- | --- | --- | --- |")
        for kind, n in [("slow heads", a.held), ("never read", a.held), ("idle, past the cap", CAP + a.held)]:
            p, port = start(a.sightline, logdir)
            try:
                assert fetch(port) == 200
                idle = status(p.pid)
                conns = hold(port, kind, n)
                stop = threading.Event()

                def trickle():
                    while not stop.wait(0.25):
                        for c in conns:
                            c.send(b"a")

                if kind == "slow heads":
                    threading.Thread(target=trickle, daemon=True).start()
                time.sleep(1.5)
                if kind == "idle, past the cap":
                    # The cap is full: a normal client is answered 503; time that instead.
                    t = time.perf_counter()
                    s = socket.create_connection(("127.0.0.1", port), timeout=10)
                    s.sendall(b"GET /api/runs HTTP/1.1\r\nHost: x\r\n\r\n")
                    answer = s.recv(200)
                    worst = time.perf_counter() - t
                    s.close()
                    what = f"{worst * 1e3:.1f} ms ({answer.split(b' ')[1].decode()})"
                else:
                    worst, statuses = worst_latency(port)
                    what = f"{worst * 1e3:.1f} ms ({', '.join(map(str, sorted(statuses)))})"
                held = status(p.pid)
                stop.set()
                print(f"| {n} {kind} | {what} | {idle[0]} / {held[0]} | {idle[1]:.1f} / {held[1]:.1f} MB |")
                for c in conns:
                    c.close()
            finally:
                p.kill()
                p.wait()
        if a.stream_gb > 0 and shutil.which("curl"):
            size = int(a.stream_gb * (1 << 30))
            with open(logdir / "huge.json", "wb") as f:
                f.truncate(size)
            p, port = start(a.sightline, logdir)
            try:
                peak = [0.0]
                done = threading.Event()

                def watch():
                    while not done.wait(0.05):
                        peak[0] = max(peak[0], status(p.pid)[1])

                url = f"http://127.0.0.1:{port}/logdir/huge.json"
                # Once to bring the file's pages into the page cache (a sparse file's first read
                # allocates them), then timed.
                subprocess.run(["curl", "-s", "-o", "/dev/null", url], check=True)
                threading.Thread(target=watch, daemon=True).start()
                t = time.perf_counter()
                subprocess.run(["curl", "-s", "-o", "/dev/null", url], check=True)
                secs = time.perf_counter() - t
                done.set()
                print(f"\n{a.stream_gb:g} GB streamed to curl in {secs:.2f} s: {size / secs / 1e6:.0f} MB/s, peak RSS {peak[0]:.1f} MB")
            finally:
                p.kill()
                p.wait()
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
