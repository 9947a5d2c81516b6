// The README's TypeScript harness example, exactly as printed there: compiled with tsc against
// the installed package's declarations, then run against real jails.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";

import { envPath, fixture } from "./support";

const MARKER = "<!-- tested: packages/node/test/readme.test.ts -->";

function example(readme: string): string {
  const at = readme.indexOf(MARKER);
  assert.ok(at >= 0, `README.md has no ${MARKER}`);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block?.[1], "no ```ts block after the marker");
  return block[1];
}

test("the README's TypeScript example compiles and runs as shown", () => {
  const code = example(readFileSync(envPath("CORDON_README"), "utf8"));
  assert.ok(code.split("\n").length <= 16, "the example stays short");
  const { workspace } = fixture();
  // Beside this test, so `cordon-sandbox` resolves to the installed package.
  const dir = mkdtempSync(join(dirname(__dirname), "readme-"));
  writeFileSync(join(dir, "example.mts"), code);
  execFileSync(
    process.execPath,
    [envPath("CORDON_TSC"), "--strict", "--module", "node20", "--target", "es2022", "--types", "node", "example.mts"],
    { cwd: dir, stdio: "inherit" },
  );
  const printed = execFileSync(process.execPath, ["example.mjs", workspace], { cwd: dir, encoding: "utf8" });
  assert.equal(printed, "0 [] \n0 [] hi\nrefused: recursive-delete\n");
  assert.equal(readFileSync(join(workspace, "hello.txt"), "utf8"), "hi\n");
});
