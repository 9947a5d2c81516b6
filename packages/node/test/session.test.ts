import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";

import { InvalidRequest, Refused, Session, SessionClosed } from "cordon-sandbox";

import { SENTINEL, fixture } from "./support";

test("a live session runs many commands, each in a jail built ahead", async () => {
  const { home, workspace } = fixture();
  const session = new Session({ cwd: workspace, timeout: 30, workspace: "live" });
  const first = await session.run(["sh", "-c", "echo 1 > one.txt; cat ~/.ssh/id_ed25519"]);
  const second = await session.run(["cat", "one.txt"]);
  const third = await session.run(["sh", "-c", "exit 4"]);
  const secret = await session.run(["cat", join(home, ".ssh", "id_ed25519")]);
  await session.close();
  assert.ok(!(first.stdout + first.stderr).includes(SENTINEL));
  assert.equal(second.stdout, "1\n");
  assert.ok(second.builtAhead && third.builtAhead);
  assert.equal(third.exitCode, 4);
  assert.notEqual(secret.exitCode, 0);
  assert.ok(!secret.stdout.includes(SENTINEL));
  await assert.rejects(session.run(["true"]), SessionClosed);
});

test("a default session commits each command's layer before the next", async () => {
  const { workspace } = fixture();
  const session = new Session({ cwd: workspace, timeout: 30 });
  const first = await session.run(["sh", "-c", "echo 1 > one.txt; mkdir -p .vscode; echo x > .vscode/tasks.json"]);
  const second = await session.run(["cat", "one.txt"]);
  await session.close();
  // A layered command runs in the jail built ahead of it, which takes the layer when the
  // command comes: it sees what the one before committed.
  assert.equal(first.workspace, "layer");
  assert.ok(second.builtAhead);
  assert.equal(second.stdout, "1\n");
  const changes = first.changes as { applied: boolean; roots: { report: { added: { path: string }[]; refused: { path: string }[] } }[] };
  assert.equal(changes.applied, true);
  assert.deepEqual(changes.roots[0]!.report.added.map((a) => a.path), ["one.txt"]);
  assert.ok(changes.roots[0]!.report.refused.some((r) => r.path === ".vscode"));
  assert.ok(first.violations.some((v) => v.kind === "change-refused"));
});

test("a session's run takes the jail options run takes", async () => {
  const { workspace } = fixture();
  const session = new Session({ cwd: workspace });
  try {
    const [slow, greeted, plain] = await Promise.all([
      session.run(["sleep", "30"], { timeout: 1 }),
      session.run(["sh", "-c", 'echo "$GREETING"'], { env: { GREETING: "hello" } }),
      session.run(["sh", "-c", 'echo "${GREETING:-unset}"']),
    ]);
    assert.ok(slow.timedOut);
    assert.equal(greeted.stdout, "hello\n");
    assert.equal(plain.stdout, "unset\n");
  } finally {
    await session.close();
  }
});

test("a session rejects refusals and goes on", async () => {
  const { workspace } = fixture();
  const session = new Session({ cwd: workspace });
  try {
    await assert.rejects(session.run(["rm", "-rf", "/"]), (e: unknown) => {
      assert.ok(e instanceof Refused);
      assert.equal(e.rule, "recursive-delete");
      return true;
    });
    assert.equal((await session.run(["echo", "still here"])).stdout, "still here\n");
  } finally {
    await session.close();
  }
});

test("a session cordon cannot start says why", async () => {
  const { home } = fixture();
  const session = new Session({ cwd: home });
  try {
    await assert.rejects(session.run(["true"]), (e: unknown) => {
      assert.ok(e instanceof InvalidRequest);
      assert.equal(e.exitCode, 125);
      assert.ok(e.message.includes(home), e.message);
      return true;
    });
  } finally {
    await session.close();
  }
});
