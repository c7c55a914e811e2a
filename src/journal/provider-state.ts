import { HEX_VALUE } from "../hex.ts";
import { dumps } from "../pyjson/encode.ts";
import { pyInt, pyStr } from "../pyjson/python.ts";
import { rawIsEmpty } from "../pyjson/parse.ts";
import { PyNum, PyRaw, type PyValue } from "../pyjson/types.ts";
import { sha256Hex } from "./hash.ts";
import { JOURNAL_MAX_ROW_BYTES, openInput } from "../fsutil/input.ts";
import { DEFAULT_CHUNK_SIZE, LineSplitter } from "../fsutil/lines.ts";
import { classifyLine, type JournalRow, type LineVerdict } from "./reader.ts";

/**
 * The provider-state gate of `replay <RUN> --verify` (upstream-parity §4):
 * a `provider_state_mutation` row whose content address does not recompute,
 * or that is flagged (a provider-side context mutation arrived while the run
 * asked for deterministic record/replay), fails the verify even though the
 * chain is intact.
 *
 * Run only over a journal whose chain verified with complete coverage, so
 * every non-blank physical line is a row and the row index is the count of
 * non-blank lines before it. Only lines that can hold such a row are parsed:
 * those spelling `provider_state_mutation`, or escaping a printable ASCII
 * character (`\u0020`..`\u007e`), which no Python or bernstein writer does
 * but which could spell the event name without its bytes.
 */

export const MUTATION_EVENT = "provider_state_mutation";

export interface ProviderStateVerdict {
  ok: boolean;
  /** `provider_state_mutation` rows seen. */
  mutations: number;
  /** Row indices of flagged mutations, in order. */
  flagged_steps: number[];
  errors: string[];
}

const NEEDLE = Buffer.from(MUTATION_EVENT);
const ESCAPE = Buffer.from("\\u00");

function hexDigit(c: number | undefined): boolean {
  return c !== undefined && HEX_VALUE[c]! >= 0;
}

/** True when the line has a `\u00XX` escape of a printable ASCII character (0x20..0x7e). */
function escapesPrintable(line: Buffer): boolean {
  for (let at = line.indexOf(ESCAPE); at >= 0; at = line.indexOf(ESCAPE, at + 1)) if (printableEscapeAt(line, at, line.length)) return true;
  return false;
}

/** Whether the `\u00` at `at` (bytes before `end`) escapes a printable ASCII character. */
function printableEscapeAt(b: Uint8Array, at: number, end: number): boolean {
  const hi = at + 4 < end ? b[at + 4]! : -1;
  const lo = at + 5 < end ? b[at + 5] : undefined;
  if (hi < 0x32 || hi > 0x37 || !hexDigit(lo)) return false;
  return !(hi === 0x37 && (lo === 0x66 || lo === 0x46)); // \u007f: Python escapes DEL itself
}

/** Python truthiness of a parsed JSON value (`bool(flagged)`). */
function truthy(v: PyValue | undefined): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v === true) return true;
  if (v instanceof PyNum) return Number(v.raw) !== 0;
  if (typeof v === "string" || Array.isArray(v)) return v.length > 0;
  // A large list or dict kept as its bytes (src/pyjson/row.ts).
  if (v instanceof PyRaw) return !rawIsEmpty(v);
  return v.size > 0;
}

/**
 * SHA-256 of `json.dumps({"kind", "before_digest", "after_digest",
 * "step_index"}, sort_keys=True, separators=(",", ":"))` (the row field is
 * `mutation_kind`, the hashed key `kind`); null when `int(step_index)`
 * fails, where Python raises.
 */
export function contentAddress(row: JournalRow): string | null {
  const raw = row.get("step_index");
  const step = raw === undefined ? 0n : pyInt(raw);
  if (step === null) return null;
  const obj = new Map<string, PyValue>([
    ["after_digest", pyStr(row.get("after_digest"), "None")],
    ["before_digest", pyStr(row.get("before_digest"), "None")],
    ["kind", pyStr(row.get("mutation_kind"), "None")],
    ["step_index", new PyNum(step.toString(), false)],
  ]);
  return sha256Hex(dumps(obj, { sortKeys: true, separators: [",", ":"] }));
}

/** Check one mutation row at chain index `i`. */
function checkRow(row: JournalRow, i: number, out: ProviderStateVerdict): void {
  out.mutations++;
  const address = contentAddress(row);
  if (address === null) {
    out.errors.push(`step ${i}: provider_state_mutation step_index is not an integer`);
  } else if (pyStr(row.get("content_address"), "None") !== address) {
    out.errors.push(`step ${i}: provider_state_mutation content address mismatch`);
  }
  if (truthy(row.get("flagged"))) {
    out.flagged_steps.push(i);
    out.errors.push(`step ${i}: flagged provider-side mutation (${pyStr(row.get("mutation_kind"), "None")}) arrived in deterministic mode`);
  }
}

