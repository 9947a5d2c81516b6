"""What `run` and `Session.run` raise when nothing ran, or when cordon itself failed.

A command that ran and failed is not an exception: its `Result` says so (`exit_code`,
`status == "timeout"`, `violations`). These are for the cases where no command ran at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .result import Result

#: cordon's exit code for bad input, bad configuration or an internal error (nothing ran).
CANNOT_RUN = 125
#: cordon's exit code for a refusal: the floor, the policy, no enforcing backend, a failed
#: self-check in the jail (nothing ran).
REFUSED = 126


class CordonError(Exception):
    """cordon did not run the command. `exit_code` is what `cordon run` exits with."""

    def __init__(self, message: str, *, exit_code: int, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        #: The rule that refused it, when cordon names one by id (the floor's rules, such as
        #: ``recursive-delete``); ``None`` otherwise (the message still says why).
        self.rule = rule


class InvalidRequest(CordonError):
    """Exit code 125: bad input or configuration (an option, a path, an environment name the
    policy refuses, a configuration file). The message names the value and the rule."""


class Refused(CordonError):
    """Exit code 126: refused by the floor, the policy, for want of an enforcing backend, or
    because the jail failed its own check. `result` is cordon's whole report of it, when the
    refusal was of one command (``None`` when a session's start was refused)."""

    def __init__(
        self,
        message: str,
        *,
        exit_code: int = REFUSED,
        rule: str | None = None,
        result: Result | None = None,
    ) -> None:
        super().__init__(message, exit_code=exit_code, rule=rule)
        self.result = result

    @classmethod
    def of(cls, result: Result) -> Refused:
        """The refusal `result` reports."""
        return cls(result.refusal or "refused", exit_code=result.exit_code, rule=result.rule, result=result)


class SessionClosed(CordonError):
    """The session's ``cordon serve`` is gone (closed, or it ended on its own); the message
    holds what it printed last."""


class BinaryNotFound(CordonError, FileNotFoundError):
    """No ``cordon`` binary was found (the wheel's, ``CORDON_BINARY``, or ``PATH``)."""
