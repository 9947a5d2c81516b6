"""Fixtures for tests against real jails: a home with a credential to mask, a workspace in it.

Everything lives under pytest's base temporary directory, which must be one the jail shows as
the host's: a jail replaces /tmp and /var/tmp with private ones, which would hide a home made
there and make every "the credential stays hidden" check vacuous. ``cargo xtask ci packages``
passes ``--basetemp`` under ``target/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._support import SENTINEL


@pytest.fixture(scope="session", autouse=True)
def _visible_basetemp(tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.getbasetemp().resolve()
    for private in (Path("/tmp"), Path("/var/tmp")):
        assert not base.is_relative_to(private), (
            f"pytest's base temporary directory {base} is under {private}, which every jail "
            "replaces with a private one: the credential checks would prove nothing. Run with "
            "--basetemp in a directory jails see (cargo xtask ci packages does)."
        )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory with a private key in ``.ssh``, as ``HOME`` for cordon."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SENTINEL + "\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def workspace(home: Path) -> Path:
    """A workspace inside the home directory."""
    work = home / "work"
    work.mkdir()
    return work
