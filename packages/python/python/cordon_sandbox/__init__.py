"""Run an AI agent's shell commands in cordon's kernel-enforced jail, from Python.

>>> from cordon_sandbox import run
>>> result = run(["sh", "-c", "echo hi > note.txt && cat note.txt"], cwd="/path/to/workspace")
>>> result.exit_code, result.stdout
(0, 'hi\\n')

`run` starts one ``cordon run --json`` per command; `Session` keeps one ``cordon serve`` for
many commands (each handed to a jail built ahead of it, which takes its layer when the command
comes); `run_async`
and `AsyncSession` are the asyncio variants. Under bubblewrap a command's writes wait in a
copy-on-write layer that cordon judges and commits when it ends (`Result.changes` lists them);
with ``workspace="review"`` nothing is applied, and `changes`, `diff`, `apply` and `drop`
decide on what a run keeps. Every command runs in a jail of its own: it can write its workspace and read
the toolchains, not the user's credentials, and reach no network unless asked. A command that
ran is a `Result` (whatever its exit code); one that cordon refused raises `Refused`, bad input
raises `InvalidRequest` (the exit code and rule are on the exception).

The wheel carries the ``cordon`` binary (Linux x86_64); `cordon_binary` says which one is used.
"""

from ._async import AsyncSession, run_async
from ._binary import cordon_binary
from ._options import Network, Workspace
from ._review import apply, changes, diff, drop
from ._sync import Session, run
from .errors import BinaryNotFound, CordonError, InvalidRequest, Refused, SessionClosed
from .result import Destination, NetworkReport, Result, Status, Violation

__all__ = [
    "AsyncSession",
    "BinaryNotFound",
    "CordonError",
    "Destination",
    "InvalidRequest",
    "Network",
    "NetworkReport",
    "Refused",
    "Result",
    "Session",
    "SessionClosed",
    "Status",
    "Violation",
    "Workspace",
    "apply",
    "changes",
    "cordon_binary",
    "diff",
    "drop",
    "run",
    "run_async",
]
