import { FAILURE_FIELDS, jsonFields, type JsonFields } from "../json-fields.ts";
import { NON_DETERMINISTIC_FIELDS } from "./hash.ts";
import type { Coverage, Divergence, FastVerifyResult, Identity, JournalSeal, JournalVerifyResult, LastLine } from "./model.ts";
import type { ProviderStateVerdict } from "./provider-state.ts";
import { journalVerdictFailure } from "./verdict-failure.ts";

/**
 * The one place a run journal's verdict is decided and its JSON built.
 *
 * A verdict starts from the chain (`chainVerdict`: chain, coverage, seal)
 * and the further checks a command asked for are folded into it here, in
 * this order: the signed tree heads (`--seal NOTE`, `--since`), the lineage
 * spine, the provider-state gate. Nothing else sets `ok` or `identity`;
 * commands render the verdict and its documents (`verdictJson`,
 * `journalVerifyJson`, `replayVerifyJson`). The checks' own reports come
 * from the layers above (tlog, lineage) as values of the shapes below.
 * (The step journal's twin is steps/verdict.ts.)
 */

/** What a finished walk of the chain established (journal/chain.ts's walker, or the fast verifier's stitch). */
export interface ChainWalk {
  /** Rows seen. */
  count: number;
  /** Head of the verified prefix. */
  prefixHead: string;
  /** The first failure in row order (null: none). */
  divergence: Divergence | null;
}

export interface VerdictInput {
  path: string;
  /** False: the journal file is missing (an empty chain). */
  exists: boolean;
  walk: ChainWalk;
  /** 0-based physical lines the reader could not take as rows. */
  discarded: number[];
  /** The last physical line read (null: none read from a file). */
  lastLine: LastLine | null;
  seal?: JournalSeal | null;
}

/** The chain's verdict: one rule per check, in the order their errors are listed. */
export function chainVerdict({ path, exists, walk, discarded, lastLine, seal }: VerdictInput): JournalVerifyResult {
  const errors: string[] = [];
  const d = walk.divergence;
  const chainConsistent = chainRule(d, errors);
  const coverage = coverageRule(discarded, errors);
  const identity = sealRule(exists, walk, chainConsistent && coverage === "complete", seal ?? null, errors);
  return {
    ok: chainConsistent && coverage === "complete" && identity !== "mismatched",
    path,
    chain_consistent: chainConsistent,
    coverage,
    identity,
    count: walk.count,
    head: walk.prefixHead,
    divergent_index: d ? d.index : null,
    divergent_line: d && d.line != null ? d.line + 1 : null,
    expected_hash: d ? d.expected : null,
    actual_hash: d ? d.actual : null,
    discarded_line_indices: discarded,
    errors,
    unauthenticated_fields: [...NON_DETERMINISTIC_FIELDS],
    lastLine,
  };
}

/** Every row's event_hash recomputes at its position and links to the one before. */
function chainRule(d: Divergence | null, errors: string[]): boolean {
  if (d) errors.push(d.error);
  return d === null;
}

/** Every physical line was a row. */
function coverageRule(discarded: readonly number[], errors: string[]): Coverage {
  if (discarded.length === 0) return "complete";
  errors.push(`reader discarded unparsable or non-object physical line(s): ${discarded.join(", ")}`);
  return "partial";
}

/** Against a seal: the file exists, the chain is intact and whole, and its head and count are the sealed ones. */
function sealRule(exists: boolean, walk: ChainWalk, intact: boolean, seal: JournalSeal | null, errors: string[]): Identity {
  if (!seal) return "unverifiable";
  if (!exists) {
    errors.push("journal file is missing but an external seal exists");
    return "mismatched";
  }
  if (intact && walk.prefixHead === seal.head && walk.count === seal.event_count) return "verified";
  if (walk.count !== seal.event_count) errors.push(`journal holds ${walk.count} events but the seal commits to ${seal.event_count}`);
  if (walk.prefixHead !== seal.head) {
    errors.push(`journal head ${walk.prefixHead || "(empty)"} does not match sealed head ${seal.head || "(empty)"}`);
  }
  return "mismatched";
}

/** The chain verified whole: what the signed tree heads and the provider-state gate are checked against. */
export function chainIntact(r: JournalVerifyResult): boolean {
  return r.chain_consistent && r.coverage === "complete";
}

// ------------------------------------------------------------------ further checks

/** The signed tree heads' report (tlog/flows.ts `NoteSealVerdict`). */
export interface SignedHeads {
  identity: Identity;
  signature: { signature: string; signed_by: string[] } | null;
  root: string;
  consistency: "extends" | "forked" | "truncated" | null;
  since: string | null;
  since_size: number | null;
  errors: string[];
}

/** The lineage spine's judgement of the journal (lineage/identity.ts `SpineReport`). */
export interface SpineJudgement {
  identity: Identity;
  errors: string[];
}

