"""`run` (one ``cordon run --json`` per command) and `Session` (one ``cordon serve`` for many)."""

from __future__ import annotations

import collections
import json
import subprocess
import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import IO

from ._binary import cordon_binary
from ._options import (
    Workspace,
    JailOptions,
    Network,
    PathLike,
    SessionBase,
    check_argv,
    ended,
    from_answer,
    from_run,
    run_command,
    serve_command,
)
from .errors import SessionClosed
from .result import Result

#: Lines of a ``cordon serve``'s stderr kept for the message when it ends.
_STDERR_LINES = 40


def run(
    argv: Sequence[str],
    *,
    cwd: PathLike,
    profile: str | None = None,
    network: Network | None = None,
    allow_hosts: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    binary: PathLike | None = None,
    workspace: Workspace | None = None,
) -> Result:
    """Runs ``argv`` in a jail of its own whose workspace is ``cwd``; waits for it to end.

    Args:
        argv: the program and its arguments (no shell unless you name one).
        cwd: the workspace: the command's working directory and its writable root.
        profile: a profile name (``shell`` by default; ``docs/cli.md`` lists them).
        network: ``deny`` (every profile's default), ``proxy`` (only ``allow_hosts``), ``allow``.
        allow_hosts: destinations for ``network="proxy"`` (``HOST``, ``HOST:PORT``, ``*.DOMAIN``).
        env: variables set inside the jail (names the policy refuses are refused).
        timeout: wall-clock seconds, after which the whole process tree is killed.
        binary: the ``cordon`` to use (default: the wheel's, see `cordon_binary`).
        workspace: ``layer``, ``review`` or ``live`` (see `Workspace`; default: cordon's, the
            copy-on-write layer under bubblewrap). `Result.changes` lists a layer's change set.

    Returns:
        the `Result`, also when the command failed or timed out.

    Raises:
        Refused: cordon refused to run it (exit 126: the floor, the policy, no enforcing jail).
        InvalidRequest: bad input or configuration (exit 125); nothing ran.
    """
    command = check_argv(argv)
    options = JailOptions.make(
        cwd=cwd,
        profile=profile,
        network=network,
        allow_hosts=allow_hosts,
        env=env,
        timeout=timeout,
        workspace=workspace,
    )
    done = subprocess.run(
        run_command(cordon_binary(binary), options, command),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    return from_run(done.returncode, done.stdout, done.stderr)


class _Serve:
    """One ``cordon serve`` process: a request line in, an answer line out, in order."""

    def __init__(self, binary: str, options: JailOptions) -> None:
        self._lock = threading.Lock()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._process = subprocess.Popen(
            serve_command(binary, options),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # Drained all along, so a chatty session never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        stream: IO[bytes] | None = self._process.stderr
        if stream is None:
            return
        for line in stream:
            self._stderr.append(line.decode("utf-8", "replace"))

    def ask(self, argv: list[str]) -> Result:
        with self._lock:
            stdin, stdout = self._process.stdin, self._process.stdout
            if stdin is None or stdout is None or stdin.closed:
                raise SessionClosed("the session is closed", exit_code=125)
            try:
                stdin.write(json.dumps(argv).encode() + b"\n")
                stdin.flush()
                line = stdout.readline()
            except (BrokenPipeError, ValueError):
                line = b""
            if not line:
                raise self._ended()
        return from_answer(json.loads(line))

    def _ended(self) -> Exception:
        try:
            code = self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        self._drain.join(timeout=5)
        return ended(code, "".join(self._stderr))

    def close(self) -> None:
        with self._lock:
            if self._process.stdin is not None and not self._process.stdin.closed:
                try:
                    self._process.stdin.close()
                except BrokenPipeError:
                    pass
            try:
                # End of input ends the session: serve kills the jail built ahead and exits 0.
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.terminate()
                self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
        self._drain.join(timeout=5)


class Session(SessionBase):
    """Many commands over ``cordon serve``: the workspace is walked once, and each command is
    handed to a jail built (and checked) while you worked on the previous result.

    ``Session(cwd=…, profile=…, network=…, allow_hosts=…, env=…, timeout=…, binary=…)`` takes
    the options of the module's `run`. Use it as a context manager, or call `close`. ``run``
    takes the same options as the module's `run`; options it leaves out are the session's. The
    options of one ``cordon serve`` are fixed, so the session keeps one per distinct set of
    options it was asked for (the first on construction, others when first needed), and closes
    them all together.
    """

    def _started(self) -> None:
        self._lock = threading.Lock()
        self._serves: dict[JailOptions, _Serve] = {}
        self._serve(self._options)

    def _serve(self, options: JailOptions) -> _Serve:
        with self._lock:
            if self._closed:
                raise SessionClosed("the session is closed", exit_code=125)
            serve = self._serves.get(options)
            if serve is None:
                serve = self._serves[options] = _Serve(self._binary, options)
            return serve

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: PathLike | None = None,
        profile: str | None = None,
        network: Network | None = None,
        allow_hosts: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Result:
        """Runs ``argv`` in a jail of its own; see the module's `run` for the options, returns
        and exceptions. Raises `SessionClosed` after `close`."""
        command, options = self._request(
            argv, cwd=cwd, profile=profile, network=network, allow_hosts=allow_hosts, env=env, timeout=timeout
        )
        return self._serve(options).ask(command)

    def close(self) -> None:
        """Ends every ``cordon serve`` of the session (each kills its jail built ahead)."""
        with self._lock:
            self._closed = True
            serves, self._serves = list(self._serves.values()), {}
        for serve in serves:
            serve.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
