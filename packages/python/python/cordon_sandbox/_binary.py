"""Where the `cordon` binary is.

The wheel carries it as a script: ``pip install`` puts it in the environment's ``bin``
directory (``sysconfig.get_path("scripts")``), or the user scheme's with ``--user``.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

from .errors import CANNOT_RUN, BinaryNotFound

#: An explicit binary, for a checkout or a copy of ``cargo xtask dist``'s.
ENV_VAR = "CORDON_BINARY"


def _installed() -> list[Path]:
    """The scripts directories of this interpreter's install schemes, the wheel's first."""
    dirs: list[Path] = []
    for scheme in (None, f"{os.name}_user"):
        try:
            path = sysconfig.get_path("scripts") if scheme is None else sysconfig.get_path("scripts", scheme)
        except KeyError:
            continue
        if path and Path(path) not in dirs:
            dirs.append(Path(path))
    return dirs


def cordon_binary(explicit: str | os.PathLike[str] | None = None) -> str:
    """The ``cordon`` to run: ``explicit`` when given, else ``$CORDON_BINARY``, else the one the
    wheel installed next to this interpreter, else ``cordon`` on ``PATH``.

    Raises:
        BinaryNotFound: none of these is an executable file.
    """
    for source, candidate in (("binary=", explicit), (f"${ENV_VAR}", os.environ.get(ENV_VAR))):
        if candidate:
            path = Path(candidate)
            if path.is_file() and os.access(path, os.X_OK):
                return str(path.absolute())
            raise BinaryNotFound(
                f"{source} names {str(candidate)!r}, which is not an executable file",
                exit_code=CANNOT_RUN,
            )
    for directory in _installed():
        path = directory / "cordon"
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which("cordon")
    if found:
        return found
    looked = ", ".join(str(d) for d in _installed())
    raise BinaryNotFound(
        f"no cordon binary: not in {looked}, not on PATH, and ${ENV_VAR} is not set "
        "(pip install cordon-sandbox installs one on Linux x86_64)",
        exit_code=CANNOT_RUN,
    )
