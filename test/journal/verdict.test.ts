/** The run journal's verdict, rule by rule (src/journal/verdict.ts): the chain, coverage, seal, the folded checks and the documents. */
import { describe, expect, test } from "bun:test";
import type { Divergence, FastVerifyResult, JournalSeal, LastLine } from "../../src/journal/model.ts";
import { journalVerdictFailure } from "../../src/journal/verdict-failure.ts";
import type { ProviderStateVerdict } from "../../src/journal/provider-state.ts";
import {
  chainIntact,
  chainVerdict,
  foldProviderState,
  foldSignedHeads,
  foldSpine,
  journalVerifyJson,
  providerStateApplies,
  replayVerifyJson,
  verdictJson,
  wantsDivergenceReport,
  type SignedHeads,
  type VerdictChecks,
} from "../../src/journal/verdict.ts";

const HEAD = "a".repeat(64);
const OTHER = "b".repeat(64);
const NO_CHECKS: VerdictChecks = { signedHeads: null, spine: null, gate: null };

interface Input {
  exists?: boolean;
  count?: number;
  head?: string;
  divergence?: Divergence | null;
  discarded?: number[];
  lastLine?: LastLine | null;
  seal?: JournalSeal | null;
  path?: string;
}

function verdict({ exists = true, count = 3, head = HEAD, divergence = null, discarded = [], lastLine = null, seal = null, path = "j.jsonl" }: Input = {}) {
  return chainVerdict({ path, exists, walk: { count, prefixHead: head, divergence }, discarded, lastLine, seal });
}

function fast(i: Input = {}): FastVerifyResult {
  return {
    ...verdict(i),
    mode: "full",
    payloads_checked: true,
    snapshot_bytes: 100,
    grew_by: 0,
    threads: 1,
    bytes_read: 100,
    stream: false,
    rows_by_path: { kernel: 3, exact: 0, respaced: 0, declined_at: [] },
  };
}

const DIVERGENCE: Divergence = { index: 1, line: 4, expected: OTHER, actual: HEAD, error: "step 1: event_hash mismatch" };

function heads(over: Partial<SignedHeads> = {}): SignedHeads {
  return { identity: "verified", signature: null, root: "cm9vdA==", consistency: null, since: null, since_size: null, errors: [], ...over };
}

function gate(errors: string[]): ProviderStateVerdict {
  return { ok: errors.length === 0, mutations: 2, flagged_steps: errors.length === 0 ? [] : [1], errors };
}

describe("the chain rule", () => {
  test("an intact walk: consistent, no divergence fields, ok", () => {
    const v = verdict();
    expect(v).toMatchObject({ ok: true, chain_consistent: true, coverage: "complete", identity: "unverifiable", count: 3, head: HEAD });
    expect(v).toMatchObject({ divergent_index: null, divergent_line: null, expected_hash: null, actual_hash: null, errors: [] });
    expect(v.unauthenticated_fields.length).toBeGreaterThan(0);
  });
  test("a divergence: not consistent, its error first, its 0-based line reported 1-based", () => {
    const v = verdict({ divergence: DIVERGENCE });
    expect(v).toMatchObject({ ok: false, chain_consistent: false, divergent_index: 1, divergent_line: 5, expected_hash: OTHER, actual_hash: HEAD });
    expect(v.errors).toEqual(["step 1: event_hash mismatch"]);
  });
  test("a divergence of rows not read from a file has no line", () => {
    expect(verdict({ divergence: { ...DIVERGENCE, line: null } }).divergent_line).toBeNull();
    expect(verdict({ divergence: { ...DIVERGENCE, line: undefined } }).divergent_line).toBeNull();
  });
});

