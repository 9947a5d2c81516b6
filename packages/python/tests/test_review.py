"""`changes`, `diff`, `apply` and `drop`: a harness decides on what reviewed runs keep."""

from __future__ import annotations

from pathlib import Path

import pytest

from cordon_sandbox import InvalidRequest, apply, changes, diff, drop, run


def _kept_run(workspace: Path, script: str) -> str:
    result = run(["sh", "-c", script], cwd=workspace, workspace="review", timeout=30)
    assert result.exit_code == 0 and result.workspace == "review", result
    assert result.changes is not None and result.changes["applied"] is False
    return str(result.changes["roots"][0]["report"]["run"])


def test_a_reviewed_run_is_listed_shown_and_then_applied_or_dropped(workspace: Path) -> None:
    kept = _kept_run(workspace, "echo kept > a.txt")
    dropped = _kept_run(workspace, "echo dropped > b.txt")
    # Nothing reached the workspace while the runs wait for a decision.
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    names = [r["run"] for r in changes(cwd=workspace)]
    assert kept in names and dropped in names
    assert "a.txt" in [e["path"] for e in diff(kept, cwd=workspace)["entries"]]

    report = apply(kept, cwd=workspace)
    assert report["applied"] is True
    assert (workspace / "a.txt").read_text() == "kept\n"
    drop(dropped, cwd=workspace)
    assert not (workspace / "b.txt").exists()
    assert dropped not in [r["run"] for r in changes(cwd=workspace)]


def test_a_run_that_is_not_kept_or_not_a_name_is_refused_by_name(workspace: Path) -> None:
    with pytest.raises(InvalidRequest) as e:
        apply("no-such-run", cwd=workspace)
    assert "no-such-run" in e.value.message
    with pytest.raises(InvalidRequest) as e:
        drop("--help", cwd=workspace)
    assert "--help" in e.value.message
    with pytest.raises(InvalidRequest):
        apply("x", cwd=workspace, paths="a.txt")  # type: ignore[arg-type]
