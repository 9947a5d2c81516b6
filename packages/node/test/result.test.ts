import assert from "node:assert/strict";
import { test } from "node:test";

import { parseResult } from "cordon-sandbox";

test("unknown keys are kept in raw, missing ones take their defaults", () => {
  const changes = { added: ["a.txt"], modified: [], deleted: [], refused: [], held: [], conflicts: [] };
  const result = parseResult({
    status: "exited",
    exit_code: 0,
    stdout: { text: "x", truncated: false, bytes: 1 },
    violations: [{ kind: "write-denied", line: "l", path: "/p", future: 1 }],
    changes,
  });
  assert.deepEqual(result.raw["changes"], changes);
  assert.equal(result.violations[0]?.path, "/p");
  assert.equal(result.violations[0]?.raw["future"], 1);
  assert.equal(result.stderr, "");
  assert.equal(result.network, null);
  assert.ok(result.ok);
});

test("a status a later cordon adds reads as itself", () => {
  assert.equal(parseResult({ status: "held", exit_code: 0 }).status, "held");
});