/**
 * `--seal NOTE` / `--since OLD`, checked only against an intact chain
 * (`heads` null otherwise): a signed seal that could not be checked names
 * a journal this is not; a checked one's identity replaces the chain's,
 * and its findings fail the verdict.
 */
export function foldSignedHeads(r: JournalVerifyResult, sealNote: boolean, heads: SignedHeads | null): void {
  if (heads === null) {
    if (sealNote) r.identity = "mismatched";
    return;
  }
  if (heads.identity !== "unverifiable") r.identity = heads.identity;
  r.errors.push(...heads.errors);
  r.ok = r.ok && heads.errors.length === 0;
}

/** The lineage spine: a mismatch fails the verdict; a verified spine lifts an unverifiable identity. */
export function foldSpine(r: JournalVerifyResult, spine: SpineJudgement | null): void {
  if (spine === null) return;
  if (spine.identity === "mismatched") {
    r.identity = "mismatched";
    r.ok = false;
    r.errors.push(...spine.errors);
  } else if (spine.identity === "verified" && r.identity === "unverifiable") {
    r.identity = "verified";
  }
}

/** Upstream's order: a chain failure is reported as a divergence; only a positive verdict meets the provider-state gate. */
export function providerStateApplies(r: JournalVerifyResult): boolean {
  return r.ok;
}

/** A failed provider-state gate fails the verdict (its identity stays the chain's). */
export function foldProviderState(r: JournalVerifyResult, gate: ProviderStateVerdict | null): void {
  if (gate === null || gate.ok) return;
  r.ok = false;
  r.errors.push(...gate.errors);
}

/** The further checks folded into a verdict (null: not asked for, or not applicable). */
export interface VerdictChecks<H extends SignedHeads = SignedHeads, S extends SpineJudgement = SpineJudgement> {
  signedHeads: H | null;
  spine: S | null;
  gate: ProviderStateVerdict | null;
}

/** A negative verdict gets a divergence report, unless the provider-state gate (no divergence of the chain) failed it. */
export function wantsDivergenceReport(r: JournalVerifyResult, checks: VerdictChecks): boolean {
  return !r.ok && !(checks.gate !== null && !checks.gate.ok);
}

// ------------------------------------------------------------------ documents

/** The members `verdictJson` writes, in its order (rendered into docs/cli/ by scripts/gen-cli-docs.ts). */
export const VERDICT_FIELDS: JsonFields = jsonFields([
  ["ok", "boolean", "The verdict: chain intact, coverage complete, identity not mismatched"],
  ...FAILURE_FIELDS.map((f) => [`${f.name}?`, f.type, f.meaning] as const),
  ["run_id", "string | null", "The run (Python's key), null for a journal given by path"],
  ["path", "string", "The journal file verified"],
  ["chain_consistent", "boolean", "Every row's prev_hash and event_hash check out"],
  ["coverage", "\"complete\" | \"partial\"", "Partial: rows were discarded or the chain stopped early"],
  ["identity", "\"verified\" | \"mismatched\" | \"unverifiable\"", "The head against the seal (unverifiable: no seal)"],
  ["count", "number", "Usable rows read"],
  ["head", "string", "Head of the verified prefix (\"\" when no row checked out)"],
  ["divergent_index", "number | null", "0-based row where the chain first breaks"],
  ["divergent_line", "number | null", "1-based physical line of that row"],
  ["step_index", "number | null", "Python's name for divergent_index"],
  ["expected_hash", "string | null", "The hash the divergent row should carry"],
  ["actual_hash", "string | null", "The hash it carries"],
  ["discarded_line_indices", "number[]", "Lines that are not journal rows (torn or not JSON)"],
  ["errors", "string[]", "Every finding, one line each"],
  ["unauthenticated_fields", "string[]", "Row fields no hash covers"],
  ["mode", "\"full\" | \"links-only\"", "Links-only: prev_hash links checked, payloads not re-hashed"],
  ["payloads_checked", "boolean", "Payload hashes were recomputed"],
  ["snapshot_bytes", "number", "Bytes of the file verified"],
  ["grew_by", "number", "Bytes appended while verifying"],
  ["bytes_read", "number", "Bytes read to reach the verdict"],
]);

/** The members `journalVerifyJson` and `replayVerifyJson` add to the verdict (and cli/torn-hint.ts's, on a torn tail). */
const SEAL_SPINE_FIELDS: JsonFields = jsonFields([
  ["seal", "string | null", "The seal file the identity was checked against"],
  ["spine", "object | null", "The run's lineage spine check, when it has one"],
  ["torn_tail?", "true", "The last line was cut mid-write"],
  ["fix?", "string | null", "A torn tail: the command that repairs it"],
]);

