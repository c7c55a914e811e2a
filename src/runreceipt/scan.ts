import { isUtf8 } from "node:buffer";
import { canonical, canonicalParts, compareCodePoints, encodeString, holdsRaw, writeParts } from "../pyjson/encode.ts";
import { parse } from "../pyjson/parse.ts";
import { isPyObject } from "../pyjson/parse.ts";
import { BYTE_PATH_MIN, parseRowBytes, RAW_MEMBER_MIN, RAW_STRING_MIN } from "../pyjson/row.ts";
import type { PyValue } from "../pyjson/types.ts";
import { JOURNAL_MAX_ROW_BYTES, type OpenInput } from "../fsutil/input.ts";
import { ByteCursor, ScanTrouble } from "./cursor.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";
import { HashedChunks } from "./hashed-chunks.ts";

/**
 * One streaming pass over a run receipt: the three large blocks (`journal`,
 * `spine`, `audit_range`) are visited member by member and their lists
 * (`events`, `entries`) element by element, so memory holds one row at a
 * time, never the document. Every other value is small and parsed whole.
 * Each cut is parsed by the py-json parser (CPython `json.loads` semantics:
 * lexemes kept, NaN accepted, last duplicate wins), so what is accepted is
 * exactly what `json.loads` of the whole text accepts; where the cursor
 * cannot cut, `ScanTrouble` asks the caller for the whole-text parse.
 *
 * The same pass feeds the canonical form (`CJ(receipt)`, spec §1.8) to a
 * SHA-256 hasher, which is right only when every visited object's keys come
 * in sorted order without duplicates (any file Python wrote: it writes CJ);
 * otherwise `sorted` is false and `canonicalDigest` re-reads the file.
 */

/** The streamed blocks and the name of each one's list. */
export const STREAMED: Readonly<Record<string, string>> = { journal: "events", spine: "entries", audit_range: "events" };

export interface ReceiptVisitor {
  /** A top-level member (a streamed block whose value is not an object arrives here too). */
  top(key: string, value: PyValue): void;
  /** A streamed block that is an object begins (again, for a duplicate key). */
  open(block: string): void;
  /** A member of a block other than its list (or the list key holding a non-list). */
  member(block: string, key: string, value: PyValue): void;
  /** The block's list begins (again, for a duplicate key). */
  openList(block: string): void;
  element(block: string, value: PyValue): void;
  /**
   * A journal row at the start of `bytes` (more may follow): its length when
   * it was taken as is (its bytes are then its canonical text), else 0.
   */
  rawJournalRow?(b: Uint8Array, s: number, limit: number): number;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function parseCut(bytes: Uint8Array): PyValue {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new ScanTrouble("invalid UTF-8");
  }
  try {
    return parse(text);
  } catch {
    throw new ScanTrouble("invalid JSON value");
  }
}

/** Collects the canonical text (ASCII: CJ escapes the rest) for the hasher in pieces of about a MiB. */
class CanonicalSink extends HashedChunks {
  /** False once an object's keys were seen out of order or twice. */
  sorted = true;
  digests(): ReceiptDigests {
    return finish(this.flushed());
  }
}

/** Key-order bookkeeping of one object. */
class KeyOrder {
  private last: string | null = null;
  constructor(private readonly sink: CanonicalSink) {}
  next(key: string): void {
    if (this.last !== null) {
      if (compareCodePoints(this.last, key) >= 0) this.sink.sorted = false;
      this.sink.text(",");
    }
    this.last = key;
    this.sink.text(encodeString(key) + ":");
  }
}

function readKey(cur: ByteCursor): string {
  if (cur.peek() !== 0x22) throw new ScanTrouble("expected a key");
  const key = parseCut(cur.cutValue().bytes);
  if (typeof key !== "string") throw new ScanTrouble("expected a key");
  return key;
}

/**
 * Members of the object at the cursor: `onMember(key)` must consume the
 * value. Handles `{}`, separators and the closing brace.
 */
