/** The step journal's verdict, rule by rule (src/steps/verdict.ts). */
import { describe, expect, test } from "bun:test";
import { GENESIS_HASH } from "../../src/steps/hash.ts";
import { agentVerdict, agentVerdictJson, emptyAgentJson, missingStepJournalVerdict, stepVerdict } from "../../src/steps/verdict.ts";

const HEAD = "c".repeat(64);
const walk = (errors: string[] = []) => ({ head_hash: HEAD, steps: 2, errors: [...errors] });

describe("a missing step journal", () => {
  test("ok with no head expected, or genesis", () => {
    for (const h of [undefined, null, GENESIS_HASH]) {
      expect(missingStepJournalVerdict("x.jsonl", h)).toEqual({ ok: true, head_hash: GENESIS_HASH, steps: 0, errors: [] });
    }
  });
  test("negative when another head was expected", () => {
    const v = missingStepJournalVerdict("x.jsonl", HEAD);
    expect(v.ok).toBe(false);
    expect(v.errors).toEqual([`no journal file at x.jsonl; expected head '${HEAD}'`]);
  });
});

describe("the head rule", () => {
  test("no expected head: the walk's findings alone", () => {
    expect(stepVerdict(walk(), undefined)).toEqual({ ok: true, ...walk() });
    expect(stepVerdict(walk(["line 2: bad"]), null)).toMatchObject({ ok: false, errors: ["line 2: bad"] });
  });
  test("the expected head reached: ok", () => {
    expect(stepVerdict(walk(), HEAD).ok).toBe(true);
  });
  test("another head: negative, after the walk's findings", () => {
    const v = stepVerdict(walk(["line 2: bad"]), "d".repeat(64));
    expect(v.ok).toBe(false);
    expect(v.errors).toEqual(["line 2: bad", `head mismatch: expected ${"d".repeat(16)}..., got ${"c".repeat(16)}...`]);
  });
});

describe("an agent's journal", () => {
  test("its last entry is its head: ok", () => {
    expect(agentVerdict(walk(), "a1", "b", 2, HEAD)).toEqual({ ok: true, agent_id: "a1", bucket: "b", entries: 2, ...walk() });
  });
  test("a last entry the chain does not end at: negative", () => {
    const v = agentVerdict(walk(), "a1", "b", 2, "e".repeat(64));
    expect(v.ok).toBe(false);
    expect(v.errors).toEqual([`head mismatch: expected ${"e".repeat(16)}..., got ${"c".repeat(16)}...`]);
  });
  test("no entries: the walk alone", () => {
    expect(agentVerdict(walk(), "a1", "b", 0, null).ok).toBe(true);
  });
  test("its documents", () => {
    expect(agentVerdictJson(agentVerdict(walk(), "a1", "b", 2, HEAD))).toEqual({ ok: true, agent_id: "a1", head_hash: HEAD, steps: 2 });
    expect(emptyAgentJson("a1")).toEqual({ ok: true, agent_id: "a1", head_hash: GENESIS_HASH, steps: 0, entries: [] });
  });
});
