import { MAX_ROW_BYTES, openInput, rowTooLarge } from "../fsutil/input.ts";

/**
 * Physical lines of a file, read in fixed-size chunks (constant memory
 * whatever the file size; only a line longer than a chunk is assembled).
 *
 * Line breaks are Python's universal newlines: `\n`, `\r\n` and a lone `\r`
 * each end one physical line, and lines are numbered from 0 counting blank
 * ones, exactly as Python's text-mode iteration numbers them. Splitting on
 * bytes is equivalent to splitting the decoded text: CR and LF never occur
 * inside a UTF-8 multi-byte sequence, and invalid bytes are never CR/LF.
 */

export interface PhysicalLine {
  /** 0-based physical line number. */
  index: number;
  /** Byte offset of the first byte of the line. */
  start: number;
  /** Byte offset just past the line content (before its terminator). */
  end: number;
  /** The line content without terminator. Valid only until the next line is requested. */
  bytes: Uint8Array;
  /** True when the line was ended by a terminator (false for a final fragment). */
  terminated: boolean;
}

export interface LineReadOptions {
  /** Treat the file as ending at this byte offset (a snapshot of a growing file). */
  endOffset?: number;
  /** Read size in bytes (default 1 MiB). */
  chunkSize?: number;
  /** Longest line accepted (default MAX_LINE_BYTES); a longer one is `row_too_large`. */
  maxLineBytes?: number;
}

const LF = 10;
const CR = 13;
export const DEFAULT_CHUNK_SIZE = 1 << 20;
/**
 * A physical line longer than this is never assembled: reading stops as
 * soon as a line passes it and the input is refused as `row_too_large`
 * (exit 3, with the 1-based line number). Memory stays bounded whatever the
 * file holds; the same limit for every reader (src/fsutil/input.ts).
 */
export const MAX_LINE_BYTES = MAX_ROW_BYTES;

function concat(parts: Uint8Array[], tail: Uint8Array): Uint8Array {
  let len = tail.length;
  for (const p of parts) len += p.length;
  const out = new Uint8Array(len);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  out.set(tail, off);
  return out;
}

/**
 * Yield the physical lines of `path` (`-` or `/dev/stdin`: standard input,
 * as a stream). A missing file yields nothing; a path that is not a regular
 * file is `input_not_regular_file`, any other read failure
 * `journal_unreadable`, a line over the cap `row_too_large` (all exit 3).
 */
export function* physicalLines(path: string, options: LineReadOptions = {}): Generator<PhysicalLine> {
  const input = openInput(path, { what: "journal" });
  if (input === null) return;
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const limit = options.endOffset ?? Number.POSITIVE_INFINITY;
  const cap = options.maxLineBytes ?? MAX_LINE_BYTES;
  const keep = cap + 1;
  let pendingLen = 0;
  const buf = new Uint8Array(chunkSize);
  let filePos = 0;
  let lineStart = 0;
  let index = 0;
  let pending: Uint8Array[] = [];
  let skipLF = false;
  try {
    for (;;) {
      const want = Math.min(chunkSize, limit - filePos);
      if (want <= 0) break;
      const n = input.read(buf, 0, want, filePos);
      if (n === 0) break;
      const view = buf.subarray(0, n);
      let p = 0;
      if (skipLF) {
        skipLF = false;
        if (view[0] === LF) {
          p = 1;
          lineStart = filePos + 1;
        }
      }
      // Cached positions of the next LF/CR: each byte is searched once.
      let nextLF = view.indexOf(LF, p);
      let nextCR = view.indexOf(CR, p);
      while (p < n) {
        if (nextLF !== -1 && nextLF < p) nextLF = view.indexOf(LF, p);
        if (nextCR !== -1 && nextCR < p) nextCR = view.indexOf(CR, p);
        const lf = nextLF === -1 ? n : nextLF;
        const cr = nextCR === -1 ? n : nextCR;
        const t = lf < cr ? lf : cr;
        if (t === n) {
          // Copy (the buffer is reused); a line past the cap ends the read.
          const piece = view.slice(p, Math.min(n, p + (keep - pendingLen)));
          pending.push(piece);
          pendingLen += piece.length;
          if (pendingLen > cap) throw rowTooLarge(path, index + 1, cap);
          break;
        }
        const content = view.subarray(p, t);
        if (pendingLen + content.length > cap) throw rowTooLarge(path, index + 1, cap);
        const bytes = pending.length === 0 ? content : concat(pending, content);
        pending = [];
        pendingLen = 0;
        yield { index, start: lineStart, end: filePos + t, bytes, terminated: true };
        index++;
        p = t + 1;
        if (view[t] === CR) {
          if (p < n) {
            if (view[p] === LF) p++;
          } else {
            skipLF = true;
          }
        }
        lineStart = filePos + p;
      }
      filePos += n;
    }
    if (pending.length > 0) {
      const bytes = concat(pending, new Uint8Array(0));
      pending = [];
      yield { index, start: lineStart, end: filePos, bytes, terminated: false };
    }
  } finally {
    input.close();
  }
}