describe("the coverage rule", () => {
  test("discarded lines make coverage partial and the verdict negative", () => {
    const v = verdict({ discarded: [2, 7] });
    expect(v).toMatchObject({ ok: false, chain_consistent: true, coverage: "partial", discarded_line_indices: [2, 7] });
    expect(v.errors).toEqual(["reader discarded unparsable or non-object physical line(s): 2, 7"]);
  });
  test("a torn tail is named from the lines the verify read (one unterminated final line), with no read of the input", () => {
    const torn = { discarded: [7], lastLine: { index: 7, start: 900, terminated: false }, path: "/no/such/journal.jsonl" };
    expect(journalVerdictFailure(verdict(torn))?.error).toBe("torn_tail");
    expect(journalVerdictFailure(verdict(torn))?.detail).toBe("the journal ends in a torn write (physical line(s) 7); 'replay repair' removes it");
    // what repair refuses is not torn: a terminated line, a line in the middle, two lines, standard input, no line facts
    const partial = [
      { ...torn, lastLine: { index: 7, start: 900, terminated: true } },
      { ...torn, lastLine: { index: 8, start: 950, terminated: false } },
      { ...torn, discarded: [6, 7] },
      { ...torn, path: "-" },
      { ...torn, lastLine: null },
    ];
    for (const p of partial) expect(journalVerdictFailure(verdict(p))?.error).toBe("coverage_partial");
  });
  test("its error follows the chain's", () => {
    expect(verdict({ divergence: DIVERGENCE, discarded: [0] }).errors).toEqual([
      "step 1: event_hash mismatch",
      "reader discarded unparsable or non-object physical line(s): 0",
    ]);
  });
});

describe("the seal rule", () => {
  test("no seal: unverifiable, and that alone fails nothing", () => {
    expect(verdict()).toMatchObject({ ok: true, identity: "unverifiable" });
  });
  test("head and count as sealed, chain intact and whole: verified", () => {
    expect(verdict({ seal: { head: HEAD, event_count: 3 } })).toMatchObject({ ok: true, identity: "verified", errors: [] });
  });
  test("a missing file against a seal: mismatched", () => {
    const v = verdict({ exists: false, count: 0, head: "", seal: { head: HEAD, event_count: 3 } });
    expect(v).toMatchObject({ ok: false, identity: "mismatched" });
    expect(v.errors).toEqual(["journal file is missing but an external seal exists"]);
  });
  test("another count, then another head, each named", () => {
    const v = verdict({ count: 2, head: "", seal: { head: OTHER, event_count: 3 } });
    expect(v).toMatchObject({ ok: false, identity: "mismatched" });
    expect(v.errors).toEqual([
      "journal holds 2 events but the seal commits to 3",
      `journal head (empty) does not match sealed head ${OTHER}`,
    ]);
    expect(verdict({ seal: { head: "", event_count: 3 } }).errors).toEqual([`journal head ${HEAD} does not match sealed head (empty)`]);
  });
  test("matching head and count over a partial journal: mismatched, with only the coverage error", () => {
    const v = verdict({ discarded: [5], seal: { head: HEAD, event_count: 3 } });
    expect(v).toMatchObject({ ok: false, identity: "mismatched", coverage: "partial" });
    expect(v.errors).toEqual(["reader discarded unparsable or non-object physical line(s): 5"]);
  });
});

describe("chainIntact", () => {
  test("consistent and complete, whatever the identity", () => {
    expect(chainIntact(verdict({ seal: { head: OTHER, event_count: 3 } }))).toBe(true);
    expect(chainIntact(verdict({ discarded: [1] }))).toBe(false);
    expect(chainIntact(verdict({ divergence: DIVERGENCE }))).toBe(false);
  });
});

