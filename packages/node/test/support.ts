// What the tests share: a fresh home with a credential to mask, and a workspace in it.
//
// Everything lives under $CORDON_TEST_DIR, which must be a directory the jail shows as the
// host's: a jail replaces /tmp and /var/tmp with private ones, which would hide a home made
// there and make every "the credential stays hidden" check vacuous. `cargo xtask ci packages`
// sets it under target/.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { join, sep } from "node:path";

/** Planted as a private key in the test home; it must never appear in a jailed command's output. */
export const SENTINEL = "CORDON-TEST-SENTINEL-PRIVATE-KEY";

/** A path the CI step provides; a missing one fails the test (never a skip). */
export function envPath(name: string): string {
  const value = process.env[name];
  assert.ok(value, `$${name} is not set: cargo xtask ci packages sets it (xtask/src/packages.rs)`);
  return value;
}

export interface Fixture {
  readonly home: string;
  readonly workspace: string;
}

/** A new home (set as HOME for the cordon processes this test starts) and a workspace in it. */
export function fixture(): Fixture {
  const base = realpathSync(envPath("CORDON_TEST_DIR"));
  for (const hidden of ["/tmp", "/var/tmp"]) {
    assert.ok(
      base !== hidden && !base.startsWith(hidden + sep),
      `$CORDON_TEST_DIR ${base} is under ${hidden}, which every jail replaces: the credential checks would prove nothing`,
    );
  }
  const home = mkdtempSync(join(base, "home-"));
  mkdirSync(join(home, ".ssh"));
  writeFileSync(join(home, ".ssh", "id_ed25519"), SENTINEL + "\n");
  const workspace = join(home, "work");
  mkdirSync(workspace);
  process.env["HOME"] = home;
  return { home, workspace };
}
