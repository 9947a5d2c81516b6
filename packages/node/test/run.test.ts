import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { test } from "node:test";

import { InvalidRequest, Refused, cordonBinary, packagedBinary, run } from "cordon-sandbox";

import { SENTINEL, fixture } from "./support";

test("the package carries the binary it runs", () => {
  const binary = cordonBinary();
  assert.equal(binary, packagedBinary());
  assert.ok(binary.includes(`${sep}node_modules${sep}cordon-sandbox${sep}vendor${sep}`), binary);
  const manifest = JSON.parse(readFileSync(require.resolve("cordon-sandbox/package.json"), "utf8")) as {
    version: string;
  };
  assert.equal(execFileSync(binary, ["--version"], { encoding: "utf8" }).trim(), `cordon ${manifest.version}`);
});

test("a command writes its workspace and the result reports the jail", async () => {
  const { workspace } = fixture();
  const result = await run(["sh", "-c", "echo hello > note.txt && cat note.txt"], { cwd: workspace });
  assert.equal(result.status, "exited");
  assert.equal(result.exitCode, 0);
  assert.equal(result.stdout, "hello\n");
  assert.ok(result.ok && !result.timedOut);
  assert.ok(result.sandboxed);
  assert.equal(result.backend, "bubblewrap");
  assert.match(result.policyHash ?? "", /^sha256:/);
  assert.equal(result.stdoutBytes, 6);
  assert.equal(readFileSync(join(workspace, "note.txt"), "utf8"), "hello\n");
});

test("credentials stay hidden and writes outside the workspace are denied", async () => {
  const { home, workspace } = fixture();
  // A write to the home lands in the workspace's private home, never the real one; a write
  // outside the writable set is denied.
  const result = await run(
    ["sh", "-c", "cat ~/.ssh/id_ed25519; echo x > ~/planted; echo x > /usr/cordon-test-planted; echo done"],
    { cwd: workspace },
  );
  assert.ok(!(result.stdout + result.stderr).includes(SENTINEL));
  assert.equal(result.stdout, "done\n");
  assert.ok(!existsSync(join(home, "planted")));
  assert.ok(!existsSync("/usr/cordon-test-planted"));
  const denied = result.violations.filter((v) => v.kind === "write-denied");
  assert.equal(denied[0]?.path, "/usr/cordon-test-planted", JSON.stringify(result.violations));
});

test("a failing command resolves, a timeout kills, output past the cap is truncated", async () => {
  const { workspace } = fixture();
  const failed = await run(["sh", "-c", "echo oops >&2; exit 3"], { cwd: workspace });
  assert.deepEqual([failed.exitCode, failed.stderr, failed.ok], [3, "oops\n", false]);
  const slow = await run(["sleep", "30"], { cwd: workspace, timeout: 1 });
  assert.ok(slow.timedOut);
  assert.equal(slow.exitCode, 124);
  const loud = await run(["sh", "-c", `yes | head -c ${5 << 20}`], { cwd: workspace });
  assert.ok(loud.stdoutTruncated);
  assert.equal(loud.stdoutBytes, 5 << 20);
  assert.equal(loud.stdout.length, 4 << 20);
});

test("env reaches the command, injection names are invalid input", async () => {
  const { workspace } = fixture();
  const greeted = await run(["sh", "-c", 'echo "$GREETING"'], { cwd: workspace, env: { GREETING: "hi there" } });
  assert.equal(greeted.stdout, "hi there\n");
  await assert.rejects(run(["true"], { cwd: workspace, env: { LD_PRELOAD: "/x.so" } }), (e: unknown) => {
    assert.ok(e instanceof InvalidRequest);
    assert.equal(e.exitCode, 125);
    assert.match(e.message, /LD_PRELOAD/);
    return true;
  });
});

test("the floor refuses with its rule; a refused workspace is invalid input", async () => {
  const { home, workspace } = fixture();
  await assert.rejects(run(["rm", "-rf", "/"], { cwd: workspace }), (e: unknown) => {
    assert.ok(e instanceof Refused);
    assert.equal(e.exitCode, 126);
    assert.equal(e.rule, "recursive-delete");
    assert.equal(e.result?.status, "refused");
    return true;
  });
  await assert.rejects(run(["true"], { cwd: home }), (e: unknown) => {
    assert.ok(e instanceof InvalidRequest);
    assert.ok(e.message.includes(home), e.message);
    return true;
  });
});

test("the proxy network and a profile are passed on", async () => {
  const { workspace } = fixture();
  const proxied = await run(["true"], { cwd: workspace, network: "proxy", allowHosts: ["example.test:8080"] });
  assert.equal(proxied.network?.mode, "proxy");
  assert.ok((await run(["true"], { cwd: workspace, profile: "quality-gate" })).ok);
});

test("aborting a run ends its jail", async () => {
  const { workspace } = fixture();
  const controller = new AbortController();
  const started = Date.now();
  const pending = run(["sh", "-c", "sleep 3; touch late.txt"], { cwd: workspace, signal: controller.signal });
  setTimeout(() => controller.abort(new Error("enough")), 500);
  await assert.rejects(pending, /enough/);
  assert.ok(Date.now() - started < 3_000);
  // The whole tree was killed: the command never gets to its last step.
  await new Promise((done) => setTimeout(done, 3_500));
  assert.ok(!existsSync(join(workspace, "late.txt")));
});

test("bad arguments are refused before anything runs", async () => {
  const { workspace } = fixture();
  const bad: [unknown, object, RegExp][] = [
    ["ls -l", {}, /not one string/],
    [[], {}, /empty/],
    [["ls", 1], {}, /strings only/],
    [["ls"], { timeout: 0 }, /whole seconds/],
    [["ls"], { timeout: 1.5 }, /whole seconds/],
    [["ls"], { network: "open" }, /network is one of/],
    [["ls"], { allowHosts: "example.test" }, /allowHosts/],
    [["ls"], { env: { "A=B": "c" } }, /not a variable name/],
  ];
  for (const [argv, options, message] of bad) {
    await assert.rejects(run(argv as string[], { cwd: workspace, ...options }), message);
  }
});
