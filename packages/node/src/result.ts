// The result of one command: `cordon run --json`'s object, in camelCase.
//
// Parsing is tolerant in the direction the schema grows: a key this version does not know is
// kept in `raw`, and a key it knows but the object lacks takes its default. Fields are only
// ever added (optional ones), so code written against this version keeps compiling and working
// when cordon reports more (the workspace's change set, say).

/** The statuses cordon reports today; `Result.status` is a plain string so a later one reads as itself. */
export type Status = "exited" | "signaled" | "timeout" | "refused";

/** One denial cordon recognised (docs/cli.md lists the kinds). */
export interface Violation {
  readonly kind: string;
  readonly line: string;
  readonly path: string | null;
  readonly rule: string | null;
  readonly host: string | null;
  readonly port: number | null;
  readonly key: string | null;
  readonly operation: string | null;
  readonly raw: Readonly<Record<string, unknown>>;
}

/** A destination the proxy allowed (`network: "proxy"`). */
export interface Destination {
  readonly host: string;
  readonly port: number;
  readonly connections: number;
  readonly bytesOut: number;
  readonly bytesIn: number;
}

/** What the proxy did during the run (`network: "proxy"` only). */
export interface NetworkReport {
  readonly mode: string;
  readonly refused: number;
  readonly destinations: readonly Destination[];
}

/** What one command did, in the jail. */
export interface Result {
  /** `exited`, `signaled`, `timeout` or `refused` (see `Status`). */
  readonly status: Status | (string & {});
  readonly exitCode: number;
  /** The kept output as text (lossy UTF-8), up to the profile's output cap. */
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  /** Everything written, kept or not. */
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  readonly signal: number | null;
  readonly durationMs: number;
  readonly backend: string | null;
  readonly sandboxed: boolean;
  readonly policyHash: string | null;
  readonly violations: readonly Violation[];
  readonly refusal: string | null;
  readonly rule: string | null;
  readonly warnings: readonly string[];
  readonly envDropped: Readonly<Record<string, number>>;
  readonly landlock: string | null;
  readonly builtAhead: boolean;
  readonly network: NetworkReport | null;
  /** `layer`, `review` or `live`: how the command's writes reached the workspace. */
  readonly workspace: string | null;
  /** A layered run's change set as cordon reports it (`applied`, and per root what was added,
   * modified, deleted, refused, held, in conflict); `null` for a live run. */
  readonly changes: Readonly<Record<string, unknown>> | null;
  /** The command ran to its end and exited 0. */
  readonly ok: boolean;
  /** The wall-clock timeout passed and the whole process tree was killed (exit 124). */
  readonly timedOut: boolean;
  /** cordon's whole object, including keys this version does not know. */
  readonly raw: Readonly<Record<string, unknown>>;
}

type Json = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(obj: Json, key: string): string | null {
  const value = obj[key];
  return typeof value === "string" ? value : null;
}

function int(obj: Json, key: string): number | null {
  const value = obj[key];
  return typeof value === "number" && Number.isInteger(value) ? value : null;
}

function object(obj: Json, key: string): Json {
  const value = obj[key];
  return isObject(value) ? value : {};
}

function objects(obj: Json, key: string): Json[] {
  const value = obj[key];
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function violation(obj: Json): Violation {
  return {
    kind: str(obj, "kind") ?? "unknown",
    line: str(obj, "line") ?? "",
    path: str(obj, "path"),
    rule: str(obj, "rule"),
    host: str(obj, "host"),
    port: int(obj, "port"),
    key: str(obj, "key"),
    operation: str(obj, "operation"),
    raw: obj,
  };
}

function network(obj: Json): NetworkReport {
  return {
    mode: str(obj, "mode") ?? "",
    refused: int(obj, "refused") ?? 0,
    destinations: objects(obj, "destinations").map((d) => ({
      host: str(d, "host") ?? "",
      port: int(d, "port") ?? 0,
      connections: int(d, "connections") ?? 0,
      bytesOut: int(d, "bytes_out") ?? 0,
      bytesIn: int(d, "bytes_in") ?? 0,
    })),
  };
}

/** Reads `cordon run --json`'s object (or one answer of `cordon serve`). */
export function parseResult(value: unknown): Result {
  const obj: Json = isObject(value) ? value : {};
  const stdout = object(obj, "stdout");
  const stderr = object(obj, "stderr");
  const status = str(obj, "status") ?? "refused";
  const exitCode = int(obj, "exit_code") ?? 125;
  const duration = obj["duration_ms"];
  const envDropped: Record<string, number> = {};
  for (const [reason, count] of Object.entries(object(obj, "env_dropped"))) {
    if (typeof count === "number") envDropped[reason] = count;
  }
  const warnings = obj["warnings"];
  const net = obj["network"];
  return {
    status,
    exitCode,
    stdout: str(stdout, "text") ?? "",
    stderr: str(stderr, "text") ?? "",
    stdoutTruncated: stdout["truncated"] === true,
    stderrTruncated: stderr["truncated"] === true,
    stdoutBytes: int(stdout, "bytes") ?? 0,
    stderrBytes: int(stderr, "bytes") ?? 0,
    signal: int(obj, "signal"),
    durationMs: typeof duration === "number" ? duration : 0,
    backend: str(obj, "backend"),
    sandboxed: obj["sandboxed"] === true,
    policyHash: str(obj, "policy_hash"),
    violations: objects(obj, "violations").map(violation),
    refusal: str(obj, "refusal"),
    rule: str(obj, "rule"),
    warnings: Array.isArray(warnings) ? warnings.filter((w): w is string => typeof w === "string") : [],
    envDropped,
    landlock: str(obj, "landlock"),
    builtAhead: obj["built_ahead"] === true,
    network: isObject(net) ? network(net) : null,
    workspace: str(obj, "workspace"),
    changes: isObject(obj["changes"]) ? (obj["changes"] as Json) : null,
    ok: status === "exited" && exitCode === 0,
    timedOut: status === "timeout",
    raw: obj,
  };
}