/** `journal verify --as-json`. */
export const JOURNAL_VERIFY_FIELDS: JsonFields = [
  ...VERDICT_FIELDS,
  ...SEAL_SPINE_FIELDS,
  ...jsonFields([
    ["signature?", "string | null", "A signed seal note (--seal NOTE) or --since: its signature"],
    ["signed_by?", "string[]", "The same: the keys that signed it"],
    ["root?", "string", "The same: the Merkle root of the journal"],
    ["consistency?", "\"extends\" | \"forked\" | \"truncated\" | null", "--since: how the journal relates to the older head"],
    ["since?", "string | null", "--since: the older root"],
    ["since_size?", "number | null", "--since: the older tree's size"],
  ]),
];

/** `replay <RUN_ID> --verify --as-json`. */
export const REPLAY_VERIFY_FIELDS: JsonFields = [
  ...VERDICT_FIELDS,
  ...SEAL_SPINE_FIELDS,
  ...jsonFields([
    ["provider_state?", "object", "The provider-state gate: {mutations, flagged_steps}, when the run records provider state"],
    ["verified?", "false", "A failed provider-state gate (upstream's key)"],
    ["reason_code?", "string", "A failed provider-state gate: provider_state_mutation"],
    ["flagged_steps?", "array", "A failed provider-state gate: the steps that mutated state"],
  ]),
];

/**
 * The `--as-json` verdict fields shared by `journal verify`,
 * `replay <RUN_ID> --verify` and the timeline: the verdict in this order
 * (with `error` and `detail` after `ok` when it is negative), then how the
 * verify was done.
 */
export function verdictJson(r: FastVerifyResult, runId: string | null): Record<string, unknown> {
  return {
    ok: r.ok,
    ...journalVerdictFailure(r),
    // Python's report keys (run_id, step_index) beside ours, so scripts written for upstream read the same names.
    run_id: runId,
    path: r.path,
    chain_consistent: r.chain_consistent,
    coverage: r.coverage,
    identity: r.identity,
    count: r.count,
    head: r.head,
    divergent_index: r.divergent_index,
    divergent_line: r.divergent_line,
    step_index: r.divergent_index,
    expected_hash: r.expected_hash,
    actual_hash: r.actual_hash,
    discarded_line_indices: r.discarded_line_indices,
    errors: r.errors,
    unauthenticated_fields: r.unauthenticated_fields,
    mode: r.mode,
    payloads_checked: r.payloads_checked,
    snapshot_bytes: r.snapshot_bytes,
    grew_by: r.grew_by,
    bytes_read: r.bytes_read,
  };
}

export interface VerdictDocInput {
  result: FastVerifyResult;
  checks: VerdictChecks;
  runId: string | null;
  /** The seal the identity was checked against (its path), if any. */
  seal: string | null;
  /** The `spine` member (lineage/report.ts `spineJson`). */
  spine: Record<string, unknown> | null;
}

/** `journal verify --as-json`: the verdict, its seal and spine, then the signed tree heads' fields. */
export function journalVerifyJson({ result, checks, runId, seal, spine }: VerdictDocInput): Record<string, unknown> {
  const doc = { ...verdictJson(result, runId), seal, spine };
  const n = checks.signedHeads;
  if (!n) return doc;
  const out: Record<string, unknown> = {
    ...doc,
    signature: n.signature?.signature ?? null,
    signed_by: n.signature?.signed_by ?? [],
    root: n.root,
    consistency: n.consistency,
    since: n.since,
    since_size: n.since_size,
  };
  // A fork or truncation since OLD names the error (unless the signed seal already failed the identity).
  if (n.consistency && n.consistency !== "extends" && n.identity !== "mismatched") {
    out.error = n.consistency === "forked" ? "consistency_forked" : "consistency_truncated";
    out.detail = n.errors[n.errors.length - 1];
  }
  return out;
}

/**
 * `replay <RUN_ID> --verify --as-json`: `run_id` first, then the
 * `journal verify` fields; a provider-state gate adds its member, and a
 * failed one upstream's keys (`verified`, `reason_code`, `flagged_steps`)
 * with its `error` in place of the chain verdict's.
 */
export function replayVerifyJson({ result, checks, runId, seal, spine }: VerdictDocInput): Record<string, unknown> {
  const doc: Record<string, unknown> = { run_id: runId, ...verdictJson(result, runId), seal, spine };
  const gate = checks.gate;
  if (!gate) return doc;
  if (gate.ok) return { ...doc, provider_state: { mutations: gate.mutations, flagged_steps: [] } };
  // The chain verdict's own error/detail (it reads a failed gate as a seal mismatch) give way to the gate's.
  const { run_id, ok: _ok, error: _error, detail: _detail, ...rest } = doc;
  return {
    run_id,
    ok: false,
    error: "provider_state_mutation",
    detail: gate.errors[0],
    ...rest,
    verified: false,
    reason_code: "provider_state_mutation",
    flagged_steps: gate.flagged_steps,
  };
}
