"""A real third-party MCP server in the jail: the reference filesystem server from npm
(``@modelcontextprotocol/server-filesystem``, installed on the host by the CI step), run under
``cordon run --profile mcp-stdio`` and driven by the official MCP Python SDK client.

The server is told that three directories are its to serve: the workspace, the workspace's
parent (which holds a file outside cordon's grant; beside the home, not in it) and the home
directory (which holds a private key). Its own checks allow all three; the jail grants only the workspace. So every
refusal below is the jail's doing, not the server's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from cordon_sandbox import cordon_binary

from ._support import SENTINEL, env_path

OUTSIDE = "CORDON-TEST-OUTSIDE-THE-GRANT"


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def _drive(server: Path, home: Path, base: Path, workspace: Path) -> dict[str, Any]:
    modules = server.parents[3]  # .../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
    params = StdioServerParameters(
        command=cordon_binary(),
        args=[
            "run", "--profile", "mcp-stdio", "--cwd", str(workspace), "--read", str(modules), "--",
            "node", str(server), str(workspace), str(base), str(home),
        ],
        env={"HOME": str(home)},
    )
    out: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["tools"] = {t.name for t in (await session.list_tools()).tools}
        call = session.call_tool
        out["allowed"] = _text(await call("list_allowed_directories", {}))
        out["read"] = await call("read_text_file", {"path": str(workspace / "notes.txt")})
        out["write"] = await call("write_file", {"path": str(workspace / "new.txt"), "content": "written"})
        out["edit"] = await call(
            "edit_file",
            {"path": str(workspace / "notes.txt"), "edits": [{"oldText": "draft", "newText": "final"}]},
        )
        out["list"] = await call("list_directory", {"path": str(workspace)})
        out["key"] = await call("read_text_file", {"path": str(home / ".ssh" / "id_ed25519")})
        out["outside"] = await call("read_text_file", {"path": str(base / "outside.txt")})
        out["plant"] = await call("write_file", {"path": str(base / "planted.txt"), "content": "x"})
        out["plant_home"] = await call("write_file", {"path": str(home / "planted.txt"), "content": "x"})
    return out


def test_the_reference_filesystem_server_works_inside_its_grant_and_nowhere_else(home: Path) -> None:
    server = env_path("CORDON_TEST_MCP_FILESYSTEM")
    base = home.parent / "projects"
    workspace = base / "work"
    workspace.mkdir(parents=True)
    (workspace / "notes.txt").write_text("a draft\n")
    (base / "outside.txt").write_text(OUTSIDE + "\n")

    out = asyncio.run(_drive(server, home, base, workspace))

    assert {"read_text_file", "write_file", "edit_file", "list_directory"} <= out["tools"]
    # The server believes all three directories are its own ...
    for directory in (workspace, base, home):
        assert str(directory) in out["allowed"]
    # ... and works inside the workspace, the jail's grant.
    assert not out["read"].is_error and _text(out["read"]) == "a draft\n"
    assert not out["write"].is_error and (workspace / "new.txt").read_text() == "written"
    assert not out["edit"].is_error and (workspace / "notes.txt").read_text() == "a final\n"
    assert not out["list"].is_error and "notes.txt" in _text(out["list"])
    # Outside it the jail refuses what the server would allow: nothing outside the grant is read
    # or written ...
    for name in ("key", "outside", "plant"):
        assert out[name].is_error, (name, _text(out[name]))
    everything = "".join(_text(r) for r in out.values() if hasattr(r, "content"))
    assert SENTINEL not in everything and OUTSIDE not in everything
    # ... and nothing written reaches the host. (The mcp-stdio profile's home is a private one,
    # so the server's write into the home "succeeds" there and vanishes with the jail.)
    assert not (base / "planted.txt").exists() and not (home / "planted.txt").exists()