async function eachMember(cur: ByteCursor, onMember: (key: string) => void | Promise<void>): Promise<void> {
  cur.expect(0x7b);
  cur.skipWs();
  if (cur.peek() === 0x7d) {
    cur.expect(0x7d);
    return;
  }
  for (;;) {
    cur.skipWs();
    const key = readKey(cur);
    cur.skipWs();
    cur.expect(0x3a);
    cur.skipWs();
    await onMember(key);
    cur.skipWs();
    const c = cur.peek();
    if (c === 0x2c) {
      cur.expect(0x2c);
      continue;
    }
    cur.expect(0x7d);
    return;
  }
}

/**
 * Elements of the array at the cursor: `onElement()` must consume each.
 * The event loop gets a turn now and then (a list holds a whole journal:
 * a SIGINT/SIGTERM handler runs only between two turns).
 */
async function eachElement(cur: ByteCursor, onElement: () => void): Promise<void> {
  cur.expect(0x5b);
  cur.skipWs();
  if (cur.peek() === 0x5d) {
    cur.expect(0x5d);
    return;
  }
  const turns = new ElementTurns(cur);
  for (;;) {
    cur.skipWs();
    onElement();
    if (turns.due()) await nextTurn();
    cur.skipWs();
    if (cur.peek() === 0x2c) {
      cur.expect(0x2c);
      continue;
    }
    cur.expect(0x5d);
    return;
  }
}

/** Whether a turn is due after an element: looked at every 64 elements or 1 MiB of them, taken every 50 ms of work. */
class ElementTurns {
  private readonly pacer = new TurnPacer(50);
  private elements = 0;
  private at: number;
  constructor(private readonly cur: ByteCursor) {
    this.at = cur.offset;
  }
  due(): boolean {
    if (++this.elements < 64 && this.cur.offset - this.at < 1 << 20) return false;
    this.elements = 0;
    this.at = this.cur.offset;
    return this.pacer.due();
  }
}

/** SHA-256 of CJ(receipt) and of CJ(receipt) + "\n" (spec §1.8). */
export interface ReceiptDigests {
  canonical: string;
  receipt: string;
}

function finish(hasher: Bun.CryptoHasher): ReceiptDigests {
  const canonical = hasher.copy().digest("hex");
  hasher.update("\n");
  return { canonical, receipt: hasher.digest("hex") };
}

/** Bytes of lookahead offered to the canonical-row path; a longer row takes the parsed path. */
const FAST_ROW_WINDOW = 1 << 16;
/**
 * Longer rows are not given to the fast reader, which holds a row's text
 * and its payload as strings (several times the row): they are read with
 * their large values kept as bytes.
 */
const FAST_ROW_MAX = 4 << 20;

export interface ScanResult {
  /** The digests when every object's keys came sorted, else null. */
  digests: ReceiptDigests | null;
  /** The document is not an object (a scalar or array). */
  notObject: boolean;
  /** Byte offsets of the receipt value in the file (for `canonicalDigestsOfFile`). */
  range: [number, number];
}

/**
 * Scan the receipt at `input`. Throws `ScanTrouble` when the text is not
 * JSON (the caller parses it whole for Python's message).
 */
export async function scanReceipt(input: OpenInput, visitor: ReceiptVisitor): Promise<ScanResult> {
  const cur = new ByteCursor(input);
  cur.skipWs();
  const start = cur.offset;
  const r = await scanValue(cur, visitor);
  const end = cur.offset;
  cur.skipWs();
  if (cur.peek() !== -1) throw new ScanTrouble("extra data");
  return { ...r, range: [start, end] };
}

/**
 * A bernstein-mcp vector file (`{name, input, expected, canonical, notes}`):
 * the receipt is its `input` object, or for a session vector the text
 * `input.receipt_text` (returned as `embedded`, to be scanned on its own).
 * The other members are skipped, not checked.
 */
