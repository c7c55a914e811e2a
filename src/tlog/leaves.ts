import { statSync } from "node:fs";
import { InputError, NegativeError } from "../errors/index.ts";
import { verifyJournal } from "../journal/verify.ts";
import { refuseContent, verdictContent } from "../journal/content.ts";
import type { FastVerifyResult } from "../journal/fast/engine.ts";
import { TreeRequest, type Subtree, type TreeSpec } from "../journal/fast/subtrees.ts";
import { fileIdentity } from "./sniff.ts";

/**
 * A journal's Merkle tree, from the verify pass itself: its leaves are the
 * event hashes the verifier RECOMPUTED, never merely the stored
 * `event_hash` fields (an edited payload with its old `event_hash` must
 * change the root). Each range of the verify builds the aligned perfect
 * subtrees over the rows it verified (src/journal/fast/subtrees.ts), so a
 * checkpoint, a signed seal or a proof reads the journal once. The file's
 * identity (device, inode, size, mtime) must be the same after the pass as
 * before it: a journal edited meanwhile is refused, not trusted.
 */

export interface VerifiedTree {
  count: number;
  /** Hex head of the chain (last event hash; "" for an empty journal). */
  head: string;
  bytes: number;
  /** The whole tree as aligned perfect subtrees, in leaf order (cut at the requested positions). */
  subtrees: Subtree[];
  /** The row asked for with `keepRow` (its line's text), or null. */
  row: string | null;
}

export interface TreeOptions {
  /** Leaf positions no subtree may span: a prefix size to compare, an inclusion proof's leaf and the one after it. */
  cuts?: readonly number[];
  /** Keep the text of the row at this position. */
  keepRow?: number | null;
  /**
   * A full verify of this file the caller already ran, with the file's
   * identity taken before it, and the tree request it ran with: not run
   * again when that request asked for these cuts (else the tree is built by
   * a verify of its own).
   */
  verified?: { verdict: FastVerifyResult; identityBefore: string; tree?: TreeRequest };
}

/** The tree request a caller passes to its own verify so that verifiedTree can reuse that pass. */
export function treeRequest(opts: Pick<TreeOptions, "cuts" | "keepRow"> = {}): TreeRequest {
  return new TreeRequest(specOf(opts));
}

function specOf(opts: Pick<TreeOptions, "cuts" | "keepRow">): TreeSpec {
  return { cuts: [...(opts.cuts ?? [])], keepRow: opts.keepRow ?? null };
}

function covers(have: TreeSpec, want: TreeSpec): boolean {
  return want.cuts.every((c) => have.cuts.includes(c)) && (want.keepRow === null || have.keepRow === want.keepRow);
}

/**
 * Verify the journal at `path` and build its tree in the same pass.
 * Refuses (`NegativeError` chain_broken, exit 1) a journal that does not
 * verify whole: a tree over an unverified chain would commit to nothing.
 */
export async function verifiedTree(path: string, opts: TreeOptions = {}): Promise<VerifiedTree> {
  const want = specOf(opts);
  const reuse = opts.verified?.tree !== undefined && covers(opts.verified.tree.spec, want) ? opts.verified : undefined;
  const before = reuse?.identityBefore ?? fileIdentity(path);
  const request = reuse?.tree ?? new TreeRequest(want);
  const verdict = reuse?.verdict ?? (await verifyJournal(path, { endOffset: statSync(path).size, tree: request }));
  // No tree over an empty input or one with no journal row (a reused verdict was judged by its verify).
  if (!reuse) refuseContent(verdictContent(verdict, path), path, { noAllowEmpty: true });
  if (!verdict.chain_consistent || verdict.coverage !== "complete" || !verdict.payloads_checked) {
    throw new NegativeError("chain_broken", `journal ${path} does not verify: ${verdict.errors.join("; ") || "payloads not checked"}`, {
      path,
      divergent_index: verdict.divergent_index,
      head: verdict.head,
    });
  }
  const subtrees = request.subtrees;
  const leaves = subtrees === null ? -1 : subtrees.reduce((n, s) => n + s.size, 0);
  if (leaves !== verdict.count || fileIdentity(path) !== before) throw changed(path);
  return { count: verdict.count, head: verdict.head ?? "", bytes: verdict.snapshot_bytes, subtrees: subtrees!, row: request.row };
}

function changed(path: string): InputError {
  return new InputError("journal_changed", `journal ${path} changed while it was being read; try again when no writer is active`, { path });
}
