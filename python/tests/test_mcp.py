"""`sightline mcp` as an agent's client meets it: the official MCP Python SDK (`mcp`, the
reference client) starts the server over stdio, completes the protocol's handshake, lists the
tools and asks for a report and a what-if on a recorded trace; the answers are the CLI's `--json`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any, Dict, List

from conftest import LOCAL, cli_path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TRACE = LOCAL / "judge" / "small_op_storm.base.pt.trace.json.gz"
TIMED = ("parse_seconds", "analysis_seconds", "mb_per_s")


def cli_json(*args: str) -> Dict[str, Any]:
    out = subprocess.run([str(cli_path()), *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def untimed(v: Dict[str, Any]) -> Dict[str, Any]:
    return {k: x for k, x in v.items() if k not in TIMED}


def answer(result: Any) -> Dict[str, Any]:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def session_answers() -> Dict[str, Any]:
    params = StdioServerParameters(command=str(cli_path()), args=["mcp"])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            tools = await s.list_tools()
            report = answer(await s.call_tool("report", {"file": str(TRACE), "top": 5}))
            edits: List[str] = report["findings"][0]["saving"]["edits"]
            path = answer(await s.call_tool("path", {"files": [str(TRACE)], "what_if": edits}))
            missing = await s.call_tool("report", {"file": str(TRACE) + ".missing"})
            return {"init": init, "tools": tools.tools, "report": report, "edits": edits, "path": path, "missing": missing}


def test_the_reference_client_gets_the_clis_report_and_what_if() -> None:
    got = asyncio.run(asyncio.wait_for(session_answers(), timeout=120))
    assert got["init"].server_info.name == "sightline"
    assert got["init"].capabilities.tools is not None
    names = {t.name for t in got["tools"]}
    for want in ("open", "summary", "report", "ops", "kernels", "idle", "steps", "path", "memory", "ranks", "diff", "graphs", "compiled"):
        assert want in names, names
    for t in got["tools"]:
        assert t.description and t.input_schema["type"] == "object", t

    cli = cli_json("report", str(TRACE), "--json", "--top", "5")
    assert untimed(got["report"]) == untimed(cli)
    assert got["report"]["findings"][0]["id"] == "small_op_storm"

    edits = got["edits"]
    assert edits
    args = ["path", str(TRACE), "--json"]
    for e in edits:
        args += ["--what-if", e]
    cli_path_json = cli_json(*args)
    assert got["path"]["what_if"] == cli_path_json["what_if"]
    for ours, theirs in zip(got["path"]["paths"], cli_path_json["paths"], strict=True):
        for key in ("rank", "step", "length_us", "bound_by"):
            assert ours[key] == theirs[key], key

    # A failure is a tool result marked as an error, with the CLI's message.
    missing = got["missing"]
    assert missing.is_error
    assert "missing" in missing.content[0].text
