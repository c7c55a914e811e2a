import { appendFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { unreadableWarning } from "../fsutil/input.ts";
import { physicalLines } from "../fsutil/lines.ts";
import { dirname } from "node:path";
import { acquireLock, LockHeldError } from "../fsutil/lock.ts";
import { dumps, parse, type PyLike, type PyObject } from "../pyjson/index.ts";

/**
 * Append-only JSONL logs under `.sdd/runtime/` (bridge lineage, task
 * notifications). Each row is Python `json.dumps(row) + "\n"` — default
 * spaced separators — appended with ONE write so concurrent writers never
 * interleave inside a line. Before appending, a file larger than the
 * threshold (10 MiB) is rotated to `<name>.1` (one backup, overwritten).
 */
export const ROTATE_BYTES = 10 * 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

export interface AppendOptions {
  /** Rotate when the file is larger than this many bytes (tests inject a small one). */
  rotateBytes?: number;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Rotate under a cross-process lock so two writers that both see an
 * oversized file do not rename twice (the second rename would replace the
 * backup with a fresh, nearly empty file). A writer that finds the lock
 * held skips rotation: the holder is rotating right now.
 */
function rotateIfNeeded(path: string, limit: number): void {
  if (sizeOf(path) <= limit) return;
  let lock;
  try {
    lock = acquireLock(`${path}.lock`);
  } catch (err) {
    if (err instanceof LockHeldError) return;
    throw err;
  }
  try {
    if (sizeOf(path) > limit) renameSync(path, `${path}.1`);
  } finally {
    lock.release();
  }
}

/** Append one row (parents created, rotation first). Mode 0600 for a new file. */
export function appendJsonLine(path: string, row: PyLike, options: AppendOptions = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  rotateIfNeeded(path, options.rotateBytes ?? ROTATE_BYTES);
  appendFileSync(path, dumps(row) + "\n", { mode: 0o600 });
}

/** Lines of a file (`\n`-separated, decoded leniently), streamed: memory stays bounded whatever the size. */
export function* readLines(path: string): Generator<string> {
  // A FIFO or device is refused unopened; a line past the row limit ends the read (row_too_large).
  let first = true;
  for (const line of physicalLines(path, { dialect: "lf", what: "log", chunkSize: 64 * 1024 })) {
    const text = utf8.decode(line.bytes);
    // As one decode of the whole file would: a BOM is dropped at its start only.
    yield first && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    first = false;
  }
}

export interface ReadRowsResult<T> {
  rows: T[];
  /** Lines that were not a JSON object or failed decoding. */
  skipped: number;
  /** Set when the file exists but could not be read, or lines were skipped. */
  warning?: string;
}

/**
 * Read every row that decodes; blank lines are ignored, broken ones counted
 * and skipped (a torn last line from a crash must not hide the rest).
 */
export function readJsonLines<T>(path: string, decode: (row: PyObject) => T | null): ReadRowsResult<T> {
  const rows: T[] = [];
  let skipped = 0;
  try {
    for (const line of readLines(path)) {
      if (line.trim() === "") continue;
      let value;
      try {
        value = parse(line);
      } catch {
        skipped++;
        continue;
      }
      const row = value instanceof Map ? decode(value) : null;
      if (row === null) skipped++;
      else rows.push(row);
    }
  } catch (err) {
    return { rows, skipped, warning: unreadableWarning(path, err) };
  }
  return skipped > 0 ? { rows, skipped, warning: `${path}: skipped ${skipped} malformed line(s)` } : { rows, skipped };
}
