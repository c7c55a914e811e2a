/**
 * `bernstein replay debug` (spec §6.1) through the binary, on the agent
 * step-journal vectors (agent-a = agent-b, agent-c differs at seq 17).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";

const AJ = join(VECTORS, "agent-journal");
const EXPECT = JSON.parse(readFileSync(join(AJ, "expect.json"), "utf8"));
let cwd = "";
const bucket = (id: string) => join(cwd, ".sdd", "runtime", "journal", id, "000000.jsonl");

beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), "replay-debug-"));
  cpSync(join(AJ, "sdd"), join(cwd, ".sdd"), { recursive: true });
  for (const d of [".sdd", ".sdd/runtime", ".sdd/runtime/journal"]) chmodSync(join(cwd, d), 0o755);
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Copy agent-a to `id` with line `line` (0-based) edited by `edit` on its parsed row. */
function tampered(id: string, line: number, edit: string): void {
  cpSync(join(cwd, ".sdd", "runtime", "journal", "agent-a"), join(cwd, ".sdd", "runtime", "journal", id), { recursive: true });
  runPython(
    `import json,sys
j = json.load(sys.stdin)
lines = open(j["path"]).read().split("\\n")
row = json.loads(lines[j["line"]])
exec(j["edit"])
lines[j["line"]] = json.dumps(row, sort_keys=True, separators=(",", ":"))
open(j["path"], "w").write("\\n".join(lines))
print("[]")`,
    { path: bucket(id), line, edit },
  );
}

