"""The options a jail is made with, checked here and spelled as ``cordon run``'s flags; and
what cordon's answers mean (a `Result`, or an exception when nothing ran)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._binary import cordon_binary
from .errors import CANNOT_RUN, REFUSED, CordonError, InvalidRequest, Refused, SessionClosed
from .result import Result

Network = Literal["deny", "proxy", "allow"]
_NETWORKS = ("deny", "proxy", "allow")

#: How the command's writes reach the workspace: ``layer`` (a copy-on-write layer judged and
#: committed when the command ends: the default under bubblewrap), ``review`` (judged and kept,
#: nothing applied), ``live`` (written as the command runs). ``None``: cordon's default.
Workspace = Literal["layer", "review", "live"]
_WORKSPACES = ("layer", "review", "live")

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class JailOptions:
    """How a command's jail is made: ``cordon run``'s options, checked and normalized (hashable,
    so a session keeps one ``cordon serve`` per distinct set)."""

    cwd: str
    profile: str | None = None
    network: str | None = None
    allow_hosts: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timeout: int | None = None
    workspace: str | None = None

    @classmethod
    def make(
        cls,
        *,
        cwd: PathLike,
        profile: str | None = None,
        network: Network | None = None,
        allow_hosts: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        workspace: Workspace | None = None,
    ) -> JailOptions:
        """Checks every option; raises `TypeError` or `ValueError` naming the option."""
        if not isinstance(cwd, (str, os.PathLike)):
            raise TypeError(f"cwd is a path, not {type(cwd).__name__}")
        if profile is not None and not isinstance(profile, str):
            raise TypeError(f"profile is a profile name such as 'shell', not {type(profile).__name__}")
        if network is not None and network not in _NETWORKS:
            raise ValueError(f"network is one of {', '.join(_NETWORKS)}, not {network!r}")
        if workspace is not None and workspace not in _WORKSPACES:
            raise ValueError(f"workspace is one of {', '.join(_WORKSPACES)}, not {workspace!r}")
        return cls(
            cwd=os.path.abspath(os.fspath(cwd)),
            profile=profile,
            network=network,
            allow_hosts=_strings("allow_hosts", allow_hosts),
            env=_env(env),
            timeout=_timeout(timeout),
            workspace=workspace,
        )

    def replace(self, **changes: Any) -> JailOptions:
        """These options with the given ones changed (``None`` keeps a value)."""
        given = {k: v for k, v in changes.items() if v is not None}
        if not given:
            return self
        current: dict[str, Any] = {
            "cwd": self.cwd,
            "profile": self.profile,
            "network": self.network,
            "allow_hosts": self.allow_hosts,
            "env": dict(self.env),
            "timeout": self.timeout,
            "workspace": self.workspace,
        }
        current.update(given)
        return JailOptions.make(**current)

    def flags(self) -> list[str]:
        """The options as ``cordon run`` and ``cordon serve`` take them."""
        out = ["--cwd", self.cwd]
        if self.profile is not None:
            out += ["--profile", self.profile]
        if self.network is not None:
            out += ["--network", self.network]
        for host in self.allow_hosts:
            out += ["--allow-host", host]
        for key, value in self.env:
            out += ["--env", f"{key}={value}"]
        if self.timeout is not None:
            out += ["--timeout", str(self.timeout)]
        if self.workspace is not None:
            out += [f"--{self.workspace}"]
        return out


class SessionBase:
    """What `Session` and `AsyncSession` share: the binary, the session's options, and the
    options of one request (the session's, with what the request gives replaced)."""

    def __init__(
        self,
        *,
        cwd: PathLike,
        profile: str | None = None,
        network: Network | None = None,
        allow_hosts: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        binary: PathLike | None = None,
        workspace: Workspace | None = None,
    ) -> None:
        self._binary = cordon_binary(binary)
        self._options = JailOptions.make(
            cwd=cwd,
            profile=profile,
            network=network,
            allow_hosts=allow_hosts,
            env=env,
            timeout=timeout,
            workspace=workspace,
        )
        self._closed = False
        self._started()

    def _started(self) -> None:
        """Called at the end of construction (a session starts its first ``cordon serve``)."""

    def _request(
        self,
        argv: Sequence[str],
        *,
        cwd: PathLike | None,
        profile: str | None,
        network: Network | None,
        allow_hosts: Sequence[str] | None,
        env: Mapping[str, str] | None,
        timeout: float | None,
    ) -> tuple[list[str], JailOptions]:
        command = check_argv(argv)
        options = self._options.replace(
            cwd=cwd, profile=profile, network=network, allow_hosts=allow_hosts, env=env, timeout=timeout
        )
        return command, options


def _strings(name: str, values: Sequence[str]) -> tuple[str, ...]:
    if isinstance(values, (str, bytes)) or not all(isinstance(v, str) for v in values):
        raise TypeError(f"{name} is a sequence of strings, such as ['example.test:443']")
    return tuple(values)


def _env(env: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    if env is None:
        return ()
    pairs = []
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"env maps names to string values; {key!r}: {value!r} is not that")
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise ValueError(f"env name {key!r} is not a variable name (empty, or holds '=' or NUL)")
        pairs.append((key, value))
    return tuple(sorted(pairs))


def _timeout(timeout: float | None) -> int | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout is whole seconds, not {type(timeout).__name__}")
    if timeout != int(timeout) or timeout < 1:
        raise ValueError(f"timeout is whole seconds, at least 1, not {timeout!r}")
    return int(timeout)


def check_argv(argv: Sequence[str]) -> list[str]:
    """The program and its arguments, checked: a sequence of strings, not empty."""
    if isinstance(argv, (str, bytes)):
        raise TypeError(
            "argv is the program and its arguments as a sequence, not one string: "
            "use ['sh', '-c', 'a command line'] for a shell command line"
        )
    argv = list(argv)
    if not argv:
        raise ValueError("argv is empty: nothing to run")
    for arg in argv:
        if not isinstance(arg, str):
            raise TypeError(f"argv holds strings only, not {type(arg).__name__} ({arg!r})")
        if "\0" in arg:
            raise ValueError(f"an argument holds a NUL byte: {arg!r}")
    return argv


def run_command(binary: str, options: JailOptions, argv: list[str]) -> list[str]:
    """``cordon run --json`` for one command."""
    return [binary, "run", "--json", *options.flags(), "--", *argv]


def serve_command(binary: str, options: JailOptions) -> list[str]:
    """``cordon serve`` for a session."""
    return [binary, "serve", *options.flags()]


def from_run(exit_code: int, stdout: bytes, stderr: bytes) -> Result:
    """What ``cordon run --json`` said: its result, or an exception when nothing ran."""
    message = stderr.decode("utf-8", "replace").strip()
    lines = stdout.decode("utf-8", "replace").strip().splitlines()
    if lines:
        try:
            answer = json.loads(lines[-1])
        except json.JSONDecodeError as e:
            raise CordonError(f"cordon printed something that is not its result: {e}", exit_code=exit_code) from e
        return from_answer(answer)
    if exit_code == CANNOT_RUN:
        raise InvalidRequest(message or "cordon could not run the command", exit_code=exit_code)
    if exit_code == REFUSED:
        raise Refused(message or "refused", exit_code=exit_code)
    raise CordonError(
        f"cordon exited {exit_code} without a result: {message or '(nothing on stderr)'}", exit_code=exit_code
    )


def from_answer(answer: object) -> Result:
    """One result object (``cordon run --json``, or a line of ``cordon serve``): the `Result`,
    or `InvalidRequest` for serve's error object and `Refused` for a refusal."""
    if not isinstance(answer, dict):
        raise CordonError(f"cordon answered something that is not an object: {answer!r:.200}", exit_code=CANNOT_RUN)
    if "error" in answer and "status" not in answer:
        code = answer.get("exit_code")
        raise InvalidRequest(str(answer["error"]), exit_code=code if isinstance(code, int) else CANNOT_RUN)
    result = Result.from_json(answer)
    if result.status == "refused":
        raise Refused.of(result)
    return result


def ended(exit_code: int | None, stderr: str) -> CordonError:
    """The exception for a ``cordon serve`` that ended (or never started) under a session."""
    said = stderr.strip() or "(nothing on stderr)"
    if exit_code == CANNOT_RUN:
        return InvalidRequest(f"cordon serve could not start: {said}", exit_code=exit_code)
    if exit_code == REFUSED:
        return Refused(f"cordon serve refused the session: {said}", exit_code=exit_code)
    return SessionClosed(f"cordon serve ended (exit {exit_code}): {said}", exit_code=exit_code or CANNOT_RUN)