export async function scanVector(input: OpenInput, visitor: ReceiptVisitor): Promise<ScanResult & { embedded: string | null }> {
  const cur = new ByteCursor(input);
  cur.skipWs();
  let found: (ScanResult & { embedded: string | null }) | null = null;
  if (cur.peek() !== 0x7b) throw new ScanTrouble("a vector file is a JSON object");
  await eachMember(cur, async (key) => {
    if (key !== "input") {
      cur.cutValue();
      return;
    }
    const start = cur.offset;
    const probe = cur.window(1 << 20);
    const text = /^\{\s*"receipt_text"\s*:/.exec(new TextDecoder().decode(probe.subarray(0, 64)));
    if (text) {
      const obj = parseCut(cur.cutValue().bytes);
      const t = obj instanceof Map ? obj.get("receipt_text") : undefined;
      if (typeof t !== "string") throw new ScanTrouble("input.receipt_text is not a string");
      found = { digests: null, notObject: false, range: [0, 0], embedded: t };
      return;
    }
    const r = await scanValue(cur, visitor);
    found = { ...r, range: [start, cur.offset], embedded: null };
  });
  if (found === null) throw new ScanTrouble("the vector file has no input");
  return found;
}

async function scanValue(cur: ByteCursor, visitor: ReceiptVisitor): Promise<Omit<ScanResult, "range">> {
  const sink = new CanonicalSink();
  if (cur.peek() !== 0x7b) {
    // Not an object: parse it to be sure it is JSON at all; the caller reports.
    parseCut(cur.cutValue().bytes);
    return { digests: null, notObject: true };
  }
  sink.text("{");
  const top = new KeyOrder(sink);
  await eachMember(cur, async (key) => {
    top.next(key);
    const listKey = STREAMED[key];
    if (listKey !== undefined && cur.peek() === 0x7b) {
      visitor.open(key);
      sink.text("{");
      const inner = new KeyOrder(sink);
      await eachMember(cur, async (k) => {
        inner.next(k);
        if (k === listKey && cur.peek() === 0x5b) {
          visitor.openList(key);
          sink.text("[");
          let first = true;
          const raw = key === "journal" ? visitor.rawJournalRow?.bind(visitor) : undefined;
          await eachElement(cur, () => {
            if (!first) sink.text(",");
            first = false;
            if (raw && cur.peek() === 0x7b) {
              // read where it lies in the cursor's buffer (no view made per row)
              cur.fillWindow(FAST_ROW_WINDOW);
              const at = cur.position;
              const end = raw(cur.buffer, at, cur.filled);
              if (end >= 0) {
                sink.bytes(cur.buffer, at, end);
                cur.advance(end - at);
                return;
              }
            }
            if (key === "journal") {
              journalRow(cur, sink, visitor, raw);
              return;
            }
            const v = parseCut(cur.cutValue().bytes);
            sink.text(canonical(v));
            visitor.element(key, v);
          });
          sink.text("]");
        } else {
          const v = parseCut(cur.cutValue().bytes);
          sink.text(canonical(v));
          visitor.member(key, k, v);
        }
      });
      sink.text("}");
    } else {
      const v = parseCut(cur.cutValue().bytes);
      sink.text(canonical(v));
      visitor.top(key, v);
    }
  });
  sink.text("}");
  const digests = sink.digests();
  return { digests: sink.sorted ? digests : null, notObject: false };
}

/**
 * One element of the journal's rows, as long as a journal row may be
 * (JOURNAL_MAX_ROW_BYTES, what `verify run` embeds). A long one is read
 * with its large values kept as bytes (pyjson/row.ts parseRowBytes: what
 * `json.loads` accepts, nothing else) and its canonical text streamed from
 * them, so a huge row is never one string or a tree. The visitor is done
 * with it before the cursor moves; a row whose values the binding reads
 * (endpoints, extensions) is given as a tree.
 */
function journalRow(cur: ByteCursor, sink: CanonicalSink, visitor: ReceiptVisitor, raw: ReceiptVisitor["rawJournalRow"]): void {
  const limit = cur.limit;
  cur.limit = JOURNAL_MAX_ROW_BYTES;
  let bytes: Uint8Array;
  try {
    bytes = cur.cutValue().bytes;
  } finally {
    cur.limit = limit;
  }
  if (raw !== undefined && bytes.length > FAST_ROW_WINDOW && bytes.length <= FAST_ROW_MAX && bytes[0] === 0x7b) {
    // longer than the window the fast reader was given: given again, cut to the row
    const end = raw(bytes, 0, bytes.length);
    if (end >= 0) {
      // the reader took the row (and counted it): it is the whole cut
      if (end !== bytes.length) throw new Error("run receipt: the fast row reader took part of a journal row");
      sink.bytes(bytes, 0, end);
      return;
    }
  }
  let v = bytes.length >= BYTE_PATH_MIN ? parseLongCut(bytes) : parseCut(bytes);
  if (v instanceof Map && holdsRaw(v)) {
    const event = v.get("event");
    if (event === "agent_spawned" || event === "loaded_extension_set") v = parseCut(bytes);
  }
  if (v instanceof Map && holdsRaw(v)) writeParts(canonicalParts(v), (piece) => sink.piece(piece));
  else sink.text(canonical(v));
  visitor.element("journal", v);
}

/** parseCut of a long value, its large members kept as bytes (views of `bytes`). */
function parseLongCut(bytes: Uint8Array): PyValue {
  if (!isUtf8(bytes)) throw new ScanTrouble("invalid UTF-8");
  try {
    return parseRowBytes(bytes, RAW_MEMBER_MIN, RAW_STRING_MIN);
  } catch {
    throw new ScanTrouble("invalid JSON value");
  }
}

/** Values longer than this are re-canonicalised member by member, not parsed whole. */
const WHOLE_VALUE_LIMIT = 1 << 20;

/**
 * SHA-256 of CJ of the (already validated) JSON document in `input`, for a
 * receipt whose keys are not in canonical order (an indent-1 session
 * receipt): objects larger than 1 MiB are walked member by member (keys
 * sorted, last duplicate wins), arrays element by element, so memory stays
 * bounded by the largest small value plus one offset pair per key.
 */
export async function canonicalDigestsOfFile(input: OpenInput, range: [number, number]): Promise<ReceiptDigests> {
  // the scan read the journal's rows to their limit: so does this second read
  const cur = new ByteCursor(input, 0, JOURNAL_MAX_ROW_BYTES);
  const hasher = new Bun.CryptoHasher("sha256");
  let pending = "";
  const out = (s: string) => {
    pending += s;
    if (pending.length > 1 << 16) {
      hasher.update(pending);
      pending = "";
    }
  };
  const turns = new TurnPacer(50, 64);
  const emit = async (start: number, end: number): Promise<void> => {
    cur.seek(start);
    const c = cur.peek();
    if (end - start <= WHOLE_VALUE_LIMIT || (c !== 0x7b && c !== 0x5b)) {
      out(canonical(parseCut(cur.cutValue().bytes)));
      return;
    }
    if (c === 0x5b) {
      const spans: [number, number][] = [];
      await eachElement(cur, () => {
        const s = cur.offset;
        cur.cutValue();
        spans.push([s, cur.offset]);
      });
      out("[");
      for (let i = 0; i < spans.length; i++) {
        if (i > 0) out(",");
        await emit(spans[i]![0], spans[i]![1]);
        if (turns.due()) await nextTurn();
      }
      out("]");
      return;
    }
    const members = new Map<string, [number, number]>();
    await eachMember(cur, (key) => {
      const s = cur.offset;
      cur.cutValue();
      members.set(key, [s, cur.offset]);
    });
    out("{");
    const keys = [...members.keys()].sort(compareCodePoints);
    for (let i = 0; i < keys.length; i++) {
      out((i > 0 ? "," : "") + encodeString(keys[i]!) + ":");
      const [s, e] = members.get(keys[i]!)!;
      await emit(s, e);
    }
    out("}");
  };
  await emit(range[0], range[1]);
  if (pending) hasher.update(pending);
  return finish(hasher);
}

export { isPyObject, ScanTrouble };