describe("replay debug <RUN>", () => {
  test("a healthy journal: head, a debug receipt that verifies, the projection", async () => {
    const r = await bernsteinJson(["replay", "debug", "agent-a", "--limit", "5"], { cwd });
    expect([r.code, r.json.mode, r.json.verified, r.json.head_hash, r.json.steps]).toEqual([0, "single-run", true, EXPECT["agent-a"].head, 60]);
    expect(r.json.receipt).toEqual({ path: ".sdd/runtime/receipts/agent-a.debug.tar", head_hash: EXPECT["agent-a"].head, steps: 60, signed: false });
    expect(r.json.projection.length).toBe(5);
    expect(Object.keys(r.json.projection[0])).toEqual(["seq", "step_hash", "prev_hash", "model", "tool_call"]);
    expect(r.json.projection[0].prev_hash).toBe("0".repeat(64));
    const v = await bernsteinJson(["replay", "verify", r.json.receipt.path, "--head", EXPECT["agent-a"].head], { cwd });
    expect(v.code).toBe(0);
    expect((await bernsteinJson(["replay", "debug", "agent-a"], { cwd })).json.projection.length).toBe(60);
    const prose = await bernstein(["replay", "debug", "agent-a"], { cwd });
    expect(prose.stdout).toBe(
      `Replay debug for agent-a\nhead_hash: ${EXPECT["agent-a"].head}\nsteps: 60\nDebug receipt -> .sdd/runtime/receipts/agent-a.debug.tar (signed=False)\nVerify offline with: bernstein replay verify .sdd/runtime/receipts/agent-a.debug.tar\n`,
    );
  });

  test("--sign signs the debug receipt; a bad key is refused before anything is written", async () => {
    expect((await bernstein(["keys", "generate", "--out-dir", "keys", "--name", "k"], { cwd })).code).toBe(0);
    const r = await bernsteinJson(["replay", "debug", "agent-b", "--sign", "keys/k.key"], { cwd });
    expect([r.code, r.json.receipt.signed]).toEqual([0, true]);
    expect((await bernsteinJson(["replay", "verify", r.json.receipt.path, "--public-key", "keys/k.pub"], { cwd })).code).toBe(0);
    const bad = await bernsteinJson(["replay", "debug", "agent-b", "--sign", "keys/absent.key"], { cwd });
    expect([bad.code, bad.json.error]).toEqual([3, "signing_key_unreadable"]);
  });

  test("--fork-from N seeds a fork journal with steps 0..N that verifies on its own", async () => {
    const r = await bernsteinJson(["replay", "debug", "agent-a", "--fork-from", "7"], { cwd });
    expect(r.code).toBe(0);
    const f = r.json.fork;
    expect([f.from_step, f.fork_session_id, f.fork_branch, f.fork_worktree]).toEqual([7, "agent-a.fork-7", null, null]);
    const seven = readFileSync(bucket("agent-a"), "utf8").split("\n")[7]!;
    expect(f.parent_step_hash).toBe(/"step_hash":"([0-9a-f]{64})"/.exec(seven)![1]);
    const child = await bernsteinJson(["replay", "debug", "agent-a.fork-7"], { cwd });
    expect([child.code, child.json.verified, child.json.steps, child.json.head_hash]).toEqual([0, true, 8, f.parent_step_hash]);
    expect(readFileSync(bucket("agent-a.fork-7"), "utf8")).toBe(readFileSync(bucket("agent-a"), "utf8").split("\n").slice(0, 8).join("\n") + "\n");
    const again = await bernsteinJson(["replay", "debug", "agent-a", "--fork-from", "7"], { cwd });
    expect([again.code, again.json.error]).toEqual([2, "fork_failed"]);
    const range = await bernsteinJson(["replay", "debug", "agent-a", "--fork-from", "60"], { cwd });
    expect([range.code, range.json.error, range.json.detail]).toEqual([2, "fork_failed", "Fork failed: step 60 is out of range (the journal has steps 0..59)"]);
    expect(existsSync(join(cwd, ".sdd", "runtime", "journal", "agent-a.fork-60"))).toBe(false);
  });

  test("--fork-from copies the parent's lines as they are spelled, through step N", async () => {
    // agent-a rewritten by Python: every third row in json.dumps' spaced spelling, a seq written as a string,
    // blank lines, CR LF breaks, and an unhashed blob_refs list of 150 KB (a line the reader takes on its byte
    // path). The fork is every non-blank line through step N, each ended by a line feed (Python's universal
    // newlines split them); the parent hash is step N's.
    cpSync(join(cwd, ".sdd", "runtime", "journal", "agent-a"), join(cwd, ".sdd", "runtime", "journal", "agent-s"), { recursive: true });
    const expected = runPython(
      `import json,sys
j = json.load(sys.stdin)
rows = [json.loads(l) for l in open(j["path"]).read().split("\\n") if l]
out = []
for i, row in enumerate(rows):
    if i == 4: row["seq"] = str(row["seq"])
    if i == 5: row["blob_refs"] = ["%064x" % k for k in range(2300)]
    line = json.dumps(row) if i % 3 == 0 else json.dumps(row, sort_keys=True, separators=(",", ":"))
    out.append(line)
    if i == 2: out.append("   ")
open(j["path"], "w", newline="").write("\\r\\n".join(out) + "\\r\\n")
kept = [l for l in open(j["path"]).read().split("\\n") if l.strip() != ""][: j["n"] + 1]
print(json.dumps({"journal": "\\n".join(kept) + "\\n", "parent": rows[j["n"]]["step_hash"]}))`,
      { path: bucket("agent-s"), n: 6 },
    ) as { journal: string; parent: string };
    const r = await bernsteinJson(["replay", "debug", "agent-s", "--fork-from", "6"], { cwd });
    expect([r.code, r.json.verified, r.json.fork?.parent_step_hash]).toEqual([0, true, expected.parent]);
    expect(readFileSync(bucket("agent-s.fork-6"), "utf8") === expected.journal).toBe(true);
    const child = await bernsteinJson(["replay", "debug", "agent-s.fork-6"], { cwd });
    expect([child.code, child.json.verified, child.json.steps, child.json.head_hash]).toEqual([0, true, 7, expected.parent]);
  });

  test("a tampered journal: the first failing step, its field and hashes; --jump-to-failure names it", async () => {
    tampered("t-model", 4, 'row["model"] = "swapped"');
    const r = await bernsteinJson(["replay", "debug", "t-model", "--jump-to-failure"], { cwd });
    expect([r.code, r.json.verified, r.json.seq, r.json.first_divergent_field, r.json.jump_to_seq, r.json.error]).toEqual([1, false, 4, "step_hash", 4, "chain_broken"]);
    expect(r.json.actual_hash).toBe(/"step_hash":"([0-9a-f]{64})"/.exec(readFileSync(bucket("t-model"), "utf8").split("\n")[4]!)![1]);
    expect(r.json.expected_hash).not.toBe(r.json.actual_hash);
    tampered("t-link", 9, 'row["prev_hash"] = "f" * 64');
    const l = await bernsteinJson(["replay", "debug", "t-link"], { cwd });
    expect([l.code, l.json.seq, l.json.first_divergent_field, l.json.actual_hash, l.json.jump_to_seq]).toEqual([1, 9, "prev_hash", "f".repeat(64), undefined]);
    const prose = await bernstein(["replay", "debug", "t-link"], { cwd });
    expect(prose.stdout).toStartWith(`Chain refused for t-link: tampered / does not verify.\nDivergence at step 9 (field: prev_hash)\nexpected: ${l.json.expected_hash}\nactual:   ${"f".repeat(64)}\n  - `);
  });

  test("missing journal, bad usage, flags of other verbs", async () => {
    const m = await bernsteinJson(["replay", "debug", "nobody"], { cwd });
    expect([m.code, m.json.error]).toEqual([3, "agent_journal_missing"]);
    expect((await bernsteinJson(["replay", "debug"], { cwd })).code).toBe(2);
    expect((await bernsteinJson(["replay", "debug", "a", "b", "c"], { cwd })).code).toBe(2);
    const other = await bernsteinJson(["replay", "list", "--full"], { cwd });
    expect([other.code, other.json.error]).toEqual([2, "flag_not_applicable"]);
  });
});

