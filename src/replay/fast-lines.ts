import { JOURNAL_MAX_ROW_BYTES, openInput, rowTooLarge } from "../fsutil/input.ts";
import { LineSplitter, type BulkProbe } from "../fsutil/lines.ts";
import { classifyLine, type LineVerdict } from "../journal/reader.ts";
import { RAW_STRING_MIN } from "../pyjson/row.ts";
import { Respacer } from "../codec/writer-spacing.ts";

/**
 * The journal reader of the replay display's fast paths: the physical
 * lines of a run journal exactly as `readJournal` numbers and classifies
 * them (universal newlines, blank lines skipped, the row limit), but each
 * `\n`-terminated line is first offered to a byte-level `fast` handler on
 * the read buffer itself. A line the handler declines (or that the
 * splitter had to cut at a `\r`) is re-spaced as Python's writer spaces a
 * row and offered whole to `long` (codec/writer-spacing.ts: a journal
 * rewritten by `jq -c`, say), else classified by the exact reader
 * (`classifyLine`) and handed to `exact`, so every line ends up in exactly
 * one of the handlers, in file order.
 *
 * A generator that yields after each chunk: the caller writes what the
 * chunk produced (awaiting the reader of stdout) before more is read, so
 * memory stays one chunk plus its output whatever the journal's size.
 */

/** Claims the line `buf[start, end)` (no terminator; `offset`: its first byte's in the file) when it handles it itself. */
export type FastLine = (buf: Uint8Array, start: number, end: number, lineNo: number, offset: number) => boolean;

/** A line the fast handler declined, classified exactly (`lineNo` is 1-based; blank lines never come here). */
export type ExactLine = (verdict: Exclude<LineVerdict, { kind: "blank" }>, bytes: Uint8Array, lineNo: number, offset: number) => void;

export interface FastLineReader {
  fast: FastLine;
  exact: ExactLine;
  /**
   * Claims a line handed whole (`bytes`, no terminator; valid during the
   * call) before the exact reader would classify it: one of FAST_LINE_MAX
   * bytes or more as the reader assembled it, or a line re-spaced (its
   * values, keys and strings the line's), whose `length` in the file is
   * then not its bytes'.
   */
  long?: (bytes: Uint8Array, lineNo: number, offset: number, length: number) => boolean;
  /** Takes runs of whole lines at a line start of the read buffer (src/fsutil/lines.ts BulkProbe). */
  bulk?: BulkProbe;
  /** The read buffer (a kernel's memory): chunks are read into it, a line feed is kept after each as a sentinel. */
  buffer?: Uint8Array;
  /**
   * Collect garbage after every this many chunks, and after a chunk that
   * ends EXACT_GC_BYTES of lines taken by the exact reader (default never): a
   * handler that makes values per row leaves garbage the engine collects
   * late, and peak memory would grow with it.
   */
  gcEvery?: number;
  /**
   * Exact rows keep their long string members as bytes (`PyRaw`, see
   * loadsLine): for a caller that only hashes or prints them, or decodes
   * the few it shows (display.ts decodeShownStrings).
   */
  rawStrings?: boolean;
  /** True once the caller needs no more lines (a `--limit` reached): reading stops after the chunk. */
  done(): boolean;
  /** Treat the file as ending at this byte offset (a snapshot of a growing file: the bytes a verify read). */
  endOffset?: number;
}

const CHUNK = 1 << 20;
/**
 * Exact lines' values are collected after this many of their bytes: a
 * journal where many rows take the exact path (raw UTF-8, say) otherwise
 * holds their garbage long enough to lift the display's peak by several
 * megabytes, and collecting twice as often cost no measurable time.
 */
const EXACT_GC_BYTES = 1 << 19;

/** Lines of this length and more always take the exact reader (its byte path keeps huge rows as bytes). */
export const FAST_LINE_MAX = 1 << 16;
/** Lines longer than this are not re-spaced (re-spaced, one may be three times as long: the display kernels take 2 MiB). */
const RESPACE_MAX = 1 << 20;

export function* readFastLines(path: string, reader: FastLineReader): Generator<void> {
  const input = openInput(path, { what: "journal" });
  if (input === null) return;
  let overlong = 0;
  /** Bytes of lines the exact reader made values of since the last collection. */
  let exactBytes = 0;
  /** File offset of the line being handed out: where the previous one ended (after its terminator). */
  let lineStart = 0;
  const respacer = reader.long === undefined ? null : new Respacer();
  const splitter: LineSplitter = new LineSplitter(
    "universal",
    (bytes, lineNo) => {
      const offset = lineStart;
      lineStart = splitter.nextLineStart;
      if (reader.done() || overlong !== 0) return;
      if (bytes === null) {
        overlong = lineNo;
        return;
      }
      if (bytes.length === 0) return;
      if (bytes.length >= FAST_LINE_MAX && reader.long?.(bytes, lineNo, offset, bytes.length)) return;
      if (respacer !== null && bytes.length <= RESPACE_MAX) {
        if (respacer.respace(bytes, 0, bytes.length) >= 0 && reader.long!(respacer.text(), lineNo, offset, bytes.length)) {
          respacer.taken(bytes.length);
          return;
        }
      }
      exactBytes += bytes.length;
      // a huge line's buffer the splitter let go of is the row's own: its values keep views of it, not a copy
      const kept = splitter.detach(bytes);
      const v = classifyLine(kept, JOURNAL_MAX_ROW_BYTES, kept.buffer !== buf.buffer, reader.rawStrings ? RAW_STRING_MIN : Infinity);
      if (v.kind !== "blank") reader.exact(v, kept, lineNo, offset);
    },
    JOURNAL_MAX_ROW_BYTES,
    (buf, start, end, lineNo) => {
      if (reader.done() || overlong !== 0) {
        lineStart = splitter.nextLineStart;
        return true;
      }
      if (end - start >= FAST_LINE_MAX || !reader.fast(buf, start, end, lineNo, lineStart)) return false;
      lineStart = splitter.nextLineStart;
      return true;
    },
    reader.bulk ?? null,
  );
  const buf = reader.buffer ?? new Uint8Array(CHUNK + 8);
  const chunk = Math.min(CHUNK, buf.length - 8);
  const limit = reader.endOffset ?? Number.POSITIVE_INFINITY;
  let pos = 0;
  let chunks = 0;
  try {
    for (;;) {
      const want = Math.min(chunk, limit - pos);
      if (want <= 0) break;
      const n = input.read(buf, 0, want, pos);
      if (n === 0) break;
      buf[n] = 0x0a; // the sentinel a kernel's scanning loops stop at
      pos += n;
      splitter.push(buf.subarray(0, n));
      if (overlong === 0 && splitter.overlong && !reader.done()) overlong = splitter.lines + 1;
      if (overlong !== 0) throw rowTooLarge(path, overlong, JOURNAL_MAX_ROW_BYTES);
      // exact lines are made values of, so EXACT_GC_BYTES of them (a huge row) are collected at once too
      if (reader.gcEvery !== undefined && (++chunks % reader.gcEvery === 0 || exactBytes >= EXACT_GC_BYTES)) {
        Bun.gc(true);
        exactBytes = 0;
      }
      yield;
      if (reader.done()) return;
    }
    splitter.end();
    if (overlong !== 0) throw rowTooLarge(path, overlong, JOURNAL_MAX_ROW_BYTES);
    yield;
  } finally {
    input.close();
  }
}