describe("the signed tree heads", () => {
  test("not checkable (broken chain) with a signed seal given: mismatched", () => {
    const v = verdict({ divergence: DIVERGENCE });
    foldSignedHeads(v, true, null);
    expect(v).toMatchObject({ ok: false, identity: "mismatched" });
  });
  test("not checkable with only --since: the identity stays", () => {
    const v = verdict({ discarded: [1] });
    foldSignedHeads(v, false, null);
    expect(v.identity).toBe("unverifiable");
  });
  test("a verified signed seal sets the identity", () => {
    const v = verdict();
    foldSignedHeads(v, true, heads());
    expect(v).toMatchObject({ ok: true, identity: "verified", errors: [] });
  });
  test("an unverifiable report keeps the chain's identity", () => {
    const v = verdict({ seal: { head: HEAD, event_count: 3 } });
    foldSignedHeads(v, false, heads({ identity: "unverifiable" }));
    expect(v.identity).toBe("verified");
  });
  test("findings join the errors and fail the verdict", () => {
    const v = verdict();
    foldSignedHeads(v, false, heads({ identity: "unverifiable", consistency: "forked", errors: ["forked since old"] }));
    expect(v).toMatchObject({ ok: false, identity: "unverifiable", errors: ["forked since old"] });
  });
});

describe("the lineage spine", () => {
  test("no spine changes nothing", () => {
    const v = verdict();
    foldSpine(v, null);
    expect(v).toEqual(verdict());
  });
  test("a mismatched spine fails the verdict with its findings", () => {
    const v = verdict({ seal: { head: HEAD, event_count: 3 } });
    foldSpine(v, { identity: "mismatched", errors: ["spine names another head"] });
    expect(v).toMatchObject({ ok: false, identity: "mismatched", errors: ["spine names another head"] });
  });
  test("a verified spine lifts an unverifiable identity, never a mismatched one", () => {
    const lifted = verdict();
    foldSpine(lifted, { identity: "verified", errors: [] });
    expect(lifted).toMatchObject({ ok: true, identity: "verified" });
    const kept = verdict({ seal: { head: OTHER, event_count: 3 } });
    foldSpine(kept, { identity: "verified", errors: [] });
    expect(kept).toMatchObject({ ok: false, identity: "mismatched" });
  });
  test("an unverifiable spine changes nothing", () => {
    const v = verdict();
    foldSpine(v, { identity: "unverifiable", errors: [] });
    expect(v).toEqual(verdict());
  });
});

describe("the provider-state gate", () => {
  test("met only by a positive verdict", () => {
    expect(providerStateApplies(verdict())).toBe(true);
    expect(providerStateApplies(verdict({ divergence: DIVERGENCE }))).toBe(false);
    expect(providerStateApplies(verdict({ seal: { head: OTHER, event_count: 3 } }))).toBe(false);
  });
  test("a failed gate fails the verdict, the identity untouched", () => {
    const v = verdict();
    foldProviderState(v, gate(["step 1: mutation not recorded"]));
    expect(v).toMatchObject({ ok: false, identity: "unverifiable", chain_consistent: true, errors: ["step 1: mutation not recorded"] });
  });
  test("a passed gate, or none, changes nothing", () => {
    const v = verdict();
    foldProviderState(v, gate([]));
    foldProviderState(v, null);
    expect(v).toEqual(verdict());
  });
});

describe("the divergence report", () => {
  test("for a negative verdict, unless the gate failed it", () => {
    expect(wantsDivergenceReport(verdict(), NO_CHECKS)).toBe(false);
    expect(wantsDivergenceReport(verdict({ divergence: DIVERGENCE }), NO_CHECKS)).toBe(true);
    const gated = verdict();
    const g = gate(["x"]);
    foldProviderState(gated, g);
    expect(wantsDivergenceReport(gated, { ...NO_CHECKS, gate: g })).toBe(false);
  });
});

