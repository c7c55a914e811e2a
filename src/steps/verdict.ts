import { jsonFields, type JsonFields } from "../json-fields.ts";
import { pyPrefix, pyRepr } from "../pyjson/python.ts";
import { GENESIS_HASH } from "./hash.ts";
import type { WalkResult } from "./walk.ts";

/**
 * The one place a step journal's verdict is decided and its JSON built
 * (the run journal's twin is journal/verdict.ts): a verdict is the walk's
 * findings (walk.ts) plus the head rule, and it is ok when nothing was
 * found. Commands render it and never set `ok`.
 */

export interface StepJournalVerdict {
  ok: boolean;
  head_hash: string;
  steps: number;
  errors: string[];
}

export interface AgentJournalVerdict extends StepJournalVerdict {
  agent_id: string;
  /** The agent's step journal (it may not exist: no steps yet). */
  bucket: string;
  /** Entries the tolerant reader sees (rows with a step_hash). */
  entries: number;
}

/** No journal file: an empty chain, ok unless a head other than genesis was expected. */
export function missingStepJournalVerdict(path: string, expectedHead: string | null | undefined): StepJournalVerdict {
  const ok = expectedHead === undefined || expectedHead === null || expectedHead === GENESIS_HASH;
  return { ok, head_hash: GENESIS_HASH, steps: 0, errors: ok ? [] : [`no journal file at ${path}; expected head ${pyRepr(expectedHead)}`] };
}

/** A walked step journal against the head it should end at (none: the chain alone). */
export function stepVerdict(walk: WalkResult, expectedHead: string | null | undefined): StepJournalVerdict {
  if (expectedHead !== undefined && expectedHead !== null && expectedHead !== walk.head_hash) {
    walk.errors.push(`head mismatch: expected ${pyPrefix(expectedHead, 16)}..., got ${pyPrefix(walk.head_hash, 16)}...`);
  }
  return { ok: walk.errors.length === 0, ...walk };
}

/** An agent's step journal against its own last entry (`lastHash`: that entry's step_hash; null: no entry). */
export function agentVerdict(walk: WalkResult, agentId: string, bucket: string, entries: number, lastHash: string | null): AgentJournalVerdict {
  if (entries > 0 && lastHash !== walk.head_hash) {
    walk.errors.push(`head mismatch: expected ${lastHash!.slice(0, 16)}..., got ${walk.head_hash.slice(0, 16)}...`);
  }
  return { ok: walk.errors.length === 0, agent_id: agentId, bucket, entries, ...walk };
}

/** The verdict members that open `replay <AGENT_ID> --as-json` (its `entries` follow). */
export function agentVerdictJson(v: AgentJournalVerdict): Record<string, unknown> {
  return { ok: v.ok, agent_id: v.agent_id, head_hash: v.head_hash, steps: v.steps };
}

/** `replay <AGENT_ID> --as-json` of an agent without steps (allowed empty). */
export function emptyAgentJson(agentId: string): Record<string, unknown> {
  return { ok: true, agent_id: agentId, head_hash: GENESIS_HASH, steps: 0, entries: [] };
}

/** `replay <AGENT_ID> --as-json`: the verdict members above, then `entries` (docs/cli/replay.md). */
export const AGENT_VIEW_FIELDS: JsonFields = jsonFields([
  ["ok", "boolean", "The agent's step journal verifies (chain and head)"],
  ["agent_id", "string", "The agent"],
  ["head_hash", "string", "The step journal's head"],
  ["steps", "number", "Steps in its chain"],
  ["entries", "object[]", "Its entries, in order (at most --limit)"],
]);
