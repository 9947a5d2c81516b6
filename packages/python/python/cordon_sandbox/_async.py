"""The asyncio variants: `run_async` and `AsyncSession`, the same options and results as
`run` and `Session`."""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Mapping, Sequence
from types import TracebackType

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

#: The longest answer line read from ``cordon serve`` (two capped streams, JSON-escaped).
_LINE_LIMIT = 1 << 30
_STDERR_LINES = 40


async def run_async(
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
    """`run`, awaitable: the same options, result and exceptions."""
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
    process = await asyncio.create_subprocess_exec(
        *run_command(cordon_binary(binary), options, command),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await process.communicate()
    except asyncio.CancelledError:
        # cordon ends its jail on SIGTERM (the whole tree) and exits 143.
        process.terminate()
        await process.wait()
        raise
    return from_run(process.returncode if process.returncode is not None else -1, stdout, stderr)


class _AsyncServe:
    """One ``cordon serve`` process, driven from the event loop."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self._lock = asyncio.Lock()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._drain = asyncio.ensure_future(self._read_stderr())

    @classmethod
    async def start(cls, binary: str, options: JailOptions) -> _AsyncServe:
        process = await asyncio.create_subprocess_exec(
            *serve_command(binary, options),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_LINE_LIMIT,
        )
        return cls(process)

    async def _read_stderr(self) -> None:
        stream = self._process.stderr
        if stream is None:
            return
        async for line in stream:
            self._stderr.append(line.decode("utf-8", "replace"))

    async def ask(self, argv: list[str]) -> Result:
        async with self._lock:
            stdin, stdout = self._process.stdin, self._process.stdout
            if stdin is None or stdout is None or stdin.is_closing():
                raise SessionClosed("the session is closed", exit_code=125)
            try:
                stdin.write(json.dumps(argv).encode() + b"\n")
                await stdin.drain()
                line = await stdout.readline()
            except (BrokenPipeError, ConnectionResetError):
                line = b""
            if not line:
                raise await self._ended()
        return from_answer(json.loads(line))

    async def _ended(self) -> Exception:
        try:
            code: int | None = await asyncio.wait_for(self._process.wait(), 10)
        except asyncio.TimeoutError:
            code = None
        await asyncio.wait([self._drain], timeout=5)
        return ended(code, "".join(self._stderr))

    async def close(self) -> None:
        async with self._lock:
            if self._process.stdin is not None and not self._process.stdin.is_closing():
                self._process.stdin.close()
            try:
                await asyncio.wait_for(self._process.wait(), 30)
            except asyncio.TimeoutError:
                self._process.terminate()
                await self._process.wait()
        await asyncio.wait([self._drain], timeout=5)


class AsyncSession(SessionBase):
    """`Session` for asyncio: ``async with AsyncSession(cwd=...) as s: await s.run([...])``.

    The first ``cordon serve`` starts on entry (or on the first ``run``); ``run`` with other
    options starts one for them, and `aclose` ends them all.
    """

    def _started(self) -> None:
        self._lock = asyncio.Lock()
        self._serves: dict[JailOptions, _AsyncServe] = {}

    async def _serve(self, options: JailOptions) -> _AsyncServe:
        async with self._lock:
            if self._closed:
                raise SessionClosed("the session is closed", exit_code=125)
            serve = self._serves.get(options)
            if serve is None:
                serve = self._serves[options] = await _AsyncServe.start(self._binary, options)
            return serve

    async def run(
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
        """`Session.run`, awaitable."""
        command, options = self._request(
            argv, cwd=cwd, profile=profile, network=network, allow_hosts=allow_hosts, env=env, timeout=timeout
        )
        serve = await self._serve(options)
        return await serve.ask(command)

    async def aclose(self) -> None:
        """Ends every ``cordon serve`` of the session."""
        async with self._lock:
            self._closed = True
            serves, self._serves = list(self._serves.values()), {}
        for serve in serves:
            await serve.close()

    async def __aenter__(self) -> AsyncSession:
        await self._serve(self._options)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
