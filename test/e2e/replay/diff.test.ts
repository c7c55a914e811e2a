import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { makeSdd, type SddTree } from "./fixture.ts";

// Python reference for the first divergence: rows as the tolerant reader keeps
// them, compared on (event, payload_hash recomputed per spec §1.4).
const PY_DIFF = `
import hashlib, json, sys
ND = {"ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"}
def rows(path):
    out = []
    with open(path, encoding="utf-8", errors="surrogateescape", newline=None) as f:
        for line in f:
            s = line.strip()
            if not s or any(0xdc80 <= ord(c) <= 0xdcff for c in s):
                continue
            try:
                r = json.loads(s)
            except ValueError:
                continue
            if isinstance(r, dict):
                out.append(r)
    return out
def proj(r):
    ev = str(r.get("event", "")) if r.get("event", "") is not None else "None"
    p = {k: v for k, v in r.items() if k not in ND}
    p["event"] = ev
    return (ev, hashlib.sha256(json.dumps(p, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest())
res = []
for a, b in json.load(sys.stdin):
    ra, rb = rows(a), rows(b)
    n = min(len(ra), len(rb))
    idx = next((i for i in range(n) if proj(ra[i]) != proj(rb[i])), None)
    if idx is None and len(ra) != len(rb):
        idx = n
    res.append(idx)
print(json.dumps(res))
`;

