"""`Session` and the asyncio variants: many commands over ``cordon serve``, real jails."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cordon_sandbox import AsyncSession, InvalidRequest, Refused, Session, SessionClosed, run_async

from ._support import SENTINEL


def test_a_session_runs_many_commands_each_in_a_jail_built_ahead(home: Path, workspace: Path) -> None:
    with Session(cwd=workspace, timeout=30, workspace="live") as session:
        first = session.run(["sh", "-c", "echo 1 > one.txt; cat ~/.ssh/id_ed25519"])
        second = session.run(["cat", "one.txt"])
        third = session.run(["sh", "-c", "exit 4"])
    assert first.status == "exited" and SENTINEL not in first.stdout + first.stderr
    assert first.workspace == "live" and first.changes is None
    assert second.stdout == "1\n"
    # After the first command, each next one is handed to a jail built while we waited.
    assert second.built_ahead and third.built_ahead
    assert third.exit_code == 4
    with pytest.raises(SessionClosed):
        session.run(["true"])


def test_a_default_session_commits_each_commands_layer_before_the_next(workspace: Path) -> None:
    with Session(cwd=workspace, timeout=30) as session:
        first = session.run(["sh", "-c", "echo 1 > one.txt; mkdir -p .vscode; echo x > .vscode/tasks.json"])
        second = session.run(["cat", "one.txt"])
    # A layered command runs in the jail built ahead of it, which takes the layer when the
    # command comes: it sees what the one before committed.
    assert first.workspace == "layer" and second.built_ahead
    assert second.stdout == "1\n"
    assert first.changes is not None and first.changes["applied"] is True
    report = first.changes["roots"][0]["report"]
    assert [a["path"] for a in report["added"]] == ["one.txt"]
    assert ".vscode" in [r["path"] for r in report["refused"]]
    assert not (workspace / ".vscode").exists()
    assert any(v.kind == "change-refused" for v in first.violations)


def test_a_session_run_takes_the_same_options_as_run(workspace: Path) -> None:
    with Session(cwd=workspace) as session:
        timed_out = session.run(["sleep", "30"], timeout=1)
        greeted = session.run(["sh", "-c", 'echo "$GREETING"'], env={"GREETING": "hello"})
        plain = session.run(["sh", "-c", 'echo "${GREETING:-unset}"'])
    assert timed_out.timed_out and timed_out.exit_code == 124
    assert greeted.stdout == "hello\n"
    assert plain.stdout == "unset\n"


def test_a_session_raises_refusals_and_goes_on(workspace: Path) -> None:
    with Session(cwd=workspace) as session:
        with pytest.raises(Refused) as refused:
            session.run(["rm", "-rf", "/"])
        assert refused.value.rule == "recursive-delete" and refused.value.exit_code == 126
        assert session.run(["echo", "still here"]).stdout == "still here\n"


def test_a_session_cordon_cannot_start_says_why(home: Path) -> None:
    with Session(cwd=home) as session, pytest.raises(InvalidRequest) as refused:
        session.run(["true"])
    assert refused.value.exit_code == 125 and str(home) in refused.value.message


def test_run_async_and_async_session(home: Path, workspace: Path) -> None:
    async def main() -> None:
        result = await run_async(["sh", "-c", "echo async > a.txt; cat a.txt"], cwd=workspace)
        assert (result.exit_code, result.stdout) == (0, "async\n")
        with pytest.raises(Refused):
            await run_async(["rm", "-rf", "/"], cwd=workspace)
        async with AsyncSession(cwd=workspace, workspace="live") as session:
            results = [await session.run(["cat", "a.txt"]) for _ in range(3)]
            secret = await session.run(["cat", str(home / ".ssh" / "id_ed25519")])
            timed_out = await session.run(["sleep", "30"], timeout=1)
        assert [r.stdout for r in results] == ["async\n"] * 3
        assert results[-1].built_ahead
        assert secret.exit_code != 0 and SENTINEL not in secret.stdout
        assert timed_out.timed_out
        with pytest.raises(SessionClosed):
            await session.run(["true"])

    asyncio.run(main())
