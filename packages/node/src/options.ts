// The options a jail is made with, checked here and spelled as `cordon run`'s flags; and what
// cordon's answers mean (a `Result`, or an error when nothing ran).

import { resolve } from "node:path";

import { CANNOT_RUN, CordonError, InvalidRequest, REFUSED, Refused, SessionClosed } from "./errors";
import { parseResult, type Result } from "./result";

/** `deny` (every profile's default), `proxy` (only `allowHosts`), `allow` (the host's network). */
export type Network = "deny" | "proxy" | "allow";
const NETWORKS: readonly string[] = ["deny", "proxy", "allow"];

/** How the command's writes reach the workspace: `layer` (a copy-on-write layer judged and
 * committed when the command ends: the default under bubblewrap), `review` (judged and kept,
 * nothing applied), `live` (written as the command runs). Left out: cordon's default. */
export type Workspace = "layer" | "review" | "live";
const WORKSPACES: readonly string[] = ["layer", "review", "live"];

/** How a command's jail is made. */
export interface JailOptions {
  /** The workspace: the command's working directory and its writable root. */
  readonly cwd: string;
  /** A profile name (`shell` by default; docs/cli.md lists them). */
  readonly profile?: string;
  readonly network?: Network;
  /** Destinations for `network: "proxy"`: `HOST`, `HOST:PORT`, `*.DOMAIN`. */
  readonly allowHosts?: readonly string[];
  /** Variables set inside the jail (names the policy refuses are refused). */
  readonly env?: Readonly<Record<string, string>>;
  /** Wall-clock seconds, after which the whole process tree is killed. */
  readonly timeout?: number;
  /** How the command's writes reach the workspace (`Result.changes` lists a layer's). */
  readonly workspace?: Workspace;
}

/** Checked options, in a fixed order (their JSON is a session's key for one `cordon serve`). */
export interface Checked {
  readonly cwd: string;
  readonly profile: string | null;
  readonly network: Network | null;
  readonly allowHosts: readonly string[];
  readonly env: readonly (readonly [string, string])[];
  readonly timeout: number | null;
  readonly workspace: Workspace | null;
}

/** Checks every option; throws `TypeError` or `RangeError` naming the option. */
export function check(options: JailOptions): Checked {
  if (typeof options !== "object" || options === null) throw new TypeError("options is an object with at least cwd");
  if (typeof options.cwd !== "string" || options.cwd === "") throw new TypeError("cwd is the workspace's path, a string");
  if (options.profile !== undefined && typeof options.profile !== "string") {
    throw new TypeError("profile is a profile name such as 'shell'");
  }
  if (options.network !== undefined && !NETWORKS.includes(options.network)) {
    throw new RangeError(`network is one of ${NETWORKS.join(", ")}, not ${JSON.stringify(options.network)}`);
  }
  const allowHosts = options.allowHosts ?? [];
  if (!Array.isArray(allowHosts) || !allowHosts.every((h) => typeof h === "string")) {
    throw new TypeError("allowHosts is an array of strings, such as ['example.test:443']");
  }
  const env: [string, string][] = [];
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (typeof value !== "string") throw new TypeError(`env.${key} is not a string`);
    if (key === "" || key.includes("=") || key.includes("\0") || value.includes("\0")) {
      throw new RangeError(`env name ${JSON.stringify(key)} is not a variable name (empty, or holds '=' or NUL)`);
    }
    env.push([key, value]);
  }
  env.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const timeout = options.timeout;
  if (timeout !== undefined && (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 1)) {
    throw new RangeError(`timeout is whole seconds, at least 1, not ${String(timeout)}`);
  }
  if (options.workspace !== undefined && !WORKSPACES.includes(options.workspace)) {
    throw new RangeError(`workspace is one of ${WORKSPACES.join(", ")}, not ${JSON.stringify(options.workspace)}`);
  }
  return {
    cwd: resolve(options.cwd),
    profile: options.profile ?? null,
    network: options.network ?? null,
    allowHosts: [...allowHosts],
    env,
    timeout: timeout ?? null,
    workspace: options.workspace ?? null,
  };
}