/**
 * Where `pattern` next occurs in a read chunk, from a line start on: one
 * native search per occurrence (or per chunk, when there is none), so a
 * line is tested against it without a view made of it. What a search found
 * holds while the chunk's bytes stay: for the chunk being split, whose
 * lines come in order (a line the splitter assembled in its own buffer,
 * which it fills again for the next, is never asked about here).
 */
class NextOccurrence {
  private buf: Uint8Array | null = null;
  private view: Buffer = Buffer.alloc(0);
  /** The first occurrence at or after the last search's start (Infinity: none left), -1 before a search. */
  private at = -1;

  constructor(private readonly pattern: Buffer) {}

  /** True when `pattern` begins in chunk[start, end) (and `also`, when given, holds at that place). */
  within(chunk: Uint8Array, start: number, end: number, also?: (b: Uint8Array, at: number, end: number) => boolean): boolean {
    if (chunk !== this.buf) {
      this.buf = chunk;
      this.view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
      this.at = -1;
    }
    for (let from = start; ; from = this.at + 1) {
      if (this.at < from) {
        const i = this.view.indexOf(this.pattern, from);
        this.at = i < 0 ? Infinity : i;
      }
      if (this.at >= end) return false;
      if (also === undefined || also(chunk, this.at, end)) return true;
    }
  }
}

const CR = Buffer.from("\r");
/** Bytes of rows parsed between two minor collections (a full one each time costs more than it saves). */
const PARSED_GC_BYTES = 1 << 18;

/**
 * The physical lines of `[0, end)` with their row index, handed to `onLine`
 * only when they may hold a mutation row (the needle, or an escaped
 * printable): the one line splitter (universal newlines, as the journal
 * reader splits them, and the verify's row limit). A line that cannot (no needle, no
 * printable `\u00XX`, no `\r` that would make it two lines, a row's `{` first,
 * within one read) is counted by the splitter's range probe, with no view
 * made of it: almost every line is. The chain verified whole before this gate runs, so no
 * line is over the limit; one would be reported (`onUnread`), never skipped.
 */
function scanCandidates(path: string, end: number, onLine: (v: LineVerdict, index: number) => void, onUnread: (index: number) => void): void {
  const input = openInput(path, { what: "journal" });
  if (input === null) return;
  let index = 0;
  let parsed = 0;
  /** The chunk being split (a new view for each read). */
  let chunk: Uint8Array | null = null;
  const needle = new NextOccurrence(NEEDLE);
  const escape = new NextOccurrence(ESCAPE);
  const cr = new NextOccurrence(CR);
  const splitter = new LineSplitter(
    "universal",
    (line) => {
      if (line === null) {
        onUnread(index++);
        return;
      }
      if (line.length === 0) return;
      const text = Buffer.from(line.buffer, line.byteOffset, line.length);
      const candidate = text.indexOf(NEEDLE) >= 0 || escapesPrintable(text);
      if (!candidate && line[0] === 0x7b) {
        index++;
        return;
      }
      const v = classifyLine(line);
      // the rows parsed here are garbage the engine collects late: collected as they pile up, peak memory stays flat
      if ((parsed += line.length) >= PARSED_GC_BYTES) {
        Bun.gc(false);
        parsed = 0;
      }
      if (v.kind === "blank") return;
      if (candidate) onLine(v, index);
      index++;
    },
    // the verify's own cap: a longer row is one the chain walk read, and it must be gated as well
    JOURNAL_MAX_ROW_BYTES,
    (buf, start, stop) => {
      // a line the splitter assembled across two reads (in its own buffer) goes to the sink, as every other
      if (buf !== chunk || buf[start] !== 0x7b) return false;
      // a `\r` before the last byte would make the segment two lines (universal newlines); `\r\n` is one
      if (needle.within(buf, start, stop) || escape.within(buf, start, stop, printableEscapeAt) || cr.within(buf, start, stop - 1)) return false;
      index++;
      return true;
    },
  );
  const buf = new Uint8Array(DEFAULT_CHUNK_SIZE);
  let pos = 0;
  try {
    for (;;) {
      const want = Math.min(buf.length, end - pos);
      const n = want > 0 ? input.read(buf, 0, want, pos) : 0;
      if (n === 0) break;
      pos += n;
      chunk = buf.subarray(0, n);
      splitter.push(chunk);
    }
    splitter.end();
  } finally {
    input.close();
  }
}

/** Gate the first `endOffset` bytes of a journal whose chain verified whole (see above). */
export function verifyProviderState(path: string, opts: { endOffset?: number } = {}): ProviderStateVerdict {
  const out: ProviderStateVerdict = { ok: true, mutations: 0, flagged_steps: [], errors: [] };
  const end = opts.endOffset ?? Number.MAX_SAFE_INTEGER;
  scanCandidates(
    path,
    end,
    (v, index) => {
      if (v.kind === "row" && pyStr(v.row.get("event"), "") === MUTATION_EVENT) checkRow(v.row, index, out);
    },
    // a complete verify read every line, so this cannot happen; if it did, the row went unchecked
    (index) => out.errors.push(`step ${index}: longer than ${JOURNAL_MAX_ROW_BYTES} bytes; the provider-state gate could not read it`),
  );
  out.ok = out.errors.length === 0;
  return out;
}
