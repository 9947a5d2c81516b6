// `Session`: many commands over `cordon serve`.

import { spawn, type ChildProcessByStdio } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";

import { cordonBinary } from "./binary";
import { SessionClosed } from "./errors";
import { check, checkArgv, ended, flags, fromAnswer, merge, type Checked, type JailOptions } from "./options";
import type { Result } from "./result";

/** A session's options: the jail's (the default of every `run`), and which `cordon` to use. */
export interface SessionOptions extends JailOptions {
  readonly binary?: string;
}

/** Lines of a `cordon serve`'s stderr kept for the message when it ends. */
const STDERR_LINES = 40;

interface Pending {
  resolve: (answer: unknown) => void;
  reject: (error: unknown) => void;
}

/** One `cordon serve` process: a request line in, an answer line out, in order. */
class Serve {
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly pending: Pending[] = [];
  private readonly stderr: string[] = [];
  private readonly exited: Promise<number | null>;
  private failure: Error | null = null;

  constructor(binary: string, options: Checked) {
    this.child = spawn(binary, ["serve", ...flags(options)], { stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: this.child.stdout, crlfDelay: Infinity }).on("line", (line) => {
      const next = this.pending.shift();
      if (!next) return;
      try {
        next.resolve(JSON.parse(line));
      } catch (e) {
        next.reject(e);
      }
    });
    // Drained all along, so a chatty session never blocks on a full pipe.
    createInterface({ input: this.child.stderr, crlfDelay: Infinity }).on("line", (line) => {
      this.stderr.push(line);
      if (this.stderr.length > STDERR_LINES) this.stderr.shift();
    });
    // A request written after serve exited fails here; the exit below rejects it.
    this.child.stdin.on("error", () => undefined);
    this.exited = new Promise((resolveExit) => {
      this.child.on("error", (e) => {
        this.failure = e;
        resolveExit(null);
      });
      this.child.on("close", (code) => resolveExit(code));
    });
    void this.exited.then((code) => {
      const error = this.failure ?? ended(code, this.stderr.join("\n"));
      for (const p of this.pending.splice(0)) p.reject(error);
    });
  }

  async ask(argv: string[]): Promise<Result> {
    if (this.child.exitCode !== null || this.child.stdin.destroyed || this.child.stdin.writableEnded) {
      throw this.failure ?? ended(this.child.exitCode, this.stderr.join("\n"));
    }
    const answer = await new Promise<unknown>((resolveAnswer, reject) => {
      this.pending.push({ resolve: resolveAnswer, reject });
      this.child.stdin.write(JSON.stringify(argv) + "\n");
    });
    return fromAnswer(answer);
  }

  /** End of input ends the session: serve kills the jail built ahead and exits 0. */
  async close(): Promise<void> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGTERM"), 30_000);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Many commands over `cordon serve`: the workspace is walked once, and each command is handed
 * to a jail built (and checked) while you worked on the previous result. `run` takes the same
 * jail options as the module's `run`; what it leaves out is the session's. One `cordon serve`'s
 * options are fixed, so the session keeps one per distinct set of options it was asked for (the
 * first at construction, others when first needed); `close` ends them all.
 */
export class Session {
  private readonly binary: string;
  private readonly options: JailOptions;
  private readonly serves = new Map<string, Serve>();
  private closed = false;

  constructor(options: SessionOptions) {
    const { binary, ...jail } = options;
    check(jail);
    this.binary = cordonBinary(binary);
    this.options = jail;
    this.serve(jail);
  }

  private serve(options: JailOptions): Serve {
    if (this.closed) throw new SessionClosed("the session is closed", 125);
    const checked = check(options);
    const key = JSON.stringify(checked);
    let serve = this.serves.get(key);
    if (!serve) {
      serve = new Serve(this.binary, checked);
      this.serves.set(key, serve);
    }
    return serve;
  }

  /**
   * Runs `argv` in a jail of its own. Resolves to the `Result` (also for a failed or timed-out
   * command); rejects with `Refused`, `InvalidRequest`, or `SessionClosed` after `close`.
   */
  async run(argv: readonly string[], options?: Partial<JailOptions>): Promise<Result> {
    const command = checkArgv(argv);
    return this.serve(merge(this.options, options)).ask(command);
  }

  /** Ends every `cordon serve` of the session (each kills its jail built ahead). */
  async close(): Promise<void> {
    this.closed = true;
    const serves = [...this.serves.values()];
    this.serves.clear();
    await Promise.all(serves.map((s) => s.close()));
  }

  /** `await using session = new Session(...)` closes it at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
