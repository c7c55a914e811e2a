import { createHmac } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, writeSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RefusalError } from "../errors/index.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { osLock } from "../fsutil/oslock.ts";
import { parse } from "../pyjson/parse.ts";
import { pyStr } from "../pyjson/python.ts";
import { PyNum, type PyValue } from "../pyjson/types.ts";
import { isPyObject } from "../pyjson/parse.ts";
import { lineageKey, type AuditKey } from "./key.ts";
import { cjRaw, entryHash, JOURNAL_HEAD_PREFIX, SPINE_FILE, SPINE_HEAD_FILE, spineDir } from "./spine.ts";

/**
 * Appending the journal-head seal to a run's lineage spine, as upstream's
 * run finalization does (upstream-parity §2.3–§2.4): one v2 entry whose
 * `step_id` is `replay-journal-head:<head>`, tagged with the lineage key
 * derived from the audit key, under the spine's lock, then `spine.head`
 * rewritten atomically. This is what upstream's identity check reads, so
 * a run sealed here is `verified` there too (this project's own seal.json
 * is unauthenticated and upstream does not read it).
 */

export interface SpineSealResult {
  path: string;
  /** The new (or existing) seal entry's entry_hash. */
  entry_hash: string;
  /** Lines of spine.jsonl after the append. */
  count: number;
  /** False when the spine's last entry already sealed this head (idempotent). */
  appended: boolean;
}

const LOCK_FILE = ".spine.lock";

export function appendJournalHeadSeal(
  sddDir: string,
  runId: string,
  head: string,
  journalFile: string,
  key: AuditKey,
  timestampNs: bigint = BigInt(Date.now()) * 1_000_000n,
): SpineSealResult {
  const dir = spineDir(sddDir, runId);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, SPINE_FILE);
  const lockFd = openSync(join(dir, LOCK_FILE), "a", 0o644);
  try {
    const lock = osLock();
    if (lock !== null && lock.tryLock(lockFd) === "busy") {
      throw new RefusalError("spine_locked", `cannot seal run ${runId} into its lineage spine: another process is appending to ${path}`, { run_id: runId, path });
    }
    const last = lastEntry(path);
    const stepId = JOURNAL_HEAD_PREFIX + head;
    if (last.row !== null && pyStr(last.row.get("step_id"), "") === stepId) {
      return { path, entry_hash: pyStr(last.row.get("entry_hash"), ""), count: last.count, appended: false };
    }
    const row = new Map<string, PyValue>([
      ["v", new PyNum("2", false)],
      ["prev_hash", last.entryHash],
      // Upstream writes this literal path whatever the state directory is called.
      ["artifact_path", `.sdd/runs/${runId}/journal.jsonl`],
      ["content_hash", "sha256:" + fileSha256(journalFile, head)],
      ["actor", "orchestrator"],
      ["step_id", stepId],
      ["model", ""],
      ["timestamp", new PyNum(timestampNs.toString(), false)],
    ]);
    const hash = entryHash(row)!;
    row.set("entry_hash", hash);
    const k2 = lineageKey(key.master);
    row.set("hmac", hmacHex(k2, cjRaw(row)));
    const fd = openSync(path, "a", 0o644);
    try {
      writeSync(fd, cjRaw(row) + "\n");
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const count = last.count + 1;
    const body = new Map<string, PyValue>([
      ["count", new PyNum(String(count), false)],
      ["head_hash", hash],
    ]);
    body.set("hmac", hmacHex(k2, cjRaw(body)));
    writeFileAtomic(join(dir, SPINE_HEAD_FILE), cjRaw(body));
    return { path, entry_hash: hash, count, appended: true };
  } finally {
    closeSync(lockFd); // closing the descriptor releases the flock
  }
}

function hmacHex(key: Uint8Array, text: string): string {
  return createHmac("sha256", key).update(text, "utf8").digest("hex");
}

/**
 * The last line of the spine as upstream's appender reads it: its
 * entry_hash ("" when the file is missing, empty, or its last line is not
 * a JSON object) and the number of lines.
 */
function lastEntry(path: string): { row: Map<string, PyValue> | null; entryHash: string; count: number } {
  if (!existsSync(path)) return { row: null, entryHash: "", count: 0 };
  const text = readFileSync(path, "utf8");
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") return { row: null, entryHash: "", count: 0 };
  let row: PyValue;
  try {
    row = parse(lines[lines.length - 1]!);
  } catch {
    return { row: null, entryHash: "", count: lines.length };
  }
  if (!isPyObject(row)) return { row: null, entryHash: "", count: lines.length };
  return { row, entryHash: pyStr(row.get("entry_hash"), ""), count: lines.length };
}

/** SHA-256 hex of the journal file, streamed; of the head's bytes when the file cannot be read (as upstream falls back). */
function fileSha256(file: string, head: string): string {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return Bun.SHA256.hash(head, "hex") as string;
  }
  try {
    const h = new Bun.CryptoHasher("sha256");
    const buf = new Uint8Array(1 << 20);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
    return h.digest("hex");
  } finally {
    closeSync(fd);
  }
}
