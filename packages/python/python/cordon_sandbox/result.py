"""The result of one command: ``cordon run --json``'s object as typed, frozen dataclasses.

Parsing is tolerant in the direction the schema grows: a key this version does not know is
kept in ``raw`` (never an error), and a key it knows but the object lacks takes its default.
New fields are only ever added with a default, so code written against this version keeps
working when cordon reports more (the workspace's change set, say).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

#: The statuses cordon reports today.
Status = Literal["exited", "signaled", "timeout", "refused"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _int(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _object(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else _EMPTY


@dataclass(frozen=True)
class Violation:
    """One denial cordon recognised (docs/cli.md lists the kinds: ``write-denied``,
    ``access-denied``, ``operation-denied``, ``network-denied``, ``jail-setup``, ``planted``,
    ``git-config-refused``, ``change-refused``)."""

    kind: str
    line: str
    path: str | None = None
    rule: str | None = None
    host: str | None = None
    port: int | None = None
    key: str | None = None
    operation: str | None = None
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Violation:
        return cls(
            kind=_str(obj, "kind") or "unknown",
            line=_str(obj, "line") or "",
            path=_str(obj, "path"),
            rule=_str(obj, "rule"),
            host=_str(obj, "host"),
            port=_int(obj, "port"),
            key=_str(obj, "key"),
            operation=_str(obj, "operation"),
            raw=MappingProxyType(dict(obj)),
        )


@dataclass(frozen=True)
class Destination:
    """A destination the proxy allowed (``network="proxy"``), by the host and port asked for."""

    host: str
    port: int
    connections: int = 0
    bytes_out: int = 0
    bytes_in: int = 0

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Destination:
        return cls(
            host=_str(obj, "host") or "",
            port=_int(obj, "port") or 0,
            connections=_int(obj, "connections") or 0,
            bytes_out=_int(obj, "bytes_out") or 0,
            bytes_in=_int(obj, "bytes_in") or 0,
        )


@dataclass(frozen=True)
class NetworkReport:
    """What the proxy did during the run (``network="proxy"`` only)."""

    mode: str
    refused: int = 0
    destinations: tuple[Destination, ...] = ()

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> NetworkReport:
        destinations = obj.get("destinations")
        return cls(
            mode=_str(obj, "mode") or "",
            refused=_int(obj, "refused") or 0,
            destinations=tuple(
                Destination.from_json(d) for d in (destinations if isinstance(destinations, list) else []) if isinstance(d, dict)
            ),
        )


@dataclass(frozen=True)
class Result:
    """What one command did, in the jail.

    ``stdout`` and ``stderr`` are the kept output as text (lossy UTF-8, up to the profile's
    output cap); ``*_truncated`` says whether the cap cut it, ``*_bytes`` counts everything
    written. ``raw`` is cordon's whole object, including keys this version does not know.
    """

    #: ``exited``, ``signaled``, ``timeout`` or ``refused`` (the values of `Status`); a plain
    #: string so that a status a later cordon adds reads as itself.
    status: str
    exit_code: int
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    signal: int | None = None
    duration_ms: float = 0.0
    backend: str | None = None
    sandboxed: bool = False
    policy_hash: str | None = None
    violations: tuple[Violation, ...] = ()
    refusal: str | None = None
    rule: str | None = None
    warnings: tuple[str, ...] = ()
    env_dropped: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    landlock: str | None = None
    built_ahead: bool = False
    network: NetworkReport | None = None
    #: ``layer``, ``review`` or ``live``: how the command's writes reached the workspace.
    workspace: str | None = None
    #: A layered run's change set as cordon reports it (``applied``, and per root what was
    #: added, modified, deleted, refused, held, in conflict); ``None`` for a live run.
    changes: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """The command ran to its end and exited 0."""
        return self.status == "exited" and self.exit_code == 0

    @property
    def timed_out(self) -> bool:
        """The wall-clock timeout passed and the whole process tree was killed (exit 124)."""
        return self.status == "timeout"

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Result:
        """Reads ``cordon run --json``'s object (or one answer of ``cordon serve``)."""
        stdout, stderr = _object(obj, "stdout"), _object(obj, "stderr")
        status = _str(obj, "status")
        code = _int(obj, "exit_code")
        violations = obj.get("violations")
        warnings = obj.get("warnings")
        network = obj.get("network")
        changes = obj.get("changes")
        duration = obj.get("duration_ms")
        return cls(
            status=status or "refused",
            exit_code=125 if code is None else code,
            stdout=_str(stdout, "text") or "",
            stderr=_str(stderr, "text") or "",
            stdout_truncated=stdout.get("truncated") is True,
            stderr_truncated=stderr.get("truncated") is True,
            stdout_bytes=_int(stdout, "bytes") or 0,
            stderr_bytes=_int(stderr, "bytes") or 0,
            signal=_int(obj, "signal"),
            duration_ms=float(duration) if isinstance(duration, (int, float)) else 0.0,
            backend=_str(obj, "backend"),
            sandboxed=obj.get("sandboxed") is True,
            policy_hash=_str(obj, "policy_hash"),
            violations=tuple(
                Violation.from_json(v) for v in (violations if isinstance(violations, list) else []) if isinstance(v, dict)
            ),
            refusal=_str(obj, "refusal"),
            rule=_str(obj, "rule"),
            warnings=tuple(w for w in (warnings if isinstance(warnings, list) else []) if isinstance(w, str)),
            env_dropped=MappingProxyType(
                {k: v for k, v in _object(obj, "env_dropped").items() if isinstance(v, int)}
            ),
            landlock=_str(obj, "landlock"),
            built_ahead=obj.get("built_ahead") is True,
            network=NetworkReport.from_json(network) if isinstance(network, dict) else None,
            workspace=_str(obj, "workspace"),
            changes=MappingProxyType(dict(changes)) if isinstance(changes, dict) else None,
            raw=MappingProxyType(dict(obj)),
        )
