import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { UsageError } from "../errors/index.ts";
import { realpathOfExistingPrefix } from "../journal/paths.ts";

/**
 * Agent ids name a directory under `<sdd>/runtime/journal`. The Python
 * orchestrator joins them verbatim (`../x` escapes); here they follow the
 * run-id rule and must stay inside the journal root even through symlinks.
 */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** The only bucket file name the journal ever writes or reads. */
export const BUCKET_NAME = "000000.jsonl";

export function validateAgentId(id: string): string {
  if (!AGENT_ID_PATTERN.test(id) || id === "." || id === "..") {
    throw new UsageError(
      `invalid agent id ${JSON.stringify(id)}: use 1-64 characters from A-Z a-z 0-9 _ . - (not '.' or '..')`,
      "invalid_agent_id",
    );
  }
  return id;
}

/** `<sdd>/runtime/journal` */
export function journalRoot(sddDir: string): string {
  return join(sddDir, "runtime", "journal");
}

/** The deepest existing ancestor of `p`, resolved, with the missing tail re-appended. */
function realpathLenient(p: string): string {
  const abs = resolve(p);
  let cur = abs;
  const tail: string[] = [];
  for (;;) {
    if (existsSync(cur)) {
      try {
        return join(realpathSync(cur), ...tail.reverse());
      } catch {
        /* fall through: treat as missing */
      }
    }
    const parent = dirname(cur);
    if (parent === cur) return abs;
    tail.push(basename(cur));
    cur = parent;
  }
}

/**
 * `<sdd>/runtime/journal/<id>`, refused with `invalid_agent_id` when the id is
 * malformed or when the directory (a symlink, say) resolves outside the root.
 */
export function agentJournalDir(sddDir: string, agentId: string): string {
  validateAgentId(agentId);
  const root = journalRoot(sddDir);
  const dir = join(root, agentId);
  const realRoot = realpathLenient(root);
  const realDir = realpathLenient(dir);
  const rel = relative(realRoot, realDir);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
    throw new UsageError(`agent id ${JSON.stringify(agentId)} resolves outside ${root}`, "invalid_agent_id");
  }
  // The bucket itself may be a symlink (even a dangling one) out of the
  // tree: every reader and the writer open it by this directory, so refuse
  // here (found by the security review: appends landed outside .sdd).
  const bucketRel = relative(realRoot, realpathOfExistingPrefix(join(dir, BUCKET_NAME)));
  if (bucketRel.startsWith("..") || isAbsolute(bucketRel)) {
    throw new UsageError(`the step journal of agent ${JSON.stringify(agentId)} resolves outside ${root}`, "invalid_agent_id");
  }
  return dir;
}

/** `<sdd>/runtime/journal/<id>/000000.jsonl` */
export function agentBucketPath(sddDir: string, agentId: string): string {
  return join(agentJournalDir(sddDir, agentId), BUCKET_NAME);
}
