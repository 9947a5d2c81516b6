"""`run`: one ``cordon run --json`` per command, against real jails."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from cordon_sandbox import InvalidRequest, Refused, Result, cordon_binary, run

from ._support import SENTINEL


def test_the_wheel_carries_the_binary_this_package_runs() -> None:
    binary = Path(cordon_binary())
    assert binary.parent == Path(sysconfig.get_path("scripts")), binary
    assert Path(sys.prefix) in binary.parents
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    assert version.split() == ["cordon", importlib.metadata.version("cordon-sandbox")]


def test_a_command_writes_its_workspace_and_reports_the_jail(workspace: Path) -> None:
    result = run(["sh", "-c", "echo hello > note.txt && cat note.txt"], cwd=workspace)
    assert isinstance(result, Result)
    assert (result.status, result.exit_code, result.stdout) == ("exited", 0, "hello\n")
    assert result.ok and not result.timed_out
    assert result.sandboxed and result.backend == "bubblewrap"
    assert result.policy_hash and result.policy_hash.startswith("sha256:")
    assert not result.stdout_truncated and result.stdout_bytes == 6
    assert (workspace / "note.txt").read_text() == "hello\n"


def test_credentials_stay_hidden_and_writes_outside_are_denied(home: Path, workspace: Path) -> None:
    # A write to the home lands in the workspace's private home, never the real one; a write
    # outside the writable set is denied.
    script = "cat ~/.ssh/id_ed25519; echo planted > ~/planted; echo x > /usr/cordon-test-planted; echo done"
    result = run(["sh", "-c", script], cwd=workspace)
    assert SENTINEL not in result.stdout + result.stderr
    assert result.stdout == "done\n"
    assert not (home / "planted").exists()
    assert not Path("/usr/cordon-test-planted").exists()
    kinds = {v.kind for v in result.violations}
    assert "write-denied" in kinds, result.violations
    denied = [v for v in result.violations if v.kind == "write-denied"]
    assert denied[0].path == "/usr/cordon-test-planted", denied


def test_a_failing_command_is_a_result_not_an_exception(workspace: Path) -> None:
    result = run(["sh", "-c", "echo oops >&2; exit 3"], cwd=workspace)
    assert (result.status, result.exit_code, result.stderr) == ("exited", 3, "oops\n")
    assert not result.ok


def test_the_timeout_kills_the_command(workspace: Path) -> None:
    result = run(["sleep", "30"], cwd=workspace, timeout=1)
    assert result.timed_out and result.exit_code == 124
    assert result.duration_ms < 20_000


def test_output_past_the_cap_is_truncated_and_counted(workspace: Path) -> None:
    # The shell profile keeps 4 MiB of each stream.
    result = run(["sh", "-c", f"yes | head -c {5 << 20}"], cwd=workspace)
    assert result.stdout_truncated and not result.stderr_truncated
    assert result.stdout_bytes == 5 << 20
    assert len(result.stdout) == 4 << 20


def test_env_values_reach_the_command_and_injection_names_are_refused(workspace: Path) -> None:
    result = run(["sh", "-c", 'echo "$GREETING"'], cwd=workspace, env={"GREETING": "hi there"})
    assert result.stdout == "hi there\n"
    with pytest.raises(InvalidRequest) as refused:
        run(["true"], cwd=workspace, env={"LD_PRELOAD": "/x.so"})
    assert refused.value.exit_code == 125
    assert "LD_PRELOAD" in refused.value.message


def test_the_floor_refuses_with_its_rule(workspace: Path) -> None:
    with pytest.raises(Refused) as refused:
        run(["rm", "-rf", "/"], cwd=workspace)
    assert refused.value.exit_code == 126
    assert refused.value.rule == "recursive-delete"
    assert refused.value.result is not None and refused.value.result.status == "refused"


def test_a_workspace_cordon_refuses_is_invalid_input(home: Path) -> None:
    with pytest.raises(InvalidRequest) as refused:
        run(["true"], cwd=home)
    assert refused.value.exit_code == 125
    assert str(home) in refused.value.message


def test_a_profile_and_the_proxy_network_are_passed_on(workspace: Path) -> None:
    result = run(["true"], cwd=workspace, profile="quality-gate")
    assert result.ok
    result = run(["true"], cwd=workspace, network="proxy", allow_hosts=["example.test:8080"])
    assert result.ok and result.network is not None and result.network.mode == "proxy"
    with pytest.raises(InvalidRequest) as unknown:
        run(["true"], cwd=workspace, profile="no-such-profile")
    assert "no-such-profile" in unknown.value.message


@pytest.mark.parametrize(
    ("argv", "options", "error"),
    [
        ("ls -l", {}, TypeError),
        ([], {}, ValueError),
        (["ls", 1], {}, TypeError),
        (["ls"], {"timeout": 0}, ValueError),
        (["ls"], {"timeout": 1.5}, ValueError),
        (["ls"], {"network": "open"}, ValueError),
        (["ls"], {"allow_hosts": "example.test"}, TypeError),
        (["ls"], {"env": {"A=B": "c"}}, ValueError),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(
    workspace: Path, argv: object, options: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        run(argv, cwd=workspace, **options)  # type: ignore[arg-type]
