#!/usr/bin/env python3
"""`sightline mcp` as an agent uses it, through the official MCP Python SDK: how long each question
takes, the first (parse and analyses) and the next ones (the trace kept), and the server's memory.

Usage: bench/mcp_session.py TRACE [SIGHTLINE]

SIGHTLINE defaults to target/release/sightline. Needs the SDK (`pip install mcp`; not one of the
suite's dependencies). Asks `report` twice, then `ops`, `kernels`, `idle` and `path` with a
what-if (`kernels*0.5`) about TRACE in one session, and prints each answer's time and size, then
the server's VmRSS (Linux, /proc).
"""

import asyncio
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent


async def main(trace: str, binary: str) -> None:
    params = StdioServerParameters(command=binary, args=["mcp"])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            print(f"protocol {init.protocol_version}, server {init.server_info.name} {init.server_info.version}")
            questions = [
                ("report", {"file": trace}),
                ("report", {"file": trace}),
                ("ops", {"file": trace}),
                ("kernels", {"file": trace}),
                ("idle", {"file": trace}),
                ("path", {"files": [trace], "what_if": ["kernels*0.5"]}),
            ]
            for name, args in questions:
                t = time.perf_counter()
                res = await s.call_tool(name, args)
                took = time.perf_counter() - t
                size = len(res.content[0].text)
                print(f"{name:8} {'error' if res.is_error else 'ok':5} {took:8.3f} s {size:9} bytes")
            pids = subprocess.run(["pgrep", "-f", f"{binary} mcp"], capture_output=True, text=True).stdout.split()
            for pid in pids:
                rss = [l.split(":", 1)[1].strip() for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")]
                print(f"server RSS {rss[0] if rss else '?'}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "target/release/sightline")
    asyncio.run(main(str(Path(sys.argv[1]).resolve()), binary))