describe("replay diff RUN_A RUN_B (compiled binary)", () => {
  let t: SddTree;
  const runs = {
    base: "hazards",
    copy: "hazards",
    payload: "hazards-payload-edit",
    evtype: "hazards-event-type-edit",
    trunc: "hazards-clean-truncation",
    clocks: "hazards-unauthenticated-fields-edit",
    foreign: "foreign-writer",
    swapped: "hazards-rows-swapped",
    deleted: "hazards-row-deleted",
    chain: "chain-4",
  };
  beforeAll(() => {
    t = makeSdd(runs);
  });
  afterAll(() => t.cleanup());

  test("the first divergent index agrees with a Python reference for every pair", async () => {
    const pairs = Object.keys(runs).map((r) => ["base", r] as const);
    const want = runPython(PY_DIFF, pairs.map(([a, b]) => [t.journal(a), t.journal(b)])) as (number | null)[];
    for (let i = 0; i < pairs.length; i++) {
      const [a, b] = pairs[i]!;
      const r = await bernsteinJson(["replay", "diff", a, b], { cwd: t.cwd });
      expect([b, r.json.index, r.json.diverged, r.code]).toEqual([b, want[i], want[i] !== null, want[i] === null ? 0 : 1]);
    }
  });

  test("identical runs: No divergence, exit 0; timing and chain fields never count; a foreign writer's spellings do not either", async () => {
    for (const other of ["copy", "clocks", "foreign"]) {
      const r = await bernstein(["replay", "diff", "base", other], { cwd: t.cwd });
      expect([other, r.code]).toEqual([other, 0]);
      // The vectors carry run_id, pid and agent ids: the default rules say they were left out.
      expect(r.stdout).toBe(
        "No divergence: identical: 300 events match\nignored pid, run_id; agent_id compared by order of first appearance (--no-default-ignores compares every field)\ncompared: journal.jsonl of both runs\n",
      );
    }
    const j = await bernsteinJson(["replay", "diff", "base", "clocks"], { cwd: t.cwd });
    expect(j.json).toEqual({
      ok: true,
      log: "journal.jsonl",
      diverged: false,
      index: null,
      reason: "identical: 300 events match",
      reason_code: "identical",
      a_event: null,
      b_event: null,
      fields_changed: [],
      ignored_fields: ["run_id", "git_sha", "git_branch", "fingerprint", "session_id", "pid"],
      aligned_fields: ["agent_id", "agent_ids"],
      rules_applied: ["agent_id", "pid", "run_id"],
    });
  });

  test("a payload edit: payload_mismatch at its step, both rows as recorded, changed fields named", async () => {
    const r = await bernsteinJson(["replay", "diff", "base", "payload"], { cwd: t.cwd });
    expect(r.code).toBe(1);
    expect(Object.keys(r.json)).toEqual(["ok", "error", "detail", "log", "diverged", "index", "reason", "reason_code", "a_event", "b_event", "fields_changed", "ignored_fields", "aligned_fields", "rules_applied"]);
    expect([r.json.ok, r.json.error, r.json.detail]).toEqual([false, "divergence", r.json.reason]);
    expect(r.json.index).toBe(236);
    expect(r.json.reason_code).toBe("payload_mismatch");
    expect(r.json.a_event.index).toBe(236);
    expect(r.json.b_event.index).toBe(236);
    expect(r.json.fields_changed.length).toBeGreaterThan(0);
    for (const f of r.json.fields_changed) {
      expect(["ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"]).not.toContain(f);
      expect(JSON.stringify(r.json.a_event[f])).not.toBe(JSON.stringify(r.json.b_event[f]));
    }
  });

  test("an event-type edit is event_mismatch; a shorter run is length_mismatch with the missing side null", async () => {
    const ev = await bernsteinJson(["replay", "diff", "base", "evtype"], { cwd: t.cwd });
    expect(ev.json.reason_code).toBe("event_mismatch");
    expect(ev.json.fields_changed).toContain("event");
    const len = await bernsteinJson(["replay", "diff", "base", "trunc"], { cwd: t.cwd });
    expect(len.code).toBe(1);
    expect(len.json).toMatchObject({ diverged: true, index: 297, reason_code: "length_mismatch", b_event: null, fields_changed: [] });
    expect(len.json.reason).toBe("run_a has 3 extra event(s) after index 296");
    expect(len.json.a_event.index).toBe(297);
  });

  test("both empty is refused (input_empty, exit 3); with --allow-empty it is not a divergence", async () => {
    for (const n of ["e1", "e2"]) {
      mkdirSync(t.runDir(n), { recursive: true });
      writeFileSync(t.journal(n), "");
    }
    const refused = await bernsteinJson(["replay", "diff", "e1", "e2"], { cwd: t.cwd });
    expect([refused.code, refused.json.error]).toEqual([3, "input_empty"]);
    const r = await bernsteinJson(["replay", "diff", "e1", "e2", "--allow-empty"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ diverged: false, reason_code: "both_empty", reason: "both event logs are empty" });
  });

  test("prose shows both rows side by side with changed fields marked; colour only when allowed", async () => {
    const r = await bernstein(["replay", "diff", "base", "payload"], { cwd: t.cwd, env: { COLUMNS: "120" } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("Divergence at event index 236:");
    expect(r.stdout).toMatch(/run A: base +run B: payload/);
    const changed = (await bernsteinJson(["replay", "diff", "base", "payload"], { cwd: t.cwd })).json.fields_changed as string[];
    for (const f of changed) expect(r.stdout).toMatch(new RegExp(`\\* ${f}: .*\\* ${f}: `));
    expect(r.stdout).not.toContain("\x1b[");
    for (const line of r.stdout.split("\n")) expect([...line].length).toBeLessThanOrEqual(120);
    const colour = await bernstein(["replay", "diff", "base", "payload"], { cwd: t.cwd, env: { NO_COLOR: "", FORCE_COLOR: "1" } });
    expect(colour.stdout).toContain("\x1b[1m\x1b[91m* ");
    const len = await bernstein(["replay", "diff", "trunc", "base"], { cwd: t.cwd });
    expect(len.stdout).toContain("(no event: run A ends before index 297)");
  });

  test("rows of 64 KiB and more: --ignore paths into their large objects apply, their aligned id lists align (no false match)", async () => {
    // such a row is read with its large members still bytes; a rule must reach into them as into any row's
    const ids = (tag: string) => Array.from({ length: 40 }, (_, i) => `backend-${(4096 + i).toString(16)}${tag}`);
    const pad = "x".repeat(70_000);
    const rows = (met: string[], listed: string[], t: number) =>
      [
        { event: "agent_spawned", agent_ids: met, event_hash: "0".repeat(64) },
        { event: "tool_call", agent_ids: listed, payload: { pad, t }, event_hash: "1".repeat(64) },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n") + "\n";
    const put = (run: string, text: string) => {
      mkdirSync(t.runDir(run), { recursive: true });
      writeFileSync(t.journal(run), text);
    };
    put("huge-a", rows(ids("a"), ids("a"), 1));
    put("huge-b", rows(ids("b"), ids("b"), 2));
    put("huge-met-reversed", rows(ids("a").reverse(), ids("a"), 1));
    let r = await bernsteinJson(["replay", "diff", "huge-a", "huge-b", "--ignore", "payload.t"], { cwd: t.cwd });
    expect([r.code, r.json.reason_code]).toEqual([0, "identical"]);
    r = await bernsteinJson(["replay", "diff", "huge-a", "huge-b"], { cwd: t.cwd });
    expect([r.code, r.json.reason_code, r.json.index, r.json.fields_changed]).toEqual([1, "payload_mismatch", 1, ["payload"]]);
    // the same ids as recorded, but run B met them in the other order
    r = await bernsteinJson(["replay", "diff", "huge-a", "huge-met-reversed"], { cwd: t.cwd });
    expect([r.code, r.json.reason_code, r.json.index, r.json.fields_changed]).toEqual([1, "payload_mismatch", 1, ["agent_ids"]]);
  });

  test("missing runs exit 3; usage exit 2", async () => {
    let r = await bernsteinJson(["replay", "diff", "base"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("usage");
    r = await bernsteinJson(["replay", "diff", "base", "nope"], { cwd: t.cwd });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "run_not_found", run_id: "nope" });
    mkdirSync(t.runDir("dir-only"), { recursive: true });
    r = await bernsteinJson(["replay", "diff", "dir-only", "base"], { cwd: t.cwd });
    expect(r.code).toBe(3);
    expect(r.json.error).toBe("journal_missing");
    r = await bernsteinJson(["replay", "diff", "base", "copy", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("flag_not_applicable");
  });
});
