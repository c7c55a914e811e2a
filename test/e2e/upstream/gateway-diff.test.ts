/**
 * `replay diff RUN_A RUN_B` over ReplayGateway logs (spec upstream-parity
 * §5.2), through the binary, on events.jsonl files written as ReplayGateway
 * writes them (test/reference/upstream_writers.py).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { upstreamWrite } from "../../helpers/upstream.ts";
import { tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("gwdiff21");
afterAll(() => dirs.cleanup());

type Call = { kind: string; key: unknown; response: unknown; metadata?: unknown };
const CALLS: Call[] = [
  { kind: "llm", key: "plan the work", response: { text: "three tasks", tokens: 120 } },
  { kind: "tool", key: ["read_file", "src/a.py"], response: "print('a')\n" },
  { kind: "llm", key: "summarise", response: { text: "done ✓", tokens: 40 }, metadata: { model: "m1" } },
];

/** A cwd whose runs A and B have gateway logs of the given calls (`null`: no log; `journal`: also a journal.jsonl). */
function runs(a: Call[] | null, b: Call[] | null, opts: { journal?: boolean; v1?: [boolean, boolean] } = {}): string {
  const cwd = dirs.make();
  const jobs: Record<string, unknown>[] = [];
  for (const [run, calls, v1] of [["A", a, opts.v1?.[0] ?? true], ["B", b, opts.v1?.[1] ?? true]] as const) {
    const dir = join(cwd, ".sdd", "runs", run);
    mkdirSync(dir, { recursive: true });
    if (opts.journal) copyFileSync(join(VECTORS, "run-journal", "chain-4.jsonl"), join(dir, "journal.jsonl"));
    if (calls) jobs.push({ job: "gateway", path: join(dir, "events.jsonl"), calls, v1 });
  }
  if (jobs.length) upstreamWrite(jobs);
  return cwd;
}

const diff = (cwd: string, extra: string[] = []) => bernsteinJson(["replay", "diff", "A", "B", ...extra], { cwd });

