import type { JournalVerifyResult } from "../journal/verify.ts";
import { readChunks } from "../fsutil/input.ts";
import { auditKeyPath, loadAuditKey } from "./key.ts";
import { verifySpine, type SpineReport, type SpineVerdict } from "./spine.ts";

/**
 * A run journal's identity from its lineage-spine seal, as upstream's
 * `replay <RUN> --verify` takes it (upstream-parity §2.6): the last
 * `replay-journal-head:<head>` entry of a spine whose chain (and, with the
 * audit key, tags) verify names the head the journal must recompute to;
 * the count is not sealed (the index is folded into every event hash).
 *
 * Keyed and intact, head equal: `verified`. Head different, or the spine
 * itself broken: `mismatched` (with or without the key: a consistent spine
 * naming another head, or a broken one, is evidence either way). Keyless
 * and head equal: `unverifiable` — the entry hashes are plain SHA-256, so
 * anyone who can rewrite spine.jsonl can write a consistent one (§2.8).
 */

function sha256File(path: string): string {
  const h = new Bun.CryptoHasher("sha256");
  for (const chunk of readChunks(path, { what: "journal" })) h.update(chunk);
  return "sha256:" + h.digest("hex");
}

function judge(r: JournalVerifyResult, s: SpineVerdict, keyed: boolean, rep: SpineReport): void {
  if (s.status === "tampered") {
    rep.identity = "mismatched";
    rep.errors.push(`lineage spine ${s.path} does not verify: ${s.errors.join("; ")}`);
    return;
  }
  const seal = s.seal;
  if (seal === null) {
    rep.notes.push(`the spine holds no ${"replay-journal-head:"} seal entry: nothing in it commits to the journal head`);
    return;
  }
  const intact = r.chain_consistent && r.coverage === "complete";
  if (!intact || r.head !== seal.head) {
    rep.identity = "mismatched";
    rep.errors.push(`journal head ${r.head || "(empty)"} does not match the head ${seal.head || "(empty)"} sealed in the lineage spine (line ${seal.line})`);
    return;
  }
  rep.identity = keyed ? "verified" : "unverifiable";
  if (!keyed) rep.notes.push("the spine's journal-head seal matches the journal, but its HMAC tags were not checked: identity stays unverifiable");
}

/**
 * Judge a finished verdict's journal by the spine of `runId` (under
 * `sddDir`): the report's identity and findings, which journal/verdict.ts
 * folds into the verdict (`foldSpine`). Null when the run has no spine.
 * Throws for an audit key that is named but unreadable, or insecure.
 */
export function judgeBySpine(r: JournalVerifyResult, sddDir: string, runId: string, env: Record<string, string | undefined> = process.env): SpineReport | null {
  const key = loadAuditKey(env);
  const s = verifySpine(sddDir, runId, key);
  if (s === null) return null;
  const keyed = s.keyed;
  const rep: SpineReport = {
    spine: s,
    key_path: key?.path ?? auditKeyPath(env).path,
    identity: "unverifiable",
    content_hash_matches: null,
    checked: ["prev_hash links", "entry hashes", ...(s.head_file === "checked" ? ["spine.head count and head"] : [])],
    not_checked: [],
    errors: [],
    notes: [],
  };
  if (keyed) rep.checked.push("entry HMAC tags", ...(s.head_file === "checked" ? ["spine.head tag"] : []));
  else if (s.unsupported) rep.not_checked.push(`HMAC tags (hash_profile ${s.unsupported}: RFC 8785 tags are not implemented here)`);
  else rep.not_checked.push(`HMAC tags (no audit key at ${rep.key_path}; set BERNSTEIN_AUDIT_KEY_PATH)`);
  if (s.head_file === "missing") rep.not_checked.push("spine.head (absent)");
  judge(r, s, keyed, rep);
  if (s.seal !== null && s.status !== "tampered" && r.path !== "") {
    // The journal's bytes at sealing time: any later edit, even of a field no hash covers (ts), changes them.
    rep.content_hash_matches = sha256File(r.path) === s.seal.content_hash;
    rep.checked.push("sealed content_hash against the journal bytes");
    if (!rep.content_hash_matches) {
      rep.notes.push("the journal's bytes differ from those sealed (content_hash): rows were appended, or fields no hash covers (ts, elapsed_s) or the spelling of rows changed since sealing");
    }
  }
  return rep;
}