describe("replay debug <LEFT> <RIGHT>", () => {
  test("diverging runs: the divergence, the steps up to it, a content-addressed artifact", async () => {
    // The vectors' tool results hold NaN, which Python's json (and ours) print: parse with Python.
    const raw = await bernstein(["replay", "debug", "agent-a", "agent-c", "--jump-to-failure", "--as-json"], { cwd });
    const r = { code: raw.code, json: runPython(`import json,sys; print(json.dumps(json.loads(json.load(sys.stdin), parse_constant=lambda c: None)))`, raw.stdout) as any };
    expect([r.code, r.json.mode, r.json.diverged, r.json.divergence.seq, r.json.divergence.fields_changed, r.json.jump_to_seq]).toEqual([1, "two-run", true, 17, ["model"], 17]);
    expect(r.json.steps.length).toBe(18);
    expect(r.json.steps[17]).toMatchObject({ seq: 17, diverged: true, fields_changed: ["model"] });
    expect(r.json.steps[3]).toMatchObject({ seq: 3, diverged: false, fields_changed: [] });
    expect(Object.keys(r.json.steps[0].left)).toEqual(["prev_hash", "input_hash", "model", "prompt", "tool_call", "tool_result"]);
    expect(r.json.artifact_path).toBe(".sdd/runtime/debug/agent-a__agent-c.pathdiff.json");
    const check = runPython(
      `import json,hashlib,sys
p = json.load(sys.stdin)["path"]
text = open(p, encoding="utf-8").read()
d = json.loads(text)
body = {k: d[k] for k in ("diverged", "divergence", "steps")}
canon = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"))
print(json.dumps([text == canon(d) + "\\n", d["diff_hash"], hashlib.sha256(canon(body).encode()).hexdigest()]))`,
      { path: join(cwd, r.json.artifact_path) },
    ) as [boolean, string, string];
    expect(check).toEqual([true, r.json.diff_hash, r.json.diff_hash]);
  });

  test("matching runs exit 0; --fork-from is single-run only; a missing side", async () => {
    const r = await bernstein(["replay", "debug", "agent-a", "agent-b"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("No divergence; chains match end-to-end.\ndiff artifact: .sdd/runtime/debug/agent-a__agent-b.pathdiff.json (");
    const f = await bernsteinJson(["replay", "debug", "agent-a", "agent-b", "--fork-from", "1"], { cwd });
    expect([f.code, f.json.detail]).toEqual([2, "--fork-from applies to single-run debug only."]);
    const m = await bernsteinJson(["replay", "debug", "agent-a", "nobody"], { cwd });
    expect([m.code, m.json.detail]).toEqual([3, "One or both journals are missing."]);
  });
});

test("the debug receipt's path is under the state directory given", async () => {
  const r = await bernsteinJson(["replay", "debug", "agent-a", "--sdd-dir", join(cwd, ".sdd")], { cwd: tmpdir() });
  expect([r.code, r.json.receipt.path]).toEqual([0, join(cwd, ".sdd", "runtime", "receipts", "agent-a.debug.tar")]);
  writeFileSync(join(cwd, "marker"), "");
});
