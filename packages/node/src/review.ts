// The change sets cordon keeps for a workspace: what a command run with `workspace: "review"`
// left (and what any run held or refused), read and decided on from TypeScript. `changes`,
// `diff`, `apply` and `drop` are `cordon changes`, `diff`, `apply` and `drop` with `--json`
// (schemas in docs/cli.md). A run's name is in its result: `result.changes.roots[i].report.run`.

import { spawn } from "node:child_process";

import { cordonBinary } from "./binary";
import { CANNOT_RUN, CordonError, InvalidRequest } from "./errors";

/** Where the change sets are: the workspace, and which `cordon` to ask. */
export interface ReviewOptions {
  /** The workspace (the `cwd` its commands ran with). */
  readonly cwd: string;
  /** The `cordon` to use (default: the one this package carries, see `cordonBinary`). */
  readonly binary?: string;
}

/** One run that keeps changes, as `cordon changes --json` lists it. */
export interface KeptRun {
  readonly run: string;
  readonly root: string;
  readonly pending: number;
  readonly held: number;
  readonly refused: number;
  readonly conflicts: number;
  readonly applied: number;
}

type Json = Record<string, unknown>;

function ask(options: ReviewOptions, args: string[]): Promise<unknown> {
  if (typeof options?.cwd !== "string" || options.cwd === "") {
    return Promise.reject(new InvalidRequest("cwd: the workspace is required", CANNOT_RUN));
  }
  const binary = cordonBinary(options.binary);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const said = Buffer.concat(err).toString("utf8").trim();
      if (code === CANNOT_RUN) {
        reject(new InvalidRequest(said || `cordon ${args[0]} failed`, CANNOT_RUN));
        return;
      }
      if (code !== 0) {
        reject(new CordonError(`cordon ${args[0]} exited ${String(code)}: ${said}`, code ?? CANNOT_RUN));
        return;
      }
      try {
        resolvePromise(JSON.parse(Buffer.concat(out).toString("utf8")));
      } catch (e) {
        reject(new CordonError(`cordon ${args[0]} printed something that is not JSON: ${String(e)}`, CANNOT_RUN));
      }
    });
  });
}

function runName(run: string): string {
  if (typeof run !== "string" || run === "" || run.startsWith("-")) {
    throw new InvalidRequest(`the run ${JSON.stringify(run)} is not a run's name (as \`changes\` lists it)`, CANNOT_RUN);
  }
  return run;
}

/** The workspace's runs that keep changes. */
export async function changes(options: ReviewOptions): Promise<KeptRun[]> {
  const answer = (await ask(options, ["changes", "--json", "--workspace", options.cwd])) as Json;
  return Array.isArray(answer?.["runs"]) ? (answer["runs"] as KeptRun[]) : [];
}

/** What `run` keeps: its manifest (`entries`, each with its status and finding). */
export async function diff(run: string, options: ReviewOptions): Promise<Json> {
  const name = runName(run);
  return (await ask(options, ["diff", "--json", "--workspace", options.cwd, "--", name])) as Json;
}

/**
 * Applies what `run` keeps (only `paths`, relative to the workspace, when given), each change
 * judged again for conflicts with the host; resolves to the commit's report.
 */
export async function apply(run: string, options: ReviewOptions & { readonly paths?: readonly string[] }): Promise<Json> {
  const name = runName(run);
  const paths = options.paths ?? [];
  if (!Array.isArray(paths) || paths.some((p) => typeof p !== "string")) {
    throw new InvalidRequest("paths: an array of paths relative to the workspace", CANNOT_RUN);
  }
  return (await ask(options, ["apply", "--json", "--workspace", options.cwd, "--", name, ...paths])) as Json;
}

/** Discards `run` and everything it keeps; the workspace is not touched. */
export async function drop(run: string, options: ReviewOptions): Promise<void> {
  const name = runName(run);
  await ask(options, ["drop", "--json", "--workspace", options.cwd, "--", name]);
}
