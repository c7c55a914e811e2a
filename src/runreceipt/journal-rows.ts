import { statSync } from "node:fs";
import { copyTo, KeptSpan, LBRACE, LF, RBRACE, tokenIs } from "../codec/bytes.ts";
import { CanonicalWriter } from "../codec/canonical.ts";
import { indexRow, KeyTable, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import { InputError, RefusalError } from "../errors/index.ts";
import { JOURNAL_MAX_ROW_BYTES, openInput } from "../fsutil/input.ts";
import { isRemotePath } from "../storage/ref.ts";
import { claimedLines, contentEnd, lineFeedsIn, physicalLines } from "../fsutil/lines.ts";
import { GrowthCollector, nextTurn, TurnPacer } from "../fsutil/turn.ts";
import { EventChainWalker } from "../journal/chain.ts";
import { verifyJournalFast } from "../journal/fast/engine.ts";
import type { RowTextSink } from "../journal/fast/range.ts";
import { RUN_ROW_KEY_NAMES, RunKey } from "../journal/row-keys.ts";
import { canonical, canonicalParts, holdsRaw, writeParts } from "../pyjson/encode.ts";
import { parse } from "../pyjson/parse.ts";
import { pyRepr } from "../pyjson/python.ts";
import { PyNum, type PyObject, type PyValue } from "../pyjson/types.ts";
import { ENDPOINT_EVENT, ENDPOINT_KEYS, EndpointSet, EXTENSIONS_EVENT, extensionsOf } from "./binding.ts";
import { RowLinks } from "./fastrow.ts";
import { strictObject } from "./strict-lines.ts";

/**
 * The journal a run receipt embeds, streamed so that neither the rows nor
 * the receipt's text is ever held whole (a receipt is about the size of
 * its journal). A journal whose every line is one row is read once
 * (`verifiedInOnePass`: the verifier hands on each row as it verifies it,
 * the row count, which the receipt states before its rows, counted from
 * the lines first); any other, or one that does not verify, in two passes:
 *
 *  1. `journalFacts`: the fast verifier (src/journal/fast: the exact
 *     verifier's verdict) says the chain is clean, and gives the row count
 *     and head the receipt states before its rows. A journal it does not
 *     find clean is walked by the exact strict scan, which refuses it with
 *     the message it always gave (the first bad line, an empty run, the
 *     chain's failure).
 *  2. `embedJournalRows`: every row again, to the same snapshot, each
 *     written as embedded (its canonical text without `ts`/`elapsed_s`). A
 *     row in Python's writer spelling is written from the codec's index
 *     (src/codec/canonical.ts); any other row is parsed by the strict scan
 *     and encoded, a huge one with its large values kept as bytes. The
 *     rows' links are checked against pass 1's count and head: a journal
 *     rewritten between the passes is `journal_changed`, nothing written.
 *
 * Rows may be as long as the journal's own limit (JOURNAL_MAX_ROW_BYTES),
 * as every verb of a run reads them.
 */

export interface JournalFacts {
  /** Rows (objects) in the snapshot. */
  count: number;
  /** The last row's event_hash. */
  head: string;
  /** The bytes both passes read. */
  snapshot: number;
}

export type Refuse = (line: number, what: string) => RefusalError;

/** Where the embedded rows go (null: pass 2 only checks them). */
export interface RowSink {
  /** Bytes mem[s, e) of one row's text, or the next piece of it. */
  bytes(mem: Uint8Array, s: number, e: number): void;
  text(t: string): void;
}

const partial = "a receipt is never signed over a partial journal";
const shape = "a receipt is never signed over a malformed journal";

function refusal(runId: string, what: string): RefusalError {
  return new RefusalError("run_receipt_refused", `refusing to sign run ${pyRepr(runId)}: ${what}`, { run_id: runId });
}

/** The refusal for a line the strict scan cannot use. */
function lineRefusal(runId: string): Refuse {
  return (n, what) => refusal(runId, `journal line ${n} ${what}; ${partial}`);
}

/** The strict scan's checks of one row's envelope (spec §1.3): a refusal naming `line`, or nothing. */
function checkShape(row: PyObject, line: number, runId: string): void {
  const idx = row.get("index");
  if (!(idx instanceof PyNum) || idx.isFloat) throw refusal(runId, `journal line ${line} has a missing or non-integer 'index'; ${shape}`);
  const ev = row.get("event");
  if (typeof ev !== "string" || ev === "") throw refusal(runId, `journal line ${line} has a missing or non-string 'event'; ${shape}`);
  if (typeof row.get("prev_hash") !== "string") throw refusal(runId, `journal line ${line} has a missing or non-string 'prev_hash'; ${shape}`);
  for (const k of ["payload_hash", "event_hash"]) {
    const v = row.get(k);
    if (typeof v !== "string" || v === "") throw refusal(runId, `journal line ${line} has an empty '${k}'; ${shape}`);
  }
}

/**
 * Pass 1: the journal's row count and head, or the refusal the strict scan
 * gives it. On this thread alone: a worker's memory (its heap, its kernel,
 * the code it pages in) is not given back when it ends, and would stand
 * under pass 2's peak, past the 64 MB bound on journals of ordinary rows;
 * pass 2 is most of the time.
 */
export async function journalFacts(path: string, runId: string): Promise<JournalFacts> {
  const v = await verifyJournalFast(path, { maxRowBytes: JOURNAL_MAX_ROW_BYTES, threads: 1 });
  if (v.ok && v.count > 0 && v.discarded_line_indices.length === 0 && v.divergent_index === null) return { count: v.count, head: v.head, snapshot: v.snapshot_bytes };
  return exactJournalFacts(path, runId);
}

/** The strict scan and the chain walk (rows not kept): the facts, or the refusal. */
async function exactJournalFacts(path: string, runId: string): Promise<JournalFacts> {
  const snapshot = statSync(path).size;
  const walker = new EventChainWalker();
  const refuse = lineRefusal(runId);
  const turns = new TurnPacer(50, 64);
  let head = "";
  let read = 0;
  for (const pl of physicalLines(path, { endOffset: snapshot, maxLineBytes: JOURNAL_MAX_ROW_BYTES })) {
    const row = strictObject(pl.bytes, pl.index + 1, refuse, true);
    if (row === null) continue;
    checkShape(row, pl.index + 1, runId);
    walker.push(row);
    head = row.get("event_hash") as string;
    read += pl.bytes.length;
    if (read >= TURN_BYTES || turns.due()) {
      read = 0;
      await nextTurn();
    }
  }
  if (walker.count === 0) {
    throw new InputError("journal_unreadable", `no journal events for run ${pyRepr(runId)} at ${path}; an empty run has no identity to attest`, { run_id: runId, path });
  }
  const d = walker.divergence;
  if (d) throw refusal(runId, `journal chain fails at step ${d.index}: ${d.error}`);
  return { count: walker.count, head, snapshot };
}

/** Growth of the resident set after which pass 2 collects garbage. */
const GC_GROWTH = 8 << 20;
/** Lines this long are assembled by the line reader in a buffer of their own. */
const LONG_LINE = 1 << 16;
/** Bytes of rows between two turns of the event loop (and looks at the resident set), whatever the time. */
const TURN_BYTES = 8 << 20;

/** What the binding reads of the rows, gathered while they are embedded. */
export interface EmbeddedRows {
  endpoints: EndpointSet;
  extensions: PyValue[] | null;
}

/**
 * Pass 2: the rows of the snapshot as embedded, in order, to `sink` (with
 * a comma between two), checked as the strict scan checks them; the facts
 * the binding needs of them.
 */
export async function embedJournalRows(path: string, runId: string, facts: JournalFacts, sink: RowSink | null): Promise<EmbeddedRows> {
  const refuse = lineRefusal(runId);
  const endpoints = new EndpointSet();
  const fast = new EmbeddedRowWriter(endpoints);
  let extensions: PyValue[] | null = null;
  const turns = new TurnPacer(50, 64);
  // the values of rows read exactly, and long lines, are garbage the engine collects late
  const gc = new GrowthCollector(GC_GROWTH);
  const links = new Links();
  let n = 0;
  let read = 0;
  /** A row was read as values, or a long line was assembled, since the last turn (short fast rows make next to no garbage). */
  let garbage = false;
  /** The row b[s, e) written from its index, when the fast writer takes it (`decline`: spelling flags it leaves to the exact path). */
  const embedFast = (b: Uint8Array, s: number, e: number, decline: number): boolean => {
    if (!fast.take(b, s, e, decline)) return false;
    if (!links.follows(fast.mem, fast.prevS, fast.prevE, n)) throw changed(path, facts);
    links.keep(fast.mem, fast.hashS, fast.hashE);
    if (sink !== null) {
      if (n > 0) sink.text(",");
      sink.bytes(fast.mem, fast.outStart, fast.outEnd);
    }
    n++;
    read += e - s;
    return true;
  };
  // A line on the read buffer is claimed only when it is one row with no whitespace but the writer's (a CR
  // is a line break of its own, which the exact path splits at), its CR LF ending aside.
  // A line the claim declined for anything but its whitespace is declined again as a whole yielded line:
  // it is not indexed twice.
  let declinedLine = 0;
  let declinedLength = -1;
  const claim = (b: Uint8Array, s: number, e: number, lineNo: number): boolean => {
    const ce = contentEnd(b, s, e);
    if (b[s] !== LBRACE || b[ce - 1] !== RBRACE) return false;
    if (embedFast(b, s, ce, DECLINE | Spell.OddSpace)) return true;
    if (!fast.oddSpaced) {
      declinedLine = lineNo;
      declinedLength = ce - s;
    }
    return false;
  };
  for (const pl of claimedLines(path, { endOffset: facts.snapshot, maxLineBytes: JOURNAL_MAX_ROW_BYTES }, claim)) {
    if (pl === null) {
      // a chunk was read
      if (read >= TURN_BYTES || turns.due()) {
        read = 0;
        if (garbage) gc.poll();
        garbage = false;
        await nextTurn();
      }
      continue;
    }
    const line = pl.index + 1;
    // a long line is a copy the reader assembled: garbage once read
    if (pl.bytes.length >= LONG_LINE) garbage = true;
    const declined = line === declinedLine && pl.bytes.length === declinedLength;
    if (!declined && embedFast(pl.bytes, 0, pl.bytes.length, DECLINE)) continue;
    const row = strictRow(pl.bytes, line, runId, refuse, endpoints);
    if (row === null) continue;
    garbage = true;
    extensions = extensionsOf(row) ?? extensions;
    if (!links.followsText(row.get("prev_hash") as string, n)) throw changed(path, facts);
    links.keepText(row.get("event_hash") as string);
    if (sink !== null) {
      if (n > 0) sink.text(",");
      embedExact(row, sink);
    }
    n++;
    read += pl.bytes.length;
  }
  if (n !== facts.count || !links.lastIs(facts.head)) throw changed(path, facts);
  return { endpoints, extensions };
}

/**
 * The journal's rows counted by its lines, read to its size now (the
 * snapshot): what the receipt states before its rows when every line is
 * one row (verifiedInOnePass holds the verify to it). Null: not a file
 * read in place (a missing one, standard input, a remote object).
 */
export function journalLines(path: string): { count: number; snapshot: number } | null {
  if (isRemotePath(path)) return null;
  const input = openInput(path, { what: "journal" });
  if (input === null || input.stream) {
    input?.close();
    return null;
  }
  try {
    const snapshot = input.size ?? 0;
    const buf = new Uint8Array(1 << 20);
    let count = 0;
    let last = LF;
    for (let pos = 0; pos < snapshot; ) {
      const n = input.read(buf, 0, Math.min(buf.length, snapshot - pos), pos);
      if (n === 0) break;
      count += lineFeedsIn(buf, n);
      last = buf[n - 1]!;
      pos += n;
    }
    // an unterminated final line is a row too
    return { count: count + (last === LF ? 0 : 1), snapshot };
  } finally {
    input.close();
  }
}

/**
 * Both passes in one, for a journal whose every line is one row: the
 * verifier (this thread, src/journal/fast) hands on each row it verified,
 * in order, and it is embedded as pass 2 embeds it, with a comma between
 * two: a row the kernel took as the text it wrote of it (its members but
 * ts and elapsed_s, sorted, compact: the embedded text itself), a row the
 * exact path took as the strict scan reads and encodes it. The facts hold
 * only if the verify then finds the chain clean over exactly `lines.count`
 * rows, the count the receipt stated before them. Null (nothing of what
 * went to `sink` stands): anything else, a blank, unreadable or refused
 * line, a broken chain, which the two passes then name as they always did.
 */
export async function verifiedInOnePass(path: string, runId: string, lines: { count: number; snapshot: number }, sink: RowSink): Promise<{ facts: JournalFacts; rows: EmbeddedRows } | null> {
  const endpoints = new EndpointSet();
  let extensions: PyValue[] | null = null;
  const refuse = lineRefusal(runId);
  let n = 0;
  let declined = false;
  const ix = new RowIndex();
  /**
   * The rows among the texts `b` (a view of u8 from `at`) whose text holds the bytes `event` (a top-level
   * event, or the same bytes in a nested object): each looked at once, as u8[rs, re). The view ends where
   * the texts do: a search runs to its end, not the kernel memory's.
   */
  const rowsHolding = (b: Buffer, at: number, event: Uint8Array, each: (rs: number, re: number) => void): void => {
    let done = 0;
    for (let h = b.indexOf(event); h >= 0; h = b.indexOf(event, h + 1)) {
      if (h < done) continue;
      const rs = b.lastIndexOf(LF, h) + 1;
      const re = b.indexOf(LF, h);
      each(at + rs, at + re);
      done = re;
    }
  };
  const rowText: RowTextSink = {
    kernelText(u8, s, e, rows) {
      let p = s;
      for (let i = 0; i < rows; i++) {
        const q = u8.indexOf(LF, p);
        if (n > 0) sink.text(",");
        sink.bytes(u8, p, q);
        n++;
        p = q + 1;
      }
      // what the binding reads of the rows: an agent_spawned row's endpoint, a loaded_extension_set row's list
      const b = Buffer.from(u8.buffer, u8.byteOffset + s, e - s);
      rowsHolding(b, s, SPAWNED_TEXT, (rs, re) => {
        if (!indexRow(u8, rs, re, ix, EMBED_KEYS) || ix.repeatedName) return;
        const ev = ix.valueOf(RunKey.Event);
        if (ev >= 0 && ix.kind(ev) === Tok.String && tokenIs(u8, ix.start(ev), ix.end(ev), AGENT_SPAWNED)) endpoints.addIndexed(ix, u8, ENDPOINT);
      });
      rowsHolding(b, s, EXTENSIONS_TEXT, (rs, re) => {
        extensions = extensionsOf(parse(new TextDecoder().decode(u8.subarray(rs, re))) as PyObject) ?? extensions;
      });
    },
    exactRow(line, lineNo) {
      if (declined) return;
      try {
        const row = strictRow(line, lineNo + 1, runId, refuse, endpoints);
        if (row === null) {
          declined = true;
          return;
        }
        extensions = extensionsOf(row) ?? extensions;
        if (n > 0) sink.text(",");
        embedExact(row, sink);
        n++;
      } catch (err) {
        if (!(err instanceof RefusalError)) throw err;
        declined = true;
      }
    },
  };
  const v = await verifyJournalFast(path, { endOffset: lines.snapshot, maxRowBytes: JOURNAL_MAX_ROW_BYTES, rowText });
  const clean = v.ok && v.count > 0 && v.discarded_line_indices.length === 0 && v.divergent_index === null && v.snapshot_bytes === lines.snapshot;
  if (declined || !clean || v.count !== lines.count || n !== lines.count) return null;
  return { facts: { count: v.count, head: v.head, snapshot: v.snapshot_bytes }, rows: { endpoints, extensions } };
}

/**
 * The row on `line` (its bytes) as the strict scan reads it, its envelope
 * checked (a refusal naming the line), its endpoint noted; null: a blank line.
 */
function strictRow(bytes: Uint8Array, line: number, runId: string, refuse: Refuse, endpoints: EndpointSet): PyObject | null {
  let row = strictObject(bytes, line, refuse, true);
  if (row === null) return null;
  checkShape(row, line, runId);
  const event = row.get("event");
  // what the binding reads of these rows is read from values, never from bytes kept aside
  if ((event === ENDPOINT_EVENT || event === EXTENSIONS_EVENT) && holdsRaw(row)) row = parse(new TextDecoder().decode(bytes)) as PyObject;
  endpoints.push(row);
  return row;
}

function changed(path: string, facts: JournalFacts): InputError {
  return new InputError("journal_changed", `the journal ${path} changed between the verify and the receipt (${facts.count} rows verified); retry with no writer active`, { path });
}

/** A row as embedded (its canonical text without ts/elapsed_s), from its value. */
function embedExact(row: PyObject, sink: RowSink): void {
  const embedded = new Map(row);
  embedded.delete("ts");
  embedded.delete("elapsed_s");
  // a huge row's large values stream from their bytes (never one string)
  if (holdsRaw(embedded)) writeParts(canonicalParts(embedded), (piece) => (typeof piece === "string" ? sink.text(piece) : sink.bytes(piece, 0, piece.length)));
  else sink.text(canonical(embedded));
}

/** The chain's links as pass 2 reads them: each row's prev_hash is the row before's event_hash. */
class Links {
  private readonly last = new KeptSpan();
  private readonly enc = new TextEncoder();

  /** Row n's prev_hash mem[s, e) (a string token's body) follows the last event_hash (row 0: anything, pass 1 checked it). */
  follows(mem: Uint8Array, s: number, e: number, n: number): boolean {
    return n === 0 || this.last.equals(mem, s, e);
  }

  followsText(prev: string, n: number): boolean {
    const b = this.enc.encode(prev);
    return this.follows(b, 0, b.length, n);
  }

  keep(mem: Uint8Array, s: number, e: number): void {
    this.last.keep(mem, s, e);
  }

  keepText(hash: string): void {
    const b = this.enc.encode(hash);
    this.last.keep(b, 0, b.length);
  }

  lastIs(head: string): boolean {
    const b = this.enc.encode(head);
    return this.last.equals(b, 0, b.length);
  }
}

/**
 * Rows longer than this take the exact path, which keeps their large
 * values as bytes: a fast row is copied into the writer's memory with room
 * for its text, and its index holds every token (a dense row's tape is
 * several times the row).
 */
const FAST_ROW_MAX = 4 << 20;
/** What a row written from the index may not hold: what is not Python's spelling (the writer copies tokens). */
const DECLINE = Spell.Utf8 | Spell.NotPython;
/** The run row's named keys, and the endpoint members the binding reads of an `agent_spawned` row. */
const EMBED_KEYS = new KeyTable([...RUN_ROW_KEY_NAMES, ...ENDPOINT_KEYS]);
const idOf = (name: string): number => RUN_ROW_KEY_NAMES.indexOf(name) + 1;
const TS = idOf("ts");
const ELAPSED = idOf("elapsed_s");
const INDEX = idOf("index");
const PAYLOAD_HASH = idOf("payload_hash");
const ENDPOINT = RUN_ROW_KEY_NAMES.length + 1;
const AGENT_SPAWNED = new TextEncoder().encode(ENDPOINT_EVENT);
/** The top-level event of a row's text as embedded (canonical: no space), or the same bytes nested in it. */
const SPAWNED_TEXT = new TextEncoder().encode(`"event":"${ENDPOINT_EVENT}"`);
const EXTENSIONS_TEXT = new TextEncoder().encode(`"event":"${EXTENSIONS_EVENT}"`);
/** Rows the binding reads as values (its extension list): the exact path takes them. */
const LOADED_EXTENSION_SET = new TextEncoder().encode(EXTENSIONS_EVENT);

/**
 * A row as embedded, written from the codec's index of it when it is in
 * Python's writer spelling and the strict scan's checks hold: the row is
 * copied into `mem`, its text written after it at [outStart, outEnd).
 * False: the exact path takes the row (and says why it is refused, if it is).
 */
class EmbeddedRowWriter extends RowLinks {
  /** `endpoints`: where an `agent_spawned` row's endpoint goes, once the row is taken. */
  constructor(private readonly endpoints: EndpointSet) {
    super();
  }

  private readonly ix = new RowIndex();
  mem = new Uint8Array(1 << 16);
  private readonly cw = new CanonicalWriter(this.ix, this.mem, new DataView(this.mem.buffer));
  outStart = 0;
  outEnd = 0;

  /** The last row take declined was declined for whitespace (OddSpace, when asked to) alone, among its spelling flags. */
  oddSpaced = false;

  /** The row b[s, e); `decline`: the spelling flags that leave it to the exact path. */
  take(b: Uint8Array, s: number, e: number, decline: number): boolean {
    this.oddSpaced = false;
    const n = e - s;
    if (n > FAST_ROW_MAX || n < 2) return false;
    if (2 * n + 64 > this.mem.length) {
      this.mem = new Uint8Array(Math.max(2 * this.mem.length, 2 * n + 64));
      this.cw.mem = this.mem;
      this.cw.dv = new DataView(this.mem.buffer);
    }
    const mem = this.mem;
    const ix = this.ix;
    copyTo(b, s, e, mem, 0);
    if (!indexRow(mem, 0, n, ix, EMBED_KEYS) || ix.repeatedName) return false;
    const declined = ix.flags(0) & decline;
    if (declined !== 0) {
      this.oddSpaced = declined === Spell.OddSpace;
      return false;
    }
    const index = ix.valueOf(INDEX);
    const event = ix.valueOf(RunKey.Event);
    const prev = ix.valueOf(RunKey.PrevHash);
    const hash = ix.valueOf(RunKey.EventHash);
    const payloadHash = ix.valueOf(PAYLOAD_HASH);
    if (index < 0 || ix.kind(index) !== Tok.Int) return false;
    if (!nonEmptyString(ix, event) || !nonEmptyString(ix, hash) || !nonEmptyString(ix, payloadHash)) return false;
    if (prev < 0 || ix.kind(prev) !== Tok.String) return false;
    if (tokenIs(mem, ix.start(event), ix.end(event), LOADED_EXTENSION_SET)) return false;
    const cw = this.cw;
    const order = cw.segment(0, ix.members);
    let m = 0;
    for (let k = 0; k < ix.members; k++) {
      const id = ix.keyId[k]!;
      if (id === TS || id === ELAPSED) continue;
      // the floats the digits leave open are decided for the values written only (ts, full precision, is dropped)
      const v = ix.member[k]! + 1;
      if ((ix.flags(v) & Spell.FloatUndecided) !== 0 && (ix.spelling(v) & Spell.NotPython) !== 0) return false;
      order[m++] = ix.member[k]!;
    }
    if (!cw.sortKeys(0, m)) return false;
    const end = cw.members(0, m, n);
    if (end < 0) return false;
    this.outStart = n;
    this.outEnd = end;
    this.setLinks(ix, prev, hash);
    // escapes in a link are the exact path's to compare (as values)
    if ((ix.flags(prev) & Spell.Escaped) !== 0 || (ix.flags(hash) & Spell.Escaped) !== 0) return false;
    if (tokenIs(mem, ix.start(event), ix.end(event), AGENT_SPAWNED)) this.endpoints.addIndexed(ix, mem, ENDPOINT);
    return true;
  }
}

function nonEmptyString(ix: RowIndex, t: number): boolean {
  return t >= 0 && ix.kind(t) === Tok.String && ix.end(t) - ix.start(t) > 2;
}
