import { statSync } from "node:fs";
import { InputError, NegativeError } from "../errors.ts";
import { physicalLines } from "../fsutil/lines.ts";
import { classifyLine } from "../journal/reader.ts";
import { verifyJournal } from "../journal/verify.ts";
import type { FastVerifyResult } from "../journal/fast/engine.ts";
import { pyStr } from "../pyjson/python.ts";
import { fileIdentity } from "./sniff.ts";

/**
 * The leaves of a journal's Merkle tree: the 32-byte event hashes the
 * verifier RECOMPUTED, never merely the stored `event_hash` fields (an
 * edited payload with its old `event_hash` must change the root).
 *
 * Two passes over one snapshot: the full verify (fast engine) proves every
 * stored event_hash equals its recomputed hash; a second, links-level pass
 * then reads those fields. The snapshot is pinned by size, and the file's
 * identity (device, inode, size, mtime) must be unchanged after the second
 * pass, so a journal edited between the passes is refused, not trusted.
 */

export interface VerifiedLeaves {
  count: number;
  /** Hex head of the chain (last event hash; "" for an empty journal). */
  head: string;
  bytes: number;
}

export interface LeafRow {
  index: number;
  /** Raw 32-byte recomputed event hash. */
  hash: Uint8Array;
  /** The row's physical line (content only): valid during the callback. */
  line: Uint8Array;
  /** 1-based physical line number in the file. */
  lineNumber: number;
}

const NEEDLE = Buffer.from('"payload_hash": "');
const EVENT_KEY = Buffer.from('", "event_hash": "');
const OPEN = Buffer.from('{"ts": ');

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function hexAt(bytes: Uint8Array, at: number, out: Uint8Array): boolean {
  if (at + 64 > bytes.length) return false;
  for (let i = 0; i < 32; i++) {
    const hi = hexValue(bytes[at + 2 * i]!);
    const lo = hexValue(bytes[at + 2 * i + 1]!);
    if (hi < 0 || lo < 0) return false;
    out[i] = (hi << 4) | lo;
  }
  return true;
}

/**
 * The stored event_hash of a row spelled as Python writes it, without
 * parsing: `{"ts": …, "payload_hash": "<64>", "event_hash": "<64>"…`, with
 * no `{` or `[` before the match (so the keys found are top-level ones).
 * Anything else returns false and is parsed.
 */
function fastEventHash(line: Buffer, out: Uint8Array): boolean {
  if (line.length < 200 || line.compare(OPEN, 0, OPEN.length, 0, OPEN.length) !== 0) return false;
  const p = line.indexOf(NEEDLE);
  if (p < 0) return false;
  for (let i = 1; i < p; i++) if (line[i] === 0x7b || line[i] === 0x5b) return false;
  const e = p + NEEDLE.length + 64;
  if (line.compare(EVENT_KEY, 0, EVENT_KEY.length, e, e + EVENT_KEY.length) !== 0) return false;
  const at = e + EVENT_KEY.length;
  return line[at + 64] === 0x22 && hexAt(line, at, out);
}

export interface LeafOptions {
  /** Called once the chain verified, before the first leaf, with the number of leaves to come. */
  onVerified?: (count: number) => void;
  /**
   * A full verify of this file the caller already ran, with the file's
   * identity taken before it: not run again (the identity check still
   * brackets both passes).
   */
  verified?: { verdict: FastVerifyResult; identityBefore: string };
}

/**
 * Verify the journal at `path` and stream its leaves to `onLeaf`. Refuses
 * (`NegativeError` chain_broken, exit 1) a journal that does not verify
 * whole: a tree over an unverified chain would commit to nothing.
 */
export async function forEachVerifiedLeaf(path: string, onLeaf: (row: LeafRow) => void, opts: LeafOptions = {}): Promise<VerifiedLeaves> {
  const before = opts.verified?.identityBefore ?? fileIdentity(path);
  const verdict = opts.verified?.verdict ?? (await verifyJournal(path, { endOffset: statSync(path).size }));
  const size = verdict.snapshot_bytes;
  if (!verdict.chain_consistent || verdict.coverage !== "complete" || !verdict.payloads_checked) {
    throw new NegativeError("chain_broken", `journal ${path} does not verify: ${verdict.errors.join("; ") || "payloads not checked"}`, {
      path,
      divergent_index: verdict.divergent_index,
      head: verdict.head,
    });
  }
  opts.onVerified?.(verdict.count);
  const hash = new Uint8Array(32);
  let index = 0;
  for (const line of physicalLines(path, { endOffset: size })) {
    const buf = Buffer.from(line.bytes.buffer, line.bytes.byteOffset, line.bytes.byteLength);
    if (!fastEventHash(buf, hash)) {
      const v = classifyLine(line.bytes);
      if (v.kind === "blank") continue;
      if (v.kind !== "row") throw changed(path);
      if (!hexAt(Buffer.from(pyStr(v.row.get("event_hash"), "")), 0, hash)) throw changed(path);
    }
    onLeaf({ index, hash, line: line.bytes, lineNumber: line.index + 1 });
    index++;
  }
  // `hash` holds the last leaf's hash: the chain head.
  const last = index === 0 ? "" : Buffer.from(hash).toString("hex");
  if (index !== verdict.count || last !== (verdict.head ?? "") || fileIdentity(path) !== before) throw changed(path);
  return { count: index, head: last, bytes: size };
}

function changed(path: string): InputError {
  return new InputError("journal_changed", `journal ${path} changed while it was being read; try again when no writer is active`, { path });
}
