import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { InvalidRequest, apply, changes, diff, drop, run } from "cordon-sandbox";

import { fixture } from "./support";

async function keptRun(workspace: string, script: string): Promise<string> {
  const result = await run(["sh", "-c", script], { cwd: workspace, workspace: "review", timeout: 30 });
  assert.equal(result.exitCode, 0);
  assert.equal(result.workspace, "review");
  const kept = result.changes as { applied: boolean; roots: { report: { run: string } }[] };
  assert.equal(kept.applied, false);
  return kept.roots[0]!.report.run;
}

test("a reviewed run is listed, shown, then applied or dropped", async () => {
  const { workspace } = fixture();
  const kept = await keptRun(workspace, "echo kept > a.txt");
  const dropped = await keptRun(workspace, "echo dropped > b.txt");
  // Nothing reached the workspace while the runs wait for a decision.
  assert.ok(!existsSync(join(workspace, "a.txt")) && !existsSync(join(workspace, "b.txt")));
  const names = (await changes({ cwd: workspace })).map((r) => r.run);
  assert.ok(names.includes(kept) && names.includes(dropped));
  const shown = (await diff(kept, { cwd: workspace })) as { entries: { path: string }[] };
  assert.ok(shown.entries.some((e) => e.path === "a.txt"));

  const report = await apply(kept, { cwd: workspace });
  assert.equal(report["applied"], true);
  assert.equal(readFileSync(join(workspace, "a.txt"), "utf8"), "kept\n");
  await drop(dropped, { cwd: workspace });
  assert.ok(!existsSync(join(workspace, "b.txt")));
  assert.ok(!(await changes({ cwd: workspace })).some((r) => r.run === dropped));
});

test("a run that is not kept or not a name is refused by name", async () => {
  const { workspace } = fixture();
  await assert.rejects(apply("no-such-run", { cwd: workspace }), (e: unknown) => {
    assert.ok(e instanceof InvalidRequest);
    assert.ok(e.message.includes("no-such-run"), e.message);
    return true;
  });
  await assert.rejects(drop("--help", { cwd: workspace }), InvalidRequest);
});
