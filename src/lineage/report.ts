import { existsSync } from "node:fs";
import { join } from "node:path";
import type { JournalVerifyResult } from "../journal/verify.ts";
import type { SpineReport } from "./spine.ts";
export type { SpineReport } from "./spine.ts";

/**
 * The lineage-spine part of a verify's verdict, and its rendering. Kept
 * apart from the checks (identity.ts, spine.ts, key.ts: node:crypto) so a
 * verify of a run without a spine never loads them.
 */

/** Judge the journal by the spine of `runId` when it has one (loading the spine code only then); null otherwise. */
export async function spineReportIfAny(r: JournalVerifyResult, sddDir: string, runId: string): Promise<SpineReport | null> {
  if (!existsSync(join(sddDir, "lineage", runId, "spine.jsonl"))) return null;
  const { judgeBySpine } = await import("./identity.ts");
  return judgeBySpine(r, sddDir, runId);
}

/** The `spine` member of a verify's JSON document. */
export function spineJson(rep: SpineReport | null): Record<string, unknown> | null {
  if (rep === null) return null;
  const s = rep.spine;
  return {
    path: s.path,
    status: s.status,
    keyed: s.keyed,
    key_path: rep.key_path,
    entries: s.entries,
    head_hash: s.head_hash,
    hash_profile: s.hash_profile,
    sealed_head: s.seal?.head ?? null,
    seal_line: s.seal?.line ?? null,
    identity: rep.identity,
    content_hash_matches: rep.content_hash_matches,
    checked: rep.checked,
    not_checked: rep.not_checked,
    errors: s.errors,
    notes: rep.notes,
  };
}

/** Prose lines saying what the spine check did and did not establish. */
export function spineLines(rep: SpineReport | null): string[] {
  if (rep === null) return [];
  const s = rep.spine;
  const how = s.keyed ? `tags checked with the audit key ${rep.key_path}` : "WITHOUT its tags";
  const seal = s.seal ? `journal-head seal at line ${s.seal.line}` : "no journal-head seal";
  const lines = [`lineage spine ${s.path}: ${s.status}, ${s.entries} entr${s.entries === 1 ? "y" : "ies"}, ${how}; ${seal}; identity=${rep.identity}`];
  lines.push(`  checked: ${rep.checked.join(", ")}`);
  if (rep.not_checked.length > 0) lines.push(`  NOT checked: ${rep.not_checked.join("; ")}`);
  for (const n of rep.notes) lines.push(`  note: ${n}`);
  return lines;
}
