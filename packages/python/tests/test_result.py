"""Reading cordon's result object: tolerant of what a later cordon adds."""

from __future__ import annotations

import dataclasses

import pytest

from cordon_sandbox import Refused, Result
from cordon_sandbox._options import from_answer


def answer(**extra: object) -> dict[str, object]:
    base: dict[str, object] = {
        "status": "exited",
        "exit_code": 0,
        "signal": None,
        "stdout": {"text": "x", "truncated": False, "bytes": 1},
        "stderr": {"text": "", "truncated": False, "bytes": 0},
        "duration_ms": 1.5,
        "backend": "bubblewrap",
        "sandboxed": True,
        "policy_hash": "sha256:0",
        "violations": [{"kind": "write-denied", "line": "l", "path": "/p", "future": 1}],
        "refusal": None,
        "warnings": [],
        "env_dropped": {"credential": 1},
        "landlock": "ABI 7",
        "built_ahead": False,
        "network": None,
    }
    base.update(extra)
    return base


def test_unknown_keys_are_kept_in_raw_and_never_an_error() -> None:
    changes = {"added": ["a.txt"], "modified": [], "deleted": [], "refused": [], "held": [], "conflicts": []}
    result = Result.from_json(answer(changes=changes, status="exited"))
    assert result.raw["changes"] == changes
    assert result.violations[0].path == "/p" and result.violations[0].raw["future"] == 1
    assert result.env_dropped == {"credential": 1}


def test_missing_keys_take_their_defaults() -> None:
    result = Result.from_json({"status": "exited", "exit_code": 0})
    assert (result.stdout, result.violations, result.network, result.backend) == ("", (), None, None)


def test_a_new_status_reads_as_itself() -> None:
    assert Result.from_json(answer(status="held")).status == "held"


def test_a_refusal_raises_with_the_whole_result() -> None:
    with pytest.raises(Refused) as refused:
        from_answer(answer(status="refused", exit_code=126, refusal="no jail", rule=None))
    assert refused.value.result is not None and refused.value.result.refusal == "no jail"


def test_every_field_after_the_first_two_has_a_default() -> None:
    # What lets a later version add fields without breaking code that builds or reads these.
    fields = dataclasses.fields(Result)
    assert [f.name for f in fields[:2]] == ["status", "exit_code"]
    assert all(f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING for f in fields[2:])
