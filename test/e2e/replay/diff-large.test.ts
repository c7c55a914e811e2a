/**
 * `replay diff` of two ~20 MB journals through the compiled binary: the
 * fast path's verdicts on identical runs (different run ids, ignored by
 * default) and on a run changed deep in one row, in JSON and in prose.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateJournal } from "../../../bench/journal-gen.ts";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";

describe("replay diff of two ~20 MB runs (compiled binary)", () => {
  let root: string;
  let sdd: string;
  let rows = 0;
  let k = -1;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "bern-diff-large-"));
    sdd = join(root, ".sdd");
    const a = generateJournal(sdd, "a", 20e6, 8);
    const b = generateJournal(sdd, "b", 20e6, 8);
    expect(b.rows).toBe(a.rows);
    rows = a.rows;
    // c: b with one nested value changed in a row past the middle
    const lines = readFileSync(b.path, "utf8").split("\n");
    k = lines.findIndex((l, i) => i > rows / 2 && l.includes('"cache": {"read": '));
    expect(k).toBeGreaterThan(0);
    lines[k] = lines[k]!.replace(/"cache": \{"read": (\d+)/, (_, n) => `"cache": {"read": ${Number(n) + 1}`);
    mkdirSync(join(sdd, "runs", "c"));
    writeFileSync(join(sdd, "runs", "c", "journal.jsonl"), lines.join("\n"));
  }, 120_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("identical runs: no divergence over every row, run_id ignored, agent ids aligned", async () => {
    const r = await bernsteinJson(["replay", "diff", "a", "b", "--sdd-dir", sdd, "--as-json"]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, diverged: false, index: null, reason: `identical: ${rows} events match`, reason_code: "identical" });
    expect(r.json.rules_applied).toEqual(["agent_id", "git_branch", "git_sha", "run_id"]);
    const prose = await bernstein(["replay", "diff", "a", "b", "--sdd-dir", sdd]);
    expect(prose.code).toBe(0);
    expect(prose.stdout).toBe(
      `No divergence: identical: ${rows} events match\n` +
        "ignored git_branch, git_sha, run_id; agent_id compared by order of first appearance (--no-default-ignores compares every field)\n" +
        "compared: journal.jsonl of both runs\n",
    );
  }, 60_000);

  test("one row changed deep inside: the divergence is that row, that field, both rows shown", async () => {
    const r = await bernsteinJson(["replay", "diff", "a", "c", "--sdd-dir", sdd, "--as-json"]);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: "divergence", diverged: true, index: k, reason_code: "payload_mismatch", fields_changed: ["tokens"] });
    expect(r.json.b_event.tokens.cache.read).toBe(r.json.a_event.tokens.cache.read + 1);
    expect(r.json.a_event.index).toBe(k);
    const prose = await bernstein(["replay", "diff", "a", "c", "--sdd-dir", sdd]);
    expect(prose.code).toBe(1);
    expect(prose.stdout).toContain(`Divergence at event index ${k}: event #${k} differs: "tool_call" payload does not match (tokens)`);
    expect(prose.stdout).toMatch(/\* tokens: \{"input": \d+/);
    // Ignoring the nested path makes the runs equal again.
    const past = await bernsteinJson(["replay", "diff", "a", "c", "--sdd-dir", sdd, "--ignore", "tokens.cache.read", "--as-json"]);
    expect(past.code).toBe(0);
    expect(past.json.rules_applied).toContain("tokens.cache.read");
  }, 60_000);
});
