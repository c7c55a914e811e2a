import type { JournalSeal, JournalVerifyResult } from "../journal/verify.ts";
import type { ProviderStateVerdict } from "../journal/provider-state.ts";
import { clip, untrusted, type CiOutcome, type CiProblem, type OutcomeBase } from "./outcome.ts";

export interface JournalOutcomeInput {
  base: OutcomeBase;
  result: JournalVerifyResult & { payloads_checked?: boolean };
  seal: JournalSeal | null;
  /** The provider-state gate, when `replay <RUN_ID> --verify` met it (a failed one names the verdict). */
  gate?: ProviderStateVerdict | null;
}

/** A run journal's verdict as a CI outcome (a divergent row's file line is the verify's `divergent_line`). */
export function journalOutcome(input: JournalOutcomeInput): CiOutcome {
  const chain = chainOutcome(input);
  const gate = input.gate;
  if (!gate || gate.ok) return chain;
  const problems = gate.errors.map((message) => ({ title: "Provider-state mutation", message, line: null }));
  return { ...chain, verdict: `PROVIDER STATE: ${gate.errors[0]}`, problems: [...chain.problems, ...problems] };
}

function chainOutcome({ base, result: r, seal }: JournalOutcomeInput): CiOutcome {
  const problems: CiProblem[] = [];
  let verdict: string;
  const what = r.payloads_checked === false ? "links intact (payloads NOT checked)" : "chain intact";
  if (!r.chain_consistent) {
    const step = r.divergent_index ?? 0;
    const line = r.divergent_line;
    const at = line === null ? "" : ` (line ${line})`;
    const expected = r.expected_hash ?? "(not computable)";
    const actual = untrusted(r.actual_hash || "(empty)", 100);
    verdict = `DIVERGENCE at step ${step}${at}: expected ${expected} actual ${actual}`;
    const why = untrusted(r.errors[0] ?? `step ${step}: divergence`, 500);
    problems.push({ title: `Chain divergence at step ${step}`, message: `${why}: expected ${expected}, actual ${actual}`, line });
  } else if (r.coverage !== "complete") {
    verdict = `INCOMPLETE: ${r.discarded_line_indices.length} physical line(s) could not be read (${clip(lineList(r.discarded_line_indices), 200)}); ${what} over the ${r.count} readable events`;
  } else if (r.identity === "mismatched") {
    verdict = `SEAL MISMATCH: ${sealMismatch(r, seal)}`;
  } else {
    verdict = `${what}: ${r.count} events, head ${r.head || "(empty)"}; coverage=${r.coverage}; identity=${r.identity}`;
  }
  for (const i of r.discarded_line_indices) {
    problems.push({
      title: "Unreadable journal line",
      message: `line ${i + 1} is not a journal row (undecodable, unparsable, overlong or not a JSON object); the chain skips it and coverage is partial`,
      line: i + 1,
    });
  }
  if (r.identity === "mismatched") problems.push({ title: "Seal mismatch", message: sealMismatch(r, seal), line: null });
  const status = r.ok ? "verified" : "failed";
  // A broken chain has no head to publish (the verified prefix's is in the verdict document).
  return { ...base, status, exitCode: r.ok ? 0 : 1, verdict, head: r.chain_consistent ? r.head : null, count: r.count, problems, error: null };
}

function lineList(indices: readonly number[]): string {
  return `line${indices.length === 1 ? "" : "s"} ${indices.map((i) => i + 1).join(", ")}`;
}

function sealMismatch(r: JournalVerifyResult, seal: JournalSeal | null): string {
  const sealed = seal ? `the seal commits to ${seal.event_count} events with head ${untrusted(seal.head || "(empty)", 100)}` : "the seal does not match";
  const held = r.chain_consistent
    ? `${r.count} events with head ${r.head || "(empty)"}`
    : `${r.count} events (chain broken at step ${r.divergent_index}; verified prefix head ${r.head || "(empty)"})`;
  return `identity=mismatched: the journal holds ${held} but ${sealed}`;
}