describe("replay diff over gateway logs", () => {
  test("identical calls (different clocks): exit 0, upstream's reason, the log named", async () => {
    const r = await diff(runs(CALLS, CALLS));
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, log: "events.jsonl", diverged: false, index: null, reason: "identical: 3 events match", reason_code: "", mutation_kind: null, a_rows: 3, b_rows: 3 });
    expect(r.json.a_log).toEndWith(join("runs", "A", "events.jsonl"));
  });

  test("Python equality: 1 == 1.0 == true, key order irrelevant", async () => {
    const a = [{ kind: "llm", key: "k", response: { n: 1, ok: 1, m: { x: 1, y: 2 } } }];
    const b = [{ kind: "llm", key: "k", response: { ok: true, n: 1.0, m: { y: 2, x: 1 } } }];
    expect((await diff(runs(a, b))).code).toBe(0);
  });

  test("a different response: response_mismatch at its index, both rows shown", async () => {
    const b = CALLS.map((c, i) => (i === 1 ? { ...c, response: "print('b')\n" } : c));
    const r = await diff(runs(CALLS, b));
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: "divergence", diverged: true, index: 1, reason: "event #1 differs: kind/key/response triple does not match", reason_code: "response_mismatch" });
    expect(r.json.detail).toBe(r.json.reason);
    expect([r.json.a_event.response, r.json.b_event.response, r.json.b_event.seq]).toEqual(["print('a')\n", "print('b')\n", 2]);
    const prose = await bernstein(["replay", "diff", "A", "B"], { cwd: runs(CALLS, b) });
    expect(prose.code).toBe(1);
    expect(prose.stdout).toContain("Divergence at event index 1: event #1 differs: kind/key/response triple does not match");
    expect(prose.stdout).toContain("compared: the gateway logs (events.jsonl) of A (3 events) and B (3 events)");
  });

  test("one log longer: length_mismatch at the shorter length; an empty log refused, or with --allow-empty compared (both empty: not diverged)", async () => {
    const more = [...CALLS, { kind: "tool", key: "x", response: 1 }, { kind: "tool", key: "y", response: 2 }];
    const r = await diff(runs(CALLS, more));
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ index: 3, reason: "run_b has 2 extra event(s) after index 2", reason_code: "length_mismatch", a_event: null, a_rows: 3, b_rows: 5 });
    expect(r.json.b_event.key).toMatch(/^v1:/);
    // An empty log is refused (input_empty, exit 3) unless --allow-empty, which compares it as 0 events.
    const refused = await diff(runs([CALLS[0]!], []));
    expect([refused.code, refused.json.error]).toEqual([3, "input_empty"]);
    const shortA = await diff(runs([CALLS[0]!], []), ["--allow-empty"]);
    expect(shortA.json).toMatchObject({ index: 0, reason: "run_a has 1 extra event(s) after index 0", reason_code: "length_mismatch" });
    const empty = await diff(runs([], []), ["--allow-empty"]);
    expect([empty.code, empty.json.reason, empty.json.reason_code]).toEqual([0, "both event logs are empty", ""]);
  });

  test("a provider_state_mutation row with no counterpart names the run and the mutation kind", async () => {
    const cwd = runs(CALLS, CALLS);
    // Insert a mutation row into B's log as the gateway's caller would record it (kind = provider_state_mutation).
    const b = [CALLS[0]!, { kind: "provider_state_mutation", key: "agent-1#0", response: { mutation_kind: "compact_boundary" } }, ...CALLS.slice(1)];
    const path = join(cwd, ".sdd", "runs", "B", "events.jsonl");
    upstreamWrite([{ job: "gateway", path, calls: b }]);
    // ReplayGateway rows have no mutation_kind of their own: attribution says unknown unless the row carries one.
    let r = await diff(cwd);
    expect(r.json).toMatchObject({ index: 1, reason_code: "provider_state_mutation", mutation_kind: "unknown", reason: "event #1: provider-side context mutation (unknown) recorded in run_b has no counterpart at this step" });
    // A journal-shaped mutation row (event + mutation_kind) on the A side.
    writeFileSync(join(cwd, ".sdd", "runs", "A", "events.jsonl"), JSON.stringify({ event: "provider_state_mutation", mutation_kind: "compact_boundary", payload_hash: "p" }) + "\n");
    r = await diff(cwd);
    expect(r.json).toMatchObject({ index: 0, reason_code: "provider_state_mutation", mutation_kind: "compact_boundary", reason: "event #0: provider-side context mutation (compact_boundary) recorded in run_a has no counterpart at this step" });
  });

  test("keys under different schemes: a mismatch (as upstream), with a note that they name the same call", async () => {
    const r = await diff(runs(CALLS, CALLS, { v1: [false, true] }));
    expect([r.code, r.json.index, r.json.reason_code]).toEqual([1, 0, "response_mismatch"]);
    expect(r.json.key_schemes).toEqual({ a: ["unversioned"], b: ["v1"] });
    expect(r.json.notes).toContain("event #0: the two keys name the same call (one is the v1: derivation of the other)");
  });

  test("lines that are not JSON objects are skipped and counted, never compared", async () => {
    const cwd = runs(CALLS, CALLS);
    const path = join(cwd, ".sdd", "runs", "A", "events.jsonl");
    const { appendFileSync } = await import("node:fs");
    appendFileSync(path, "not json\n[1, 2]\n\n");
    const r = await diff(cwd);
    expect([r.code, r.json.skipped_lines]).toEqual([0, { a: 2, b: 0 }]);
  });

  // Python's json.loads returns one NaN object for every `NaN`, and the projections are tuples, compared member by
  // member with identity first: a NaN response (or one nested in it) equals the other side's NaN, not a number
  test("NaN in a response, alone or nested, equals NaN as upstream's tuple comparison has it; the reference agrees", async () => {
    const cases: [string, string][] = [
      ["NaN", "NaN"],
      ['{"x": [1, NaN], "y": {"z": NaN}}', '{"y": {"z": NaN}, "x": [1.0, NaN]}'],
      ["[NaN, Infinity]", "[NaN, Infinity]"],
      ["NaN", "1.0"],
      ['{"x": NaN}', '{"x": 0}'],
    ];
    const cwd = dirs.make();
    const logs: [string, string][] = [];
    for (const [run, side] of [["A", 0], ["B", 1]] as const) {
      const dir = join(cwd, ".sdd", "runs", run);
      mkdirSync(dir, { recursive: true });
      const path = join(dir, "events.jsonl");
      // as ReplayGateway writes them: json.dumps, so NaN and Infinity spelled as Python spells them
      writeFileSync(path, cases.map(([a, b], i) => `{"ts": ${1727000001.5 + i}, "kind": "llm", "key": "k${i}", "response": ${side === 0 ? a : b}, "seq": ${i + 1}}\n`).join(""));
      logs.push([run, path]);
    }
    // the reference: upstream's loader and its first unequal projection
    const want = runPython(
      `import json, sys
paths = json.load(sys.stdin)
def rows(p):
    out = []
    for line in open(p, encoding="utf-8"):
        if line.strip():
            out.append(json.loads(line))
    return out
a, b = rows(paths[0]), rows(paths[1])
proj = lambda r: (r.get("kind"), r.get("key"), r.get("response"), r.get("event"), r.get("payload_hash"))
print(json.dumps(next((i for i in range(min(len(a), len(b))) if proj(a[i]) != proj(b[i])), None)))`,
      logs.map(([, p]) => p),
    );
    expect(want).toBe(3);
    // the rows shown hold NaN as Python prints it (not JSON.parse's JSON): read the verdict's fields only
    const r = await bernstein(["replay", "diff", "A", "B", "--as-json"], { cwd });
    const verdict = JSON.parse(r.stdout.replace(/\b(NaN|-?Infinity)\b/g, "null"));
    expect([r.code, verdict.index, verdict.reason_code]).toEqual([1, want, "response_mismatch"]);
    expect(r.stdout).toContain('"response": NaN');
    // without the unequal rows, nothing differs
    for (const [, path] of logs) writeFileSync(path, readFileSync(path, "utf8").split("\n").slice(0, 3).join("\n") + "\n");
    const same = await diff(cwd);
    expect([same.code, same.json.diverged, same.json.reason]).toEqual([0, false, "identical: 3 events match"]);
  });

  test("runs without gateway logs compare journal.jsonl, and say so; one log alone is not compared", async () => {
    const none = await diff(runs(null, null, { journal: true }));
    expect([none.code, none.json.log]).toEqual([0, "journal.jsonl"]);
    const one = await bernsteinJson(["replay", "diff", "A", "B"], { cwd: runs(CALLS, null, { journal: true }) });
    expect([one.code, one.json.log]).toEqual([0, "journal.jsonl"]);
    expect(one.stderr).toContain("run A has a gateway log (events.jsonl) but B has none: comparing their journal.jsonl");
    const missing = await diff(runs(CALLS, null));
    expect([missing.code, missing.json.error]).toEqual([3, "journal_missing"]);
  });
});