/** `base` with what `overrides` gives replaced (what it leaves out stays). */
export function merge(base: JailOptions, overrides: Partial<JailOptions> | undefined): JailOptions {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (value !== undefined) merged[key] = value;
  }
  return merged as unknown as JailOptions;
}

/** The options as `cordon run` and `cordon serve` take them. */
export function flags(options: Checked): string[] {
  const out = ["--cwd", options.cwd];
  if (options.profile !== null) out.push("--profile", options.profile);
  if (options.network !== null) out.push("--network", options.network);
  for (const host of options.allowHosts) out.push("--allow-host", host);
  for (const [key, value] of options.env) out.push("--env", `${key}=${value}`);
  if (options.timeout !== null) out.push("--timeout", String(options.timeout));
  if (options.workspace !== null) out.push(`--${options.workspace}`);
  return out;
}

/** The program and its arguments, checked: an array of strings, not empty. */
export function checkArgv(argv: readonly string[]): string[] {
  if (typeof argv === "string") {
    throw new TypeError(
      "argv is the program and its arguments as an array, not one string: use ['sh', '-c', 'a command line']",
    );
  }
  if (!Array.isArray(argv) || argv.length === 0) throw new RangeError("argv is empty: nothing to run");
  for (const arg of argv) {
    if (typeof arg !== "string") throw new TypeError(`argv holds strings only, not ${typeof arg}`);
    if (arg.includes("\0")) throw new RangeError(`an argument holds a NUL byte: ${JSON.stringify(arg)}`);
  }
  return [...argv];
}

/** One result object (`cordon run --json`, or a line of `cordon serve`): the `Result`, or an
 * `InvalidRequest` for serve's error object and a `Refused` for a refusal. */
export function fromAnswer(answer: unknown): Result {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
    throw new CordonError(`cordon answered something that is not an object: ${JSON.stringify(answer)}`, CANNOT_RUN);
  }
  if (typeof answer === "object" && answer !== null && "error" in answer && !("status" in answer)) {
    const { error, exit_code: code } = answer as { error: unknown; exit_code?: unknown };
    throw new InvalidRequest(String(error), typeof code === "number" ? code : CANNOT_RUN);
  }
  const result = parseResult(answer);
  if (result.status === "refused") throw Refused.of(result);
  return result;
}

/** What `cordon run --json` said: its result, or an error when nothing ran. */
export function fromRun(exitCode: number | null, stdout: string, stderr: string): Result {
  const message = stderr.trim();
  const lines = stdout.trim().split("\n").filter((l) => l !== "");
  const last = lines[lines.length - 1];
  if (last !== undefined) {
    let answer: unknown;
    try {
      answer = JSON.parse(last);
    } catch (e) {
      throw new CordonError(`cordon printed something that is not its result: ${String(e)}`, exitCode ?? CANNOT_RUN);
    }
    return fromAnswer(answer);
  }
  if (exitCode === CANNOT_RUN) throw new InvalidRequest(message || "cordon could not run the command", exitCode);
  if (exitCode === REFUSED) throw new Refused(message || "refused", exitCode);
  throw new CordonError(
    `cordon exited ${String(exitCode)} without a result: ${message || "(nothing on stderr)"}`,
    exitCode ?? CANNOT_RUN,
  );
}

/** The error for a `cordon serve` that ended (or never started) under a session. */
export function ended(exitCode: number | null, stderr: string): CordonError {
  const said = stderr.trim() || "(nothing on stderr)";
  if (exitCode === CANNOT_RUN) return new InvalidRequest(`cordon serve could not start: ${said}`, exitCode);
  if (exitCode === REFUSED) return new Refused(`cordon serve refused the session: ${said}`, exitCode);
  return new SessionClosed(`cordon serve ended (exit ${String(exitCode)}): ${said}`, exitCode ?? CANNOT_RUN);
}
