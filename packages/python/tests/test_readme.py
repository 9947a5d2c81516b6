"""The README's Python harness example, exactly as printed there, run against real jails."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ._support import env_path

MARKER = "<!-- tested: packages/python/tests/test_readme.py -->"


def example(readme: str) -> str:
    at = readme.find(MARKER)
    assert at >= 0, f"README.md has no {MARKER}"
    block = re.search(r"```python\n(.*?)```", readme[at:], re.S)
    assert block, "no ```python block after the marker"
    return block.group(1)


def test_the_readme_python_example_runs_as_shown(tmp_path: Path, workspace: Path) -> None:
    code = example(env_path("CORDON_README").read_text())
    assert len(code.splitlines()) <= 16, "the example stays short"
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script), str(workspace)], capture_output=True, text=True, check=True)
    assert done.stdout == "0 [] \n0 [] hi\nrefused: recursive-delete\n", done
    assert (workspace / "hello.txt").read_text() == "hi\n"
