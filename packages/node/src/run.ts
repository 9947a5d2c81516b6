// `run`: one `cordon run --json` per command.

import { spawn } from "node:child_process";

import { cordonBinary } from "./binary";
import { check, checkArgv, flags, fromRun, type JailOptions } from "./options";
import type { Result } from "./result";

/** `run`'s options: the jail's, which `cordon` to use, and a signal that ends the command. */
export interface RunOptions extends JailOptions {
  /** The `cordon` to use (default: the one this package carries, see `cordonBinary`). */
  readonly binary?: string;
  /** Aborting it ends the command: cordon kills the whole jail, and `run` rejects. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `argv` in a jail of its own whose workspace is `options.cwd`. Resolves to the `Result`
 * also when the command failed or timed out; rejects with `Refused` (exit 126) when cordon
 * refused to run it, `InvalidRequest` (exit 125) for bad input or configuration.
 */
export async function run(argv: readonly string[], options: RunOptions): Promise<Result> {
  const command = checkArgv(argv);
  const checked = check(options);
  const binary = cordonBinary(options.binary);
  options.signal?.throwIfAborted();
  return new Promise<Result>((resolvePromise, reject) => {
    const child = spawn(binary, ["run", "--json", ...flags(checked), "--", ...command], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    // cordon ends its jail on SIGTERM (every process of it) and exits 143.
    const abort = (): void => void child.kill("SIGTERM");
    options.signal?.addEventListener("abort", abort, { once: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      options.signal?.removeEventListener("abort", abort);
      if (options.signal?.aborted) {
        reject(options.signal.reason);
        return;
      }
      try {
        resolvePromise(fromRun(code, Buffer.concat(out).toString("utf8"), Buffer.concat(err).toString("utf8")));
      } catch (e) {
        reject(e);
      }
    });
  });
}
