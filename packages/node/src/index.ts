/**
 * Run an AI agent's shell commands in cordon's kernel-enforced jail, from TypeScript.
 *
 * ```ts
 * import { run } from "cordon-sandbox";
 * const result = await run(["sh", "-c", "echo hi"], { cwd: "/path/to/workspace" });
 * console.log(result.exitCode, result.stdout, result.violations);
 * ```
 *
 * `run` starts one `cordon run --json` per command; `Session` keeps one `cordon serve` for many
 * commands, each handed to a jail built ahead of it. Under bubblewrap a command's writes wait in a
 * copy-on-write layer that cordon judges and commits when it ends; with `workspace: "review"`
 * nothing is applied, and `changes`, `diff`, `apply` and `drop` decide on what a run keeps.
 * A command that ran resolves to a `Result`
 * (whatever its exit code); one cordon refused rejects with `Refused`, bad input with
 * `InvalidRequest` (the exit code and rule are on the error). The package carries the `cordon`
 * binary for Linux x86_64; `cordonBinary` says which one is used.
 *
 * @packageDocumentation
 */

export { cordonBinary, packagedBinary, ENV_VAR } from "./binary";
export { BinaryNotFound, CANNOT_RUN, CordonError, InvalidRequest, REFUSED, Refused, SessionClosed } from "./errors";
export type { JailOptions, Network, Workspace } from "./options";
export type { Destination, NetworkReport, Result, Status, Violation } from "./result";
export { parseResult } from "./result";
export { apply, changes, diff, drop, type KeptRun, type ReviewOptions } from "./review";
export { run, type RunOptions } from "./run";
export { Session, type SessionOptions } from "./session";