describe("the documents", () => {
  test("verdictJson: the fields in order, error and detail after ok only when negative", () => {
    expect(Object.keys(verdictJson(fast(), "r1"))).toEqual([
      "ok", "run_id", "path", "chain_consistent", "coverage", "identity", "count", "head",
      "divergent_index", "divergent_line", "step_index", "expected_hash", "actual_hash",
      "discarded_line_indices", "errors", "unauthenticated_fields",
      "mode", "payloads_checked", "snapshot_bytes", "grew_by", "bytes_read",
    ]);
    const bad = verdictJson(fast({ divergence: DIVERGENCE }), null);
    expect(Object.keys(bad).slice(0, 4)).toEqual(["ok", "error", "detail", "run_id"]);
    expect(bad).toMatchObject({ ok: false, error: "chain_broken", detail: "step 1: event_hash mismatch", run_id: null, step_index: 1, divergent_line: 5 });
  });
  test("journalVerifyJson: seal and spine, then the signed heads' fields", () => {
    const r = fast();
    expect(Object.keys(journalVerifyJson({ result: r, checks: NO_CHECKS, runId: "r1", seal: null, spine: null })).slice(-3)).toEqual(["bytes_read", "seal", "spine"]);
    const n = heads({ signature: { signature: "valid", signed_by: ["k1"] }, consistency: "extends", since: "old.note", since_size: 2 });
    const doc = journalVerifyJson({ result: r, checks: { ...NO_CHECKS, signedHeads: n }, runId: "r1", seal: "s.note", spine: null });
    expect(doc).toMatchObject({ seal: "s.note", signature: "valid", signed_by: ["k1"], root: "cm9vdA==", consistency: "extends", since: "old.note", since_size: 2 });
    expect(doc.error).toBeUndefined();
  });
  test("journalVerifyJson: a fork or truncation names the error, unless the signed seal mismatched", () => {
    const r = fast();
    const forked = heads({ identity: "unverifiable", consistency: "forked", errors: ["a", "forked at 2"] });
    foldSignedHeads(r, false, forked);
    const doc = journalVerifyJson({ result: r, checks: { ...NO_CHECKS, signedHeads: forked }, runId: "r1", seal: null, spine: null });
    expect(doc).toMatchObject({ ok: false, error: "consistency_forked", detail: "forked at 2", signature: null, signed_by: [] });
    const truncated = heads({ identity: "unverifiable", consistency: "truncated", errors: ["cut"] });
    expect(journalVerifyJson({ result: r, checks: { ...NO_CHECKS, signedHeads: truncated }, runId: "r1", seal: null, spine: null }).error).toBe("consistency_truncated");
    const mismatched = heads({ identity: "mismatched", consistency: "forked", errors: ["bad seal", "forked"] });
    const m = fast();
    foldSignedHeads(m, true, mismatched);
    expect(journalVerifyJson({ result: m, checks: { ...NO_CHECKS, signedHeads: mismatched }, runId: "r1", seal: null, spine: null }).error).toBe("seal_mismatch");
  });
  test("replayVerifyJson: run_id first; a passed gate adds its member", () => {
    const doc = replayVerifyJson({ result: fast(), checks: { ...NO_CHECKS, gate: gate([]) }, runId: "r1", seal: null, spine: null });
    expect(Object.keys(doc)[0]).toBe("run_id");
    expect(Object.keys(doc)[1]).toBe("ok");
    expect(doc.provider_state).toEqual({ mutations: 2, flagged_steps: [] });
    expect(replayVerifyJson({ result: fast(), checks: NO_CHECKS, runId: "r1", seal: null, spine: null }).provider_state).toBeUndefined();
  });
  test("replayVerifyJson: a failed gate's error replaces the chain verdict's, with upstream's keys last", () => {
    const r = fast();
    const g = gate(["step 1: mutation not recorded", "second"]);
    foldProviderState(r, g);
    const doc = replayVerifyJson({ result: r, checks: { ...NO_CHECKS, gate: g }, runId: "r1", seal: null, spine: null });
    const keys = Object.keys(doc);
    expect(keys.slice(0, 5)).toEqual(["run_id", "ok", "error", "detail", "path"]);
    expect(keys.slice(-3)).toEqual(["verified", "reason_code", "flagged_steps"]);
    expect(doc).toMatchObject({ ok: false, error: "provider_state_mutation", detail: "step 1: mutation not recorded", verified: false, reason_code: "provider_state_mutation", flagged_steps: [1] });
  });
});
