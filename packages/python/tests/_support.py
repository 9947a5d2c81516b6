"""What the tests share besides fixtures."""

from __future__ import annotations

import os
from pathlib import Path

#: Planted as a private key in the test home; it must never appear in a jailed command's output.
SENTINEL = "CORDON-TEST-SENTINEL-PRIVATE-KEY"


def env_path(name: str) -> Path:
    """A path the CI step provides; a missing one fails the test (never a skip)."""
    value = os.environ.get(name)
    assert value, f"${name} is not set: cargo xtask ci packages sets it (see xtask/src/packages.rs)"
    path = Path(value)
    assert path.exists(), f"${name} names {path}, which does not exist"
    return path
