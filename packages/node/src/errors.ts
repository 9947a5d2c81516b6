// What `run` and `Session.run` reject with when nothing ran, or when cordon itself failed. A
// command that ran and failed is not an error: its `Result` says so.

import type { Result } from "./result";

/** cordon's exit code for bad input, bad configuration or an internal error (nothing ran). */
export const CANNOT_RUN = 125;
/** cordon's exit code for a refusal: the floor, the policy, no enforcing backend, a failed self-check. */
export const REFUSED = 126;

/** cordon did not run the command; `exitCode` is what `cordon run` exits with. */
export class CordonError extends Error {
  readonly exitCode: number;
  /** The rule that refused it, when cordon names one by id (the floor's `recursive-delete`, …). */
  readonly rule: string | null;

  constructor(message: string, exitCode: number, rule: string | null = null) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.rule = rule;
  }
}

/** Exit code 125: bad input or configuration; the message names the value and the rule. */
export class InvalidRequest extends CordonError {}

/**
 * Exit code 126: refused by the floor, the policy, for want of an enforcing backend, or because
 * the jail failed its own check. `result` is cordon's report, when one command was refused.
 */
export class Refused extends CordonError {
  readonly result: Result | null;

  constructor(message: string, exitCode = REFUSED, rule: string | null = null, result: Result | null = null) {
    super(message, exitCode, rule);
    this.result = result;
  }

  /** The refusal `result` reports. */
  static of(result: Result): Refused {
    return new Refused(result.refusal ?? "refused", result.exitCode, result.rule, result);
  }
}

/** The session's `cordon serve` is gone (closed, or it ended); the message holds its last words. */
export class SessionClosed extends CordonError {}

/** No `cordon` binary was found (the package's, `CORDON_BINARY`, or `PATH`). */
export class BinaryNotFound extends CordonError {}
