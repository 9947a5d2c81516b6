"""``cordon mcp`` driven by the official MCP Python SDK client, against real jails."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from cordon_sandbox import cordon_binary

from ._support import SENTINEL


async def _call_all(workspace: Path, home: Path, calls: list[dict[str, Any]]) -> tuple[Any, Any, list[Any]]:
    params = StdioServerParameters(
        command=cordon_binary(),
        args=["mcp", "--cwd", str(workspace), "--timeout", "30"],
        env={"HOME": str(home)},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        results = [await session.call_tool("run", call) for call in calls]
    return init, tools, results


def test_cordon_mcp_serves_a_run_tool_whose_calls_are_jailed(home: Path, workspace: Path) -> None:
    calls: list[dict[str, Any]] = [
        {"argv": ["sh", "-c", "echo made > made.txt; cat made.txt"]},
        {"argv": ["sh", "-c", "cat ~/.ssh/id_ed25519; echo x > ~/planted; echo x > /usr/cordon-test-planted"]},
        {"argv": ["sleep", "30"], "timeout": 1},
        {"argv": ["sleep", "1"], "timeout": 100000},
        {"argv": ["rm", "-rf", "/"]},
        {"argv": []},
        {"argv": "ls"},
    ]
    init, tools, results = asyncio.run(_call_all(workspace, home, calls))
    assert init.server_info.name == "cordon"
    [tool] = tools.tools
    assert tool.name == "run" and tool.input_schema["required"] == ["argv"]
    assert set(tool.input_schema["properties"]) == {"argv", "timeout"}
    made, secret, timed_out, capped, floor, empty, string = results

    assert not made.is_error
    assert made.structured_content["exit_code"] == 0
    assert made.structured_content["stdout"]["text"] == "made\n"
    assert made.structured_content["sandboxed"] is True
    assert (workspace / "made.txt").read_text() == "made\n"

    assert not secret.is_error
    text = str(secret.structured_content) + "".join(c.text for c in secret.content if c.type == "text")
    assert SENTINEL not in text
    assert not (home / "planted").exists()
    assert not Path("/usr/cordon-test-planted").exists()
    assert any(v["kind"] == "write-denied" for v in secret.structured_content["violations"])

    assert timed_out.is_error and timed_out.structured_content["status"] == "timeout"
    assert timed_out.structured_content["exit_code"] == 124
    # A call's timeout only shortens the server's own: 100000 s ran with 30 s, and finished.
    assert not capped.is_error and capped.structured_content["exit_code"] == 0

    assert floor.is_error and floor.structured_content["status"] == "refused"
    assert floor.structured_content["rule"] == "recursive-delete"

    for bad in (empty, string):
        assert bad.is_error and bad.structured_content["exit_code"] == 125
        assert "argv" in bad.structured_content["error"]
