/**
 * Run receipts of journals every other verb reads: `verify run` embeds a
 * row as long as the journal's own limit and `verify receipt` reads it
 * back, each within 64 MB + 3 x the row (the rows are streamed, never the
 * whole journal or receipt in memory); the independent Python oracle
 * verifies what was written. Through the compiled binary.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein } from "../../helpers/cli.ts";
import { measuredRun } from "../../helpers/dense-rows.ts";
import { runPython } from "../../helpers/python.ts";
import { oracle } from "../../helpers/upstream-receipts.ts";

const ROW_BYTES = 40_000_000;
let cwd = "";

// What a Python producer writes (json.dumps), one 40 MB tool result among ordinary events.
const EVENTS = `import json, sys
out = open(json.load(sys.stdin)["out"], "w")
for i in range(50):
    out.write(json.dumps({"event": "tool_call", "agent_id": "a-%d" % (i % 3), "args": {"path": "src/é_%d.py" % i, "n": [1.5, float("nan"), None]}}) + "\\n")
out.write(json.dumps({"event": "tool_result", "output": "é\\"\\\\" * 10 + "x" * ${ROW_BYTES}, "list": list(range(1000))}) + "\\n")
out.write(json.dumps({"event": "run_completed", "ticks": 3}) + "\\n")
print("[]")`;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), "verify-run-scale-"));
  runPython(EVENTS, { out: join(cwd, "events.jsonl") });
  const rec = await measuredRun(["journal", "record", "big"], { cwd, stdinFile: join(cwd, "events.jsonl") });
  expect([rec.code, rec.stderr.trim()]).toEqual([0, ""]);
  expect((await bernstein(["keys", "generate", "--out-dir", "keys", "--name", "k"], { cwd })).code).toBe(0);
}, 60_000);
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe("run receipts of a journal with a row over the old 16 MiB limit", () => {
  const bound = 64e6 + 3 * ROW_BYTES;

  test("verify run signs it, in 64 MB + 3x the row; verify receipt and the Python oracle accept it", async () => {
    const journal = join(cwd, ".sdd", "runs", "big", "journal.jsonl");
    expect(statSync(journal).size).toBeGreaterThan(ROW_BYTES);
    const out = join(cwd, "receipt.json");
    const run = await measuredRun(["verify", "run", "big", "--signing-key-path", "keys/k.key", "-o", out, "--as-json"], { cwd });
    expect([run.code, run.stderr.trim()]).toEqual([0, ""]);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, journal_events: 52 });
    expect(run.peakRss).toBeLessThan(bound);

    const check = await measuredRun(["verify", "receipt", out, "--as-json"], { cwd });
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: true, journal_events: 52 });
    expect(check.peakRss).toBeLessThan(bound);

    expect(oracle([out])[0]).toMatchObject({ status: "ok", receipt_sha256: JSON.parse(run.stdout).receipt_sha256 });
  }, 120_000);
});
