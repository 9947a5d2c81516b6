// Where the `cordon` binary is: the package carries it for Linux x86_64 (vendor/linux-x64).

import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

import { BinaryNotFound, CANNOT_RUN } from "./errors";

/** An explicit binary, for a checkout or a copy of `cargo xtask dist`'s. */
export const ENV_VAR = "CORDON_BINARY";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The binary this package carries, for this platform (null where it carries none). */
export function packagedBinary(): string | null {
  if (process.platform !== "linux" || process.arch !== "x64") return null;
  return join(__dirname, "..", "vendor", "linux-x64", "cordon");
}

/**
 * The `cordon` to run: `explicit` when given, else `$CORDON_BINARY`, else the one this package
 * carries, else `cordon` on `PATH`. Throws `BinaryNotFound` when none is an executable file.
 */
export function cordonBinary(explicit?: string): string {
  for (const [source, candidate] of [
    ["binary", explicit],
    [`$${ENV_VAR}`, process.env[ENV_VAR]],
  ] as const) {
    if (candidate) {
      if (executable(candidate)) return candidate;
      throw new BinaryNotFound(`${source} names ${JSON.stringify(candidate)}, which is not an executable file`, CANNOT_RUN);
    }
  }
  const packaged = packagedBinary();
  if (packaged && executable(packaged)) return packaged;
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir && executable(join(dir, "cordon"))) return join(dir, "cordon");
  }
  throw new BinaryNotFound(
    `no cordon binary: ${packaged ?? "this package carries none for " + process.platform + "-" + process.arch}` +
      ` is missing, none is on PATH, and $${ENV_VAR} is not set`,
    CANNOT_RUN,
  );
}
