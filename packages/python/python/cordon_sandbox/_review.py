"""The change sets cordon keeps for a workspace: what a command run with ``workspace="review"``
left (and what any run held or refused), read and decided on from Python.

``changes``, ``diff``, ``apply`` and ``drop`` are ``cordon changes``, ``diff``, ``apply`` and
``drop`` with ``--json`` (schemas in ``docs/cli.md``). A run's name is in its result:
``result.changes["roots"][i]["report"]["run"]``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

from ._binary import cordon_binary
from ._options import PathLike
from .errors import CANNOT_RUN, CordonError, InvalidRequest


def _ask(binary: PathLike | None, args: list[str]) -> Any:
    done = subprocess.run(
        [cordon_binary(binary), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    said = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode == CANNOT_RUN:
        raise InvalidRequest(said or f"cordon {args[0]} failed", exit_code=done.returncode)
    if done.returncode != 0:
        raise CordonError(f"cordon {args[0]} exited {done.returncode}: {said}", exit_code=done.returncode)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise CordonError(f"cordon {args[0]} printed something that is not JSON: {e}", exit_code=CANNOT_RUN) from e


def _run_name(run: str) -> str:
    if not isinstance(run, str) or not run or run.startswith("-"):
        raise InvalidRequest(f"the run {run!r} is not a run's name (as `changes` lists it)", exit_code=CANNOT_RUN)
    return run


def changes(*, cwd: PathLike, binary: PathLike | None = None) -> list[dict[str, Any]]:
    """The workspace ``cwd``'s runs that keep changes: each a dict with ``run``, ``root`` and the
    counts ``pending``, ``held``, ``refused``, ``conflicts``, ``applied``."""
    answer = _ask(binary, ["changes", "--json", "--workspace", str(cwd)])
    runs = answer.get("runs") if isinstance(answer, dict) else None
    return list(runs) if isinstance(runs, list) else []


def diff(run: str, *, cwd: PathLike, binary: PathLike | None = None) -> dict[str, Any]:
    """What ``run`` keeps: its manifest (``entries``, each with its status and finding)."""
    answer = _ask(binary, ["diff", "--json", "--workspace", str(cwd), "--", _run_name(run)])
    return dict(answer)


def apply(
    run: str, *, cwd: PathLike, paths: Sequence[str] = (), binary: PathLike | None = None
) -> dict[str, Any]:
    """Applies what ``run`` keeps (only ``paths``, relative to the workspace, when given), each
    change judged again for conflicts with the host; returns the commit's report."""
    if isinstance(paths, str):
        raise InvalidRequest("paths is a sequence of paths, not one string", exit_code=CANNOT_RUN)
    answer = _ask(
        binary, ["apply", "--json", "--workspace", str(cwd), "--", _run_name(run), *[str(p) for p in paths]]
    )
    return dict(answer)


def drop(run: str, *, cwd: PathLike, binary: PathLike | None = None) -> None:
    """Discards ``run`` and everything it keeps; the workspace is not touched."""
    _ask(binary, ["drop", "--json", "--workspace", str(cwd), "--", _run_name(run)])
