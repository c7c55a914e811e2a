import { hex4, lowerHex4 } from "../hex.ts";
import { isFloatRepr } from "../pyjson/float.ts";
import { INT_MAX_STR_DIGITS } from "../pyjson/parse.ts";
import { compiledOnce } from "../wasm/host.ts";
import {
  asciiText,
  BACKSLASH,
  COLON,
  COMMA,
  doubled,
  hasShortEscape,
  LBRACE,
  LBRACKET,
  MAX_DEPTH,
  MINUS,
  QUOTE,
  RBRACE,
  RBRACKET,
  SHORT_ESCAPE_VALUE,
  SPACE,
  specialBytes,
  STR_CLASS,
} from "./bytes.ts";
import { KERNEL_WASM_BASE64 as ROW_SCAN_WASM_BASE64 } from "./row-index-wasm.ts";

/**
 * The row index: one scan of a JSON row into a tape of its tokens, which
 * every fast reader of a row consumes instead of scanning the bytes again
 * (etcd's one WAL decoder, msgpack's one decode loop). A token is four
 * int32s on the tape: kind and spelling flags, start, end, and the tape
 * position just past it (for a container: past its whole subtree, so a
 * consumer skips a value in one step). A container's flags are the OR of
 * everything inside it, so "is this value already in the spelling I need"
 * is one mask test, and a value that is can be copied as bytes.
 *
 * The scan accepts exactly the JSON that Python's `json.loads` accepts,
 * minus what it declines: nesting deeper than MAX_DEPTH, an integer longer
 * than Python converts, raw control bytes or invalid UTF-8 in a string.
 * It declines (returns false) rather than judging: the exact reference
 * (pyjson) decides every row the codec does not take, with Python's error.
 *
 * Two scanners write the tape, word for word the same and declining the
 * same rows: the WebAssembly one (row-index.wat) and the JavaScript Scanner
 * below; indexObjectAt picks one by the row's length.
 */

/** Token kinds: the low four bits of a token's first word (numbered from 1 in this order; row-index.wat writes the numbers). */
export const enum Tok {
  Object = 1,
  Array,
  /** An object key (its span includes the quotes). */
  Key,
  String,
  Int,
  Float,
  /** true, false, null */
  Literal,
  /** NaN, Infinity, -Infinity (Python writes them; JSON proper has no such tokens) */
  NonFinite,
}

export const KIND_MASK = 15;

/** Spelling flags: a token's own, OR-ed into every container around it. */
export const enum Spell {
  /** A string or key with a backslash escape. */
  Escaped = 1 << 4,
  /** Raw UTF-8 (bytes >= 0x80) in a string or key: what `ensure_ascii=False` writes. */
  Utf8 = 1 << 5,
  /**
   * Spelled unlike Python's `json.dumps` (ensure_ascii) would: `\/`, an
   * uppercase or needless `\u` escape, a raw DEL, a number that is not
   * Python's repr (`1.50`, `1E5`, `-0`, `1e400`).
   */
  NotPython = 1 << 6,
  /** An object whose keys are not strictly ascending in Python's order, by code points (compareSpans; a duplicate key included). */
  Unsorted = 1 << 7,
  /** A `,` or `:` separator with nothing after it (the compact spelling). */
  Tight = 1 << 8,
  /** A `, ` or `: ` separator (json.dumps' default spelling). */
  Spaced = 1 << 9,
  /** Any other whitespace between tokens. */
  OddSpace = 1 << 10,
  /** A key with an escape or raw UTF-8: its bytes are not its text (a consumer that finds names by their bytes looks at it). */
  KeyNotPlain = 1 << 11,
  /** NaN, Infinity or -Infinity somewhere (Python writes them; strict JSON consumers refuse them). */
  NonFinite = 1 << 12,
  /**
   * A float whose digits alone do not tell whether it is Python's repr (17
   * significant digits, exponent form): decided only when a consumer asks
   * (`RowIndex.spelling`), since most never need it (a row's `ts` is one,
   * and no hash covers it).
   */
  FloatUndecided = 1 << 13,
}

/** Flags under which a value's bytes are already its compact, sorted canonical JSON (the hash pre-image spelling). */
export const NOT_COMPACT_CANONICAL = Spell.Utf8 | Spell.NotPython | Spell.Unsorted | Spell.Spaced | Spell.OddSpace | Spell.FloatUndecided;
/** Flags under which a value's bytes are what Python's default `json.dumps` writes (keys in any order). */
export const NOT_PYTHON_DEFAULT = Spell.Utf8 | Spell.NotPython | Spell.Tight | Spell.OddSpace | Spell.FloatUndecided;
/** Flags under which a value's bytes are json.dumps' default spacing (`", "`, `": "`, no other whitespace). */
export const NOT_DEFAULT_SPACING = Spell.Tight | Spell.OddSpace;
/** Flags under which a string's bytes are not its text: an escape, raw UTF-8, a raw DEL (without them it is printable ASCII). */
export const NOT_PLAIN_TEXT = Spell.Escaped | Spell.Utf8 | Spell.NotPython;


/**
 * Names recognised among a row's top-level keys, as small ids (1-based, in
 * the order given; 0 = not a named key). A journal kind passes its table
 * (the run journal's envelope keys, the step journal's keys) as a value.
 */
export class KeyTable {
  readonly names: readonly string[];
  readonly size: number;
  /** The names' bytes back to back; name id's at [off[id], off[id] + len[id]). */
  private readonly flat: Uint8Array;
  private readonly off: Int32Array;
  private readonly len: Int32Array;
  /** Open-addressed ids by (length, first byte, last byte); 0 = empty slot. */
  private readonly table = new Int32Array(PROBE_SLOTS);

  /** A table holds fewer names than this (its probe slots stay at most half full). */
  static readonly MAX_NAMES = 128;

  constructor(names: readonly string[]) {
    if (names.length >= KeyTable.MAX_NAMES) throw new Error("KeyTable: too many names");
    this.names = names;
    this.size = names.length;
    const enc = new TextEncoder();
    const bytes = names.map((n) => enc.encode(n));
    this.flat = new Uint8Array(bytes.reduce((n, k) => n + k.length, 0));
    this.off = new Int32Array(names.length + 1);
    this.len = new Int32Array(names.length + 1);
    let o = 0;
    bytes.forEach((k, i) => {
      this.flat.set(k, o);
      this.off[i + 1] = o;
      this.len[i + 1] = k.length;
      o += k.length;
      let h = probeKey(k, 0, k.length);
      while (this.table[h] !== 0) h = (h + 1) & (PROBE_SLOTS - 1);
      this.table[h] = i + 1;
    });
  }

  /** The id of the key bytes b[s, e) (without quotes), or 0. */
  idOf(b: Uint8Array, s: number, e: number): number {
    const n = e - s;
    if (n === 0) return 0;
    const table = this.table;
    const len = this.len;
    for (let h = (n * 31 + b[s]! * 7 + b[e - 1]!) & (PROBE_SLOTS - 1); ; h = (h + 1) & (PROBE_SLOTS - 1)) {
      const id = table[h]!;
      if (id === 0) return 0;
      if (len[id] !== n) continue;
      const flat = this.flat;
      let o = this.off[id]!;
      let i = s;
      while (i < e && b[i] === flat[o]) {
        i++;
        o++;
      }
      if (i === e) return id;
    }
  }

  /**
   * Write this table where the row scanner module (row-index.wat) reads
   * it: the probe slots at `probe`, per id its name's offset (from `bytes`)
   * and length at `names`, the names' bytes at `bytes`, before `end`.
   * False when the names do not fit.
   */
  writeTo(u8: Uint8Array, probe: number, names: number, bytes: number, end: number): boolean {
    if (bytes + this.flat.length > end) return false;
    for (let h = 0; h < PROBE_SLOTS; h++) u8[probe + h] = this.table[h]!;
    for (let id = 1; id <= this.size; id++) {
      const o = names + 4 * id;
      u8[o] = this.off[id]! & 0xff;
      u8[o + 1] = this.off[id]! >> 8;
      u8[o + 2] = this.len[id]! & 0xff;
      u8[o + 3] = this.len[id]! >> 8;
    }
    u8.set(this.flat, bytes);
    return true;
  }

  /** The bytes of the key with this id. */
  bytesOf(id: number): Uint8Array {
    return this.flat.subarray(this.off[id]!, this.off[id]! + this.len[id]!);
  }
}

const PROBE_SLOTS = 256;

function probeKey(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  return n === 0 ? 0 : (n * 31 + b[s]! * 7 + b[e - 1]!) & (PROBE_SLOTS - 1);
}

const NO_KEYS = new KeyTable([]);

export class RowIndex {
  /**
   * Four int32s per token: kind | flags, start, end, next. Valid until this
   * index indexes another row (it may then be a different array: a view of
   * the WebAssembly scanner's memory, or a grown one).
   */
  tape = new Int32Array(4 * 256);
  /** Tokens on the tape. */
  count = 0;
  /** The bytes the last row was indexed from, and the row's bounds in them. */
  buf: Uint8Array = new Uint8Array(0);
  rowStart = 0;
  rowEnd = 0;
  /** Top-level members: tape position of each key (its value is the next token). */
  member = new Int32Array(64);
  members = 0;
  /** Per top-level member, its key's id in the key table (0: not a named key). */
  keyId = new Int32Array(64);
  /** Per named key id, the member position holding it (the last one when repeated, as json.loads keeps), or -1. */
  slot = new Int32Array(1);
  /** Some named key appears more than once at the top level. */
  repeatedName = false;
  keys: KeyTable = NO_KEYS;
  /**
   * The tape holds the row's top level only (indexRow's `topLevel` on a long
   * row): the root, its keys and their values, a container value as one
   * token whose flags still cover everything inside it and whose `next` is
   * the token after it.
   */
  topLevel = false;
  /** This index's own instance of the WebAssembly scanner (its tape is a view of that memory), once used. */
  wasm: WasmScanner | undefined = undefined;
  /** The tape is the one that instance wrote (the row is in its memory). */
  wasmTape = false;

  /**
   * Done with this index for now: its WebAssembly scanner goes back for the
   * next index to use (what it indexed is then not to be read). An index
   * made per operation (a diff's side) releases it when the operation ends:
   * each scanner holds a WebAssembly memory, and the engine runs a full
   * collection about every third memory made, so a long-lived process that
   * diffs many journals (the test suite) did one every diff or two.
   */
  release(): void {
    const sc = this.wasm;
    if (sc === undefined) return;
    this.wasm = undefined;
    this.wasmTape = false;
    this.tape = new Int32Array(4 * 256);
    this.count = 0;
    // one a long row grew is let go, not kept
    if (idleScanners.length < IDLE_SCANNERS_MAX && sc.bytes <= IDLE_SCANNER_BYTES) idleScanners.push(sc);
  }

  /** Kind of token t. */
  kind(t: number): Tok {
    return (this.tape[4 * t]! & KIND_MASK) as Tok;
  }
  /** Spelling flags of token t (with everything inside it, for a container). */
  flags(t: number): number {
    return this.tape[4 * t]! & ~KIND_MASK;
  }
  start(t: number): number {
    return this.tape[4 * t + 1]!;
  }
  end(t: number): number {
    return this.tape[4 * t + 2]!;
  }
  /** The token after t and everything inside it. */
  next(t: number): number {
    return this.tape[4 * t + 3]!;
  }
  /** The root object's flags: the whole row's spelling. */
  get rowFlags(): number {
    return this.flags(0);
  }
  /** Tape position of the value of the named key `id`, or -1. */
  valueOf(id: number): number {
    const m = this.slot[id]!;
    return m < 0 ? -1 : this.member[m]! + 1;
  }
  /** Tape position of member m's value. */
  memberValue(m: number): number {
    return this.member[m]! + 1;
  }
  /**
   * Token t's flags with every float inside it decided (no FloatUndecided
   * left): the flags a consumer that cares about number spelling reads.
   */
  spelling(t: number): number {
    const tape = this.tape;
    if ((tape[4 * t]! & Spell.FloatUndecided) === 0) return tape[4 * t]! & ~KIND_MASK;
    const end = tape[4 * t + 3]!;
    const NUM = Spell.FloatUndecided | Spell.NotPython;
    for (let u = t; u < end; u++) {
      const w = tape[4 * u]!;
      if ((w & Spell.FloatUndecided) === 0) continue;
      const k = w & KIND_MASK;
      if (k === Tok.Float) {
        tape[4 * u] = (w & ~Spell.FloatUndecided) | (isPythonFloat(this.buf, tape[4 * u + 1]!, tape[4 * u + 2]!) ? 0 : Spell.NotPython);
      } else if (this.topLevel && tape[4 * u + 3] === u + 1) {
        // a container whose inside is not on a top-level tape: its floats decided from a full index of it alone
        tape[4 * u] = (w & ~NUM) | (containerSpelling(this.buf, tape[4 * u + 1]!, tape[4 * u + 2]!) & NUM);
      }
    }
    // containers from the innermost out: the number-spelling bits again from their
    // children's (a container has no number spelling of its own; one with none on
    // the tape keeps what it has)
    for (let u = end - 1; u >= t; u--) {
      const w = tape[4 * u]!;
      const k = w & KIND_MASK;
      if ((k !== Tok.Object && k !== Tok.Array) || tape[4 * u + 3] === u + 1) continue;
      let f = w & ~NUM;
      for (let c = u + 1, ce = tape[4 * u + 3]!; c < ce; c = tape[4 * c + 3]!) f |= tape[4 * c]! & NUM;
      tape[4 * u] = f;
    }
    return tape[4 * t]! & ~KIND_MASK;
  }

  /** The text of a string token whose spelling is plain (no escapes): its bytes between the quotes as Latin-1. */
  plainText(t: number): string {
    return this.latin1(this.start(t) + 1, this.end(t) - 1);
  }

  /** The bytes buf[s, e) as Latin-1 text (a number's lexeme, a plain string's content). */
  latin1(s: number, e: number): string {
    // latin1Slice makes a flat string in one copy (a char-by-char build makes a rope)
    return this.viewsOfBuf().node.toString("latin1", s, e);
  }

  /**
   * Views of `buf` (word loads, Buffer copies and slices), made once per
   * buffer the rows come from and kept per index: a consumer reading rows
   * from two buffers in turn (diff's two journals) makes none per row.
   */
  viewsOfBuf(): BufViews {
    const b = this.buf;
    if (this.viewsFor !== b) {
      this.viewsFor = b;
      this.views = { dv: new DataView(b.buffer, b.byteOffset, b.byteLength), node: Buffer.from(b.buffer, b.byteOffset, b.byteLength) };
    }
    return this.views;
  }

  private viewsFor: Uint8Array | null = null;
  private views: BufViews = { dv: new DataView(new ArrayBuffer(0)), node: Buffer.alloc(0) };
}

interface BufViews {
  dv: DataView;
  node: Buffer;
}

/**
 * Index the JSON object that is the row b[s, e) (whitespace around it
 * allowed, as json.loads allows it). Returns false, leaving the row to the
 * exact path, when the row is not an object or not in what the codec takes.
 */
export function indexRow(b: Uint8Array, s: number, e: number, ix: RowIndex, keys: KeyTable = NO_KEYS, topLevel = false): boolean {
  const p = skipAnyWs(b, s, e);
  const end = indexObjectAt(b, p, e, ix, keys, topLevel);
  if (end < 0) return false;
  ix.rowStart = s;
  ix.rowEnd = e;
  return skipAnyWs(b, end, e) === e;
}

/**
 * Index the JSON object starting at b[s] (no whitespace before it), reading
 * no further than `limit`: returns the end of the object, or -1 when it is
 * not one the codec takes. For rows embedded in a larger document.
 */
export function indexObjectAt(b: Uint8Array, s: number, limit: number, ix: RowIndex, keys: KeyTable = NO_KEYS, topLevel = false): number {
  // Both scanners write the same tape. The WebAssembly one scans faster but
  // each call has a fixed cost (the row copied into its memory, the call,
  // the members read back) that a short row's scan does not earn back, so
  // short rows stay with the JavaScript one.
  const n = limit - s;
  // A consumer of the top level only (`topLevel`): a huge row gets a full tape
  // from the module only within a budget of memory; a row with more tokens (a
  // million numbers: tens of MB of tape) is read where it lies, with a tape
  // of its top level.
  if (topLevel && n >= TOP_LEVEL_FROM) return indexObjectAtWasm(b, s, limit, ix, keys, true);
  return n >= WASM_FROM ? indexObjectAtWasm(b, s, limit, ix, keys) : indexObjectAtJs(b, s, limit, ix, keys);
}

/** Rows (bounds given to indexObjectAt) at least this long go to the WebAssembly scanner. */
const WASM_FROM = 256;
/** Rows at least this long, indexed for their top level only, get a top-level tape (see indexObjectAt). */
export const TOP_LEVEL_FROM = 1 << 20;

/** Reset ix for a scan of b[s, limit); false when b[s] cannot start an object. */
function begin(b: Uint8Array, s: number, limit: number, ix: RowIndex, keys: KeyTable): boolean {
  ix.buf = b;
  ix.rowStart = s;
  ix.rowEnd = limit;
  ix.count = 0;
  ix.members = 0;
  ix.repeatedName = false;
  ix.topLevel = false;
  ix.wasmTape = false;
  if (ix.keys !== keys || ix.slot.length !== keys.size + 1) {
    ix.keys = keys;
    ix.slot = new Int32Array(keys.size + 1);
  }
  ix.slot.fill(-1);
  return s < limit && b[s] === LBRACE;
}

/** indexObjectAt by the JavaScript scanner. */
export function indexObjectAtJs(b: Uint8Array, s: number, limit: number, ix: RowIndex, keys: KeyTable = NO_KEYS, topLevel = false): number {
  if (!begin(b, s, limit, ix, keys)) return -1;
  ix.topLevel = topLevel;
  const sc = scanner.over(b, limit, ix, topLevel);
  const end = sc.object(s, 1, true);
  if (end >= 0) ix.rowEnd = end;
  return end;
}

/** The full index a top-level tape's container is decided from (RowIndex.spelling). */
const aside = new RowIndex();

/** `spelling` of the container value b[s, e) (which a top-level scan took), from a full index of it alone. */
function containerSpelling(b: Uint8Array, s: number, e: number): number {
  aside.buf = b;
  aside.count = 0;
  aside.members = 0;
  aside.topLevel = false;
  const end = scanner.over(b, e, aside, false).value(s, 1);
  // the top-level scan took these bytes, so the full scan takes them too
  if (end !== e) throw new Error("codec: a container a top-level scan took does not scan again");
  const flags = aside.spelling(0);
  // a huge container's tape is not kept for the next one
  if (aside.tape.length > 1 << 16) aside.tape = new Int32Array(1024);
  return flags;
}

/**
 * indexObjectAt by the WebAssembly scanner (row-index.wat): the same tape,
 * word for word; the top-level members are read off it here. `topLevel`:
 * the tape may take at most TOP_LEVEL_TAPE of the row's length, and a row
 * that needs more gets the JavaScript scanner's top-level tape instead.
 */
export function indexObjectAtWasm(b: Uint8Array, s: number, limit: number, ix: RowIndex, keys: KeyTable = NO_KEYS, topLevel = false): number {
  if (!begin(b, s, limit, ix, keys)) return -1;
  const sc = (ix.wasm ??= idleScanners.pop() ?? new WasmScanner());
  const n = limit - s;
  const end = sc.scan(b, s, limit, ix, keys, topLevel && n >= TOP_LEVEL_FROM ? Math.floor(n * TOP_LEVEL_TAPE) : -1);
  if (sc.bytes > WASM_KEEP_BYTES) {
    // a huge row grew the memory: give it back, keeping the tape
    ix.tape = ix.tape.slice(0, Math.max(4 * ix.count, 1024));
    ix.wasm = undefined;
  }
  if (end === WASM_TRAPPED) {
    ix.tape = new Int32Array(1024);
    return indexObjectAtJs(b, s, limit, ix, keys, topLevel);
  }
  if (end < 0) return -1;
  ix.rowEnd = end;
  ix.wasmTape = true;
  return end;
}

/** Where renderJsonOf appends its bytes (pyjson's ByteSink). */
export interface OutBytes {
  buf: Uint8Array;
  len: number;
  reserve(n: number): void;
}

/**
 * Append the row ix indexed as `renderJson(row, 2)` prints the parsed row,
 * every line indented by `pad` more spaces (`inline`: on one line, as
 * `renderJson(row, null)` prints it), rendered by the module from the tape
 * it wrote (row-index.wat `render`). False, `out` unchanged: the tape is
 * not the module's (the row was indexed another way), or the row holds what
 * the renderer leaves to the exact path (a repeated key, an escaped key
 * among keys out of order beside raw UTF-8 or a spelling Python does not
 * write, an object with keys out of order and more than 1024 of them).
 */
export function renderJsonOf(ix: RowIndex, pad: number, inline: boolean, out: OutBytes): boolean {
  return ix.wasmTape && ix.wasm !== undefined && ix.wasm.render(ix, pad, inline, out);
}

/** Bytes between the row's sentinel and the tape: what the module's word loads may read past it. */
const WASM_SLACK = 16;
/** Top-level members the module writes out; a row with more has them read off its tape. */
const WASM_MEMBERS = 4096;
/** The row area's first size (it doubles to fit a longer row). */
const WASM_MIN_ROW = 1 << 16;
/** Room for this many tokens is made before a scan (the module grows its memory for more). */
const WASM_MIN_TOKENS = 256;
/** A scanner whose memory grew past this (a huge row) is dropped, so the memory goes back. */
const WASM_KEEP_BYTES = 32 << 20;
/** Released scanners kept for the next index (RowIndex.release). */
const idleScanners: WasmScanner[] = [];
const IDLE_SCANNERS_MAX = 4;
const IDLE_SCANNER_BYTES = 4 << 20;
/** The tape a huge row indexed for its top level may take, as a share of the row's length (a token per 64 bytes on average). */
const TOP_LEVEL_TAPE = 1 / 4;
/** scan()'s answer when the module trapped (its memory could not grow, or the tape went past its budget): the JavaScript scanner decides. */
const WASM_TRAPPED = -3;

const rowScanModule = compiledOnce(ROW_SCAN_WASM_BASE64);

interface RowScanExports {
  memory: WebAssembly.Memory;
  heapBase: WebAssembly.Global;
  /** The deepest container of the last scan (the row's object is 1). */
  deepest: WebAssembly.Global;
  keyProbe: WebAssembly.Global;
  keyName: WebAssembly.Global;
  keyBytes: WebAssembly.Global;
  lexeme: WebAssembly.Global;
  counts: WebAssembly.Global;
  floatRepr(n: number): number;
  scan(p: number, e: number, members: number, tape0: number, bias: number, maxPages: number): number;
  render(out: number, pad: number, inline: number): number;
  useKeys(on: number): void;
}

/**
 * One instance of the module, owned by one RowIndex: the row is copied into
 * its memory, and the index's tape is a view of the memory the module wrote
 * it to (two indexes never share a tape).
 */
class WasmScanner {
  readonly memory: WebAssembly.Memory;
  private readonly x: RowScanExports;
  private readonly base: number;
  /** Where scan() leaves its token and member counts (an index into i32). */
  private readonly counts: number;
  private u8: Uint8Array;
  private i32: Int32Array;
  /** The memory as a Buffer (a copy out of it makes no view object). */
  private node = Buffer.alloc(0);
  /** The key table the module holds, and whether it could take it (else the members' ids are found here). */
  private keys: KeyTable | undefined;
  private keysIn = false;
  /**
   * The layout: the row area's size (it only grows, so the tape's place and
   * the view over it change only when a longer row arrives), the members
   * area after it, the tape after that to the memory's end.
   */
  private rowCap = 0;
  private members0 = 0;
  private tape0 = 0;
  /** The tape: a view of the memory (the RowIndex holds it; no copy). */
  tape = new Int32Array(0);

  constructor() {
    this.x = new WebAssembly.Instance(rowScanModule.get(), {}).exports as unknown as RowScanExports;
    this.memory = this.x.memory;
    this.base = this.x.heapBase.value as number;
    this.counts = (this.x.counts.value as number) >> 2;
    this.u8 = new Uint8Array(0);
    this.i32 = new Int32Array(0);
    this.layout(WASM_MIN_ROW);
  }

  /** The memory's size now. */
  get bytes(): number {
    return this.u8.length;
  }

  /** Lay the memory out for rows up to rowCap bytes (growing it first: if that throws, nothing changed). */
  private layout(rowCap: number): void {
    const members0 = (this.base + rowCap + WASM_SLACK + 15) & ~15;
    const tape0 = members0 + 8 * WASM_MEMBERS;
    this.reserve(tape0 + 16 * WASM_MIN_TOKENS);
    this.rowCap = rowCap;
    this.members0 = members0;
    this.tape0 = tape0;
    this.views();
  }

  /** Grow the memory to at least `need` bytes (if that throws, nothing changed). */
  private reserve(need: number): void {
    const have = this.memory.buffer.byteLength;
    if (need <= have) return;
    this.memory.grow(Math.ceil((need - have) / 65536));
    this.views();
  }

  private views(): void {
    const buf = this.memory.buffer;
    this.node = Buffer.from(buf);
    this.u8 = new Uint8Array(buf);
    this.i32 = new Int32Array(buf);
    this.tape = new Int32Array(buf, this.tape0);
  }

  /**
   * Scan the object at b[s] (before limit) onto ix's tape and members: its
   * end in b, -1, or WASM_TRAPPED. A tape budget (bytes; -1 none) is room
   * made before the scan, which the module may then not grow past (untouched
   * pages cost no memory).
   */
  scan(b: Uint8Array, s: number, limit: number, ix: RowIndex, keys: KeyTable, tapeBudget: number): number {
    if (keys !== this.keys) this.loadKeys(keys);
    const n = limit - s;
    const base = this.base;
    let end: number;
    try {
      if (n > this.rowCap) this.layout(Math.max(n, 2 * this.rowCap));
      let maxPages = 1 << 16;
      if (tapeBudget >= 0) {
        this.reserve(this.tape0 + tapeBudget);
        maxPages = this.memory.buffer.byteLength >>> 16;
      }
      // a Buffer copy from the index's view: no view object made per row
      ix.viewsOfBuf().node.copy(this.u8, base, s, limit);
      end = this.x.scan(base, base + n, this.members0, this.tape0, s - base, maxPages);
    } catch {
      // the memory could not grow (in the module or here)
      if (this.u8.length === 0) this.views();
      return WASM_TRAPPED;
    }
    // a grown memory detaches the views (their length reads 0)
    if (this.u8.length === 0) this.views();
    ix.tape = this.tape;
    if (end < 0) return -1;
    const i32 = this.i32;
    ix.count = i32[this.counts]!;
    const mw = this.members0 >> 2;
    const mn = i32[this.counts + 1]!;
    const tape = this.tape;
    if (mn > WASM_MEMBERS) {
      // the members off the tape: key, value, the next key past the value's subtree
      for (let t = 1, n = ix.count; t < n; t = tape[4 * (t + 1) + 3]!) noteMember(ix, b, t, tape[4 * t + 1]! + 1, tape[4 * t + 2]! - 1);
    } else if (!this.keysIn) {
      for (let m = 0; m < mn; m++) {
        const kt = i32[mw + 2 * m]!;
        noteMember(ix, b, kt, tape[4 * kt + 1]! + 1, tape[4 * kt + 2]! - 1);
      }
    } else {
      if (ix.member.length < mn) {
        let size = ix.member.length;
        while (size < mn) size *= 2;
        ix.member = new Int32Array(size);
        ix.keyId = new Int32Array(size);
      }
      const member = ix.member;
      const keyId = ix.keyId;
      const slot = ix.slot;
      for (let m = 0; m < mn; m++) {
        member[m] = i32[mw + 2 * m]!;
        const id = i32[mw + 2 * m + 1]!;
        keyId[m] = id;
        if (id !== 0) {
          if (slot[id]! >= 0) ix.repeatedName = true;
          slot[id] = m;
        }
      }
      ix.members = mn;
    }
    return end + s - base;
  }

  /** renderJsonOf on the row this scanner last indexed for ix. */
  render(ix: RowIndex, pad: number, inline: boolean, out: OutBytes): boolean {
    const at = (this.tape0 + 16 * ix.count + 15) & ~15;
    // a token's line: its break, indent (2 spaces a level below the row's deepest container), separator; its bytes never grow
    const bound = ix.rowEnd - ix.rowStart + ix.count * (pad + 2 * (this.x.deepest.value as number) + 8) + pad + 64;
    try {
      this.reserve(at + bound);
    } catch {
      return false;
    }
    ix.tape = this.tape;
    const end = this.x.render(at, pad, inline ? 1 : 0);
    if (end < 0) return false;
    const n = end - at;
    out.reserve(n);
    this.node.copy(out.buf, out.len, at, end);
    out.len += n;
    return true;
  }

  /**
   * Whether the float lexeme b[s, e) (at most 47 bytes: the module's LEXEME area holds it and a 0 byte) is Python's
   * repr, by the module's exact integer test (src/codec/float.wat): 1 yes,
   * -1 no, 0 undecided.
   */
  floatRepr(b: Uint8Array, s: number, e: number): number {
    const at = this.x.lexeme.value as number;
    const u8 = this.u8;
    for (let i = s; i < e; i++) u8[at + i - s] = b[i]!;
    u8[at + e - s] = 0;
    return this.x.floatRepr(e - s);
  }

  private loadKeys(keys: KeyTable): void {
    this.keys = keys;
    const written = keys.size > 0 && keys.writeTo(this.u8, this.x.keyProbe.value as number, this.x.keyName.value as number, this.x.keyBytes.value as number, this.x.lexeme.value as number);
    this.keysIn = keys.size === 0 || written;
    this.x.useKeys(written ? 1 : 0);
  }
}


/** Record top-level member kt (its key's text at b[ks, ke)) with its key id. */
function noteMember(ix: RowIndex, b: Uint8Array, kt: number, ks: number, ke: number): void {
  const m = ix.members++;
  if (m >= ix.member.length) {
    ix.member = doubled(ix.member);
    ix.keyId = doubled(ix.keyId);
  }
  ix.member[m] = kt;
  const keys = ix.keys;
  const id = keys.size === 0 ? 0 : keys.idOf(b, ks, ke);
  ix.keyId[m] = id;
  if (id !== 0) {
    if (ix.slot[id]! >= 0) ix.repeatedName = true;
    ix.slot[id] = m;
  }
}

/** The first byte at or after p (before e) that is not JSON whitespace (what json.loads skips between tokens). */
export function skipAnyWs(b: Uint8Array, p: number, e: number): number {
  while (p < e) {
    const c = b[p]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    p++;
  }
  return p;
}

/**
 * What jsonStringEnd last found: the spelling flags (Spell) of the string it
 * took, or, where it refused one, the byte it stopped at (`stop`): e or past
 * it where the string runs off the end, else the refused byte itself (a
 * backslash that starts a bad escape, a raw control byte, a bad UTF-8 lead).
 */
export const scannedString = { flags: 0, stop: 0 };

/**
 * The JSON string whose opening quote is at b[p], read no further than e
 * (dv a view of b, for reading four bytes at a time; null: one at a time):
 * its end past the closing quote, or -1 where json.loads
 * refuses it (an invalid escape, a raw control byte, invalid UTF-8) or e
 * comes first. Its spelling (Escaped, NotPython, Utf8) in
 * scannedString.flags: the one JSON string reader in TypeScript (the exact
 * byte path and the fast paths alike), whose callers decline by those flags
 * what they cannot copy as it is.
 */
export function jsonStringEnd(b: Uint8Array, dv: DataView | null, p: number, e: number): number {
  let flags = 0;
  p++;
  for (;;) {
    // four plain bytes at a time; the lowest flagged byte is the first special one
    if (dv !== null) while (p + 4 <= e) {
      const m = specialBytes(dv.getInt32(p, true));
      if (m !== 0) {
        p += (31 - Math.clz32(m & -m)) >> 3;
        break;
      }
      p += 4;
    }
    while (p < e && STR_CLASS[b[p]!] === 0) p++;
    if (p >= e) return refused(p);
    const cls = STR_CLASS[b[p]!]!;
    if (cls === 1) {
      scannedString.flags = flags;
      return p + 1;
    }
    if (cls === 2) {
      flags |= Spell.Escaped;
      const d = p + 1 < e ? b[p + 1]! : -1;
      if (d === 0x75) {
        // the closing quote must follow the four digits: the escape is refused
        // when they end the input (json.loads' quirk: its \uXXXX error, not
        // an unterminated string)
        if (p + 6 >= e) return refused(p);
        // Python writes a `\u` escape in lowercase, and only for what has no other spelling
        const v = lowerHex4(b, p + 2);
        if (v < 0) {
          if (hex4(b, p + 2) < 0) return refused(p);
          flags |= Spell.NotPython;
        } else if ((v >= 0x20 && v < 0x7f) || (v < 0x20 && hasShortEscape(v))) flags |= Spell.NotPython;
        p += 6;
        continue;
      }
      if (d < 0 || SHORT_ESCAPE_VALUE[d]! < 0) return refused(p);
      if (d === 0x2f) flags |= Spell.NotPython;
      p += 2;
      continue;
    }
    if (cls === 3) return refused(p);
    if (cls === 5) {
      flags |= Spell.NotPython;
      p++;
      continue;
    }
    // UTF-8 sequence: validated as Python's strict decoder does
    const n = utf8Length(b, p, e);
    if (n < 0) return refused(p);
    flags |= Spell.Utf8;
    p += n;
  }
}

function refused(stop: number): number {
  scannedString.stop = stop;
  return -1;
}

/**
 * jsonStringEnd for a caller that holds no word view of `b` (short strings,
 * or few of them): the string token at b[p] read no further than e, byte
 * by byte; its spelling and refusal in scannedString.
 */
export function stringTokenEnd(b: Uint8Array, p: number, e = b.length): number {
  return jsonStringEnd(b, null, p, e);
}

/**
 * Where a piece of a string body may end: the first place at or after `at`
 * (and at most `end`, the closing quote) that splits b[from, end) between
 * whole characters, not inside an escape or a UTF-8 sequence. The string
 * is one jsonStringEnd took, `from` such a place already and `escaped` its
 * Escaped flag: each backslash starts one whole escape, so without escapes
 * only UTF-8 continuation bytes are stepped over.
 */
export function stringCut(b: Uint8Array, from: number, at: number, end: number, escaped: boolean): number {
  let e = Math.min(end, at);
  if (escaped) {
    let i = from;
    while (i < e) i += b[i] !== BACKSLASH ? 1 : b[i + 1] === 0x75 ? 6 : 2;
    e = i;
  }
  while (e < end && (b[e]! & 0xc0) === 0x80) e++;
  return e;
}

/** afterValue's answer when the container closed. */
const CLOSED = -2;

/** The scan's state between calls, one per thread (rows are indexed one at a time). */
class Scanner {
  b: Uint8Array = new Uint8Array(0);
  /** A view of `b` for word loads (the index's, kept while the caller keeps handing the same buffer). */
  dv: DataView = new DataView(new ArrayBuffer(0));
  e = 0;
  ix: RowIndex = new RowIndex();
  /** Record the top level only: the values of the root's members are one token each. */
  private topLevel = false;
  /** Containers open below the top level (topLevel): while > 0 no token is recorded. */
  private below = 0;

  /** Ready to scan `b` up to `limit` onto ix's tape. */
  over(b: Uint8Array, limit: number, ix: RowIndex, topLevel: boolean): this {
    if (this.b !== b) {
      // every caller has set ix.buf to b (begin, containerSpelling)
      this.b = b;
      this.dv = ix.viewsOfBuf().dv;
    }
    this.e = limit;
    this.ix = ix;
    this.topLevel = topLevel;
    this.below = 0;
    return this;
  }

  /** Push a token; returns its tape position (-1: not recorded, below the top level). */
  private push(word: number, s: number, end: number): number {
    if (this.below > 0) return -1;
    const ix = this.ix;
    const t = ix.count++;
    if (4 * ix.count > ix.tape.length) ix.tape = doubled(ix.tape);
    const o = 4 * t;
    ix.tape[o] = word;
    ix.tape[o + 1] = s;
    ix.tape[o + 2] = end;
    ix.tape[o + 3] = t + 1;
    return t;
  }

  /** Whitespace after a separator or bracket: its spelling flag, and the next token's start in `this.at`. */
  at = 0;
  private gap(p: number, afterSep: boolean): number {
    const b = this.b;
    const e = this.e;
    if (p >= e) {
      this.at = p;
      return 0;
    }
    const c = b[p]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) {
      this.at = p;
      return afterSep ? Spell.Tight : 0;
    }
    if (c === SPACE && afterSep) {
      const d = p + 1 < e ? b[p + 1]! : -1;
      if (d !== 0x20 && d !== 0x09 && d !== 0x0a && d !== 0x0d) {
        this.at = p + 1;
        return Spell.Spaced;
      }
    }
    this.at = skipAnyWs(b, p, e);
    return Spell.OddSpace;
  }

  object(p: number, depth: number, top: boolean): number {
    if (depth > MAX_DEPTH) return -1;
    const b = this.b;
    const ix = this.ix;
    const t = this.push(Tok.Object, p, 0);
    const inner = this.topLevel && depth >= 2;
    if (inner) this.below++;
    let flags = this.gap(p + 1, false);
    p = this.at;
    if (p < this.e && b[p] === RBRACE) {
      return this.close(t, flags, p + 1, inner);
    }
    let prevS = -1;
    let prevE = -1;
    for (;;) {
      if (p >= this.e || b[p] !== QUOTE) return -1;
      const kt = this.push(Tok.Key, p, 0);
      const ke = this.string(p);
      if (ke < 0) return -1;
      let kf = this.strFlags;
      if (kf & (Spell.Escaped | Spell.Utf8)) kf |= Spell.KeyNotPlain;
      if (kt >= 0) {
        ix.tape[4 * kt] = Tok.Key | kf;
        ix.tape[4 * kt + 2] = ke;
      }
      flags |= kf;
      // Key order by bytes: code-point order for plain and raw UTF-8 keys alike.
      if (prevS >= 0 && compareSpans(b, prevS, prevE, p + 1, ke - 1) >= 0) flags |= Spell.Unsorted;
      prevS = p + 1;
      prevE = ke - 1;
      if (top) noteMember(ix, b, kt, p + 1, ke - 1);
      // `:` with its whitespace (none before it, in every spelling Python writes)
      p = ke;
      if (p >= this.e || b[p] !== COLON) {
        if (this.gap(p, false) !== 0) flags |= Spell.OddSpace;
        p = this.at;
        if (p >= this.e || b[p] !== COLON) return -1;
      }
      flags |= this.gap(p + 1, true);
      p = this.value(this.at, depth);
      if (p < 0) return -1;
      flags |= this.valFlags;
      p = this.afterValue(p, RBRACE);
      flags |= this.sepFlags;
      if (p === CLOSED) return this.close(t, flags, this.at, inner);
      if (p < 0) return -1;
    }
  }

  array(p: number, depth: number): number {
    if (depth > MAX_DEPTH) return -1;
    const b = this.b;
    const t = this.push(Tok.Array, p, 0);
    const inner = this.topLevel && depth >= 2;
    if (inner) this.below++;
    let flags = this.gap(p + 1, false);
    p = this.at;
    if (p < this.e && b[p] === RBRACKET) return this.close(t, flags, p + 1, inner);
    for (;;) {
      p = this.value(p, depth);
      if (p < 0) return -1;
      flags |= this.valFlags;
      p = this.afterValue(p, RBRACKET);
      flags |= this.sepFlags;
      if (p === CLOSED) return this.close(t, flags, this.at, inner);
      if (p < 0) return -1;
    }
  }

  /** Spelling of the separator afterValue read. */
  private sepFlags = 0;

  /**
   * What follows a value at p: a comma (returns the next value's start) or
   * `closer` (returns CLOSED, the container's end in `at`); -1 for anything
   * else. The separator's spelling is left in sepFlags.
   */
  private afterValue(p: number, closer: number): number {
    let f = 0;
    let c = p < this.e ? this.b[p]! : -1;
    if (c !== COMMA && c !== closer) {
      f = this.gap(p, false) !== 0 ? Spell.OddSpace : 0;
      p = this.at;
      if (p >= this.e) return -1;
      c = this.b[p]!;
    }
    if (c === COMMA) {
      this.sepFlags = f | this.gap(p + 1, true);
      return this.at;
    }
    this.sepFlags = f;
    if (c !== closer) return -1;
    this.at = p + 1;
    return CLOSED;
  }

  /**
   * End container t at `end` with `flags` (its own and everything inside it):
   * set its span's end and its next. `inner`: its inside was not recorded.
   */
  private close(t: number, flags: number, end: number, inner: boolean): number {
    if (inner) this.below--;
    if (t >= 0) {
      const ix = this.ix;
      const tape = ix.tape;
      tape[4 * t] |= flags;
      tape[4 * t + 2] = end;
      tape[4 * t + 3] = ix.count;
    }
    this.valFlags = flags;
    return end;
  }

  /** Flags of the value value() last read (a container's: everything inside it). */
  private valFlags = 0;

  value(p: number, depth: number): number {
    const b = this.b;
    if (p >= this.e) return -1;
    const c = b[p]!;
    if (c === QUOTE) {
      const t = this.push(Tok.String, p, 0);
      const end = this.string(p);
      if (end < 0) return -1;
      if (t >= 0) {
        this.ix.tape[4 * t] = Tok.String | this.strFlags;
        this.ix.tape[4 * t + 2] = end;
      }
      this.valFlags = this.strFlags;
      return end;
    }
    if (c === LBRACE) return this.object(p, depth + 1, false);
    if (c === LBRACKET) return this.array(p, depth + 1);
    return this.atom(p);
  }

  /** Flags of the last string scanned. */
  strFlags = 0;

  /** The string token at p (its opening quote): jsonStringEnd within the row, its flags in strFlags. */
  string(p: number): number {
    const end = jsonStringEnd(this.b, this.dv, p, this.e);
    this.strFlags = scannedString.flags;
    return end;
  }

  /** A number or literal at p; returns its end or -1. */
  private atom(p: number): number {
    const b = this.b;
    const e = this.e;
    const c = b[p]!;
    if (c === 0x74) return this.word(p, "true", Tok.Literal);
    if (c === 0x66) return this.word(p, "false", Tok.Literal);
    if (c === 0x6e) return this.word(p, "null", Tok.Literal);
    if (c === 0x4e) return this.word(p, "NaN", Tok.NonFinite | Spell.NonFinite);
    if (c === 0x49) return this.word(p, "Infinity", Tok.NonFinite | Spell.NonFinite);
    if (c === MINUS && p + 1 < e && b[p + 1] === 0x49) return this.word(p, "-Infinity", Tok.NonFinite | Spell.NonFinite);
    const start = p;
    if (c === MINUS) p++;
    let d = p < e ? b[p]! : -1;
    if (d === 0x30) p++;
    else if (d >= 0x31 && d <= 0x39) {
      p++;
      while (p < e && (d = b[p]!) >= 0x30 && d <= 0x39) p++;
    } else return -1;
    let isFloat = false;
    if (p + 1 < e && b[p] === 0x2e && (d = b[p + 1]!) >= 0x30 && d <= 0x39) {
      p += 2;
      while (p < e && (d = b[p]!) >= 0x30 && d <= 0x39) p++;
      isFloat = true;
    }
    if (p < e && (b[p] === 0x65 || b[p] === 0x45)) {
      let q = p + 1;
      if (q < e && (b[q] === 0x2b || b[q] === MINUS)) q++;
      if (q < e && (d = b[q]!) >= 0x30 && d <= 0x39) {
        p = q + 1;
        while (p < e && (d = b[p]!) >= 0x30 && d <= 0x39) p++;
        isFloat = true;
      }
    }
    if (!isFloat) {
      const digits = p - start - (b[start] === MINUS ? 1 : 0);
      if (digits > INT_MAX_STR_DIGITS) return -1;
      const negZero = b[start] === MINUS && b[start + 1] === 0x30 && p === start + 2;
      this.valFlags = negZero ? Spell.NotPython : 0;
      this.push(Tok.Int | this.valFlags, start, p);
      return p;
    }
    const quick = p - start > 32 ? -1 : fixedFloatIsRepr(b, start, p);
    this.valFlags = quick > 0 ? 0 : quick < 0 ? Spell.NotPython : Spell.FloatUndecided;
    this.push(Tok.Float | this.valFlags, start, p);
    return p;
  }

  private word(p: number, w: string, kind: number): number {
    const b = this.b;
    if (p + w.length > this.e) return -1;
    for (let i = 0; i < w.length; i++) if (b[p + i] !== w.charCodeAt(i)) return -1;
    this.valFlags = kind & ~KIND_MASK;
    this.push(kind, p, p + w.length);
    return p + w.length;
  }

}

const scanner = new Scanner();

/** The last float lexeme found to be a repr (rows repeat their floats). */
let lastPythonFloat = "";

/** The module instance that decides float lexemes the digits alone leave open (isPythonFloat). */
let floatDecider: WasmScanner | undefined;

/**
 * True when the float lexeme b[s, e) is exactly Python's repr of its value:
 * by its digits, else by the module's exact test (no string made) once the
 * process has the module (compiling it only for this would page in the
 * engine's WebAssembly compiler, megabytes of resident code), else (a tie,
 * or no module) by converting it.
 */
export function isPythonFloat(b: Uint8Array, s: number, e: number): boolean {
  if (e - s > 32) return false;
  const quick = fixedFloatIsRepr(b, s, e);
  if (quick !== 0) return quick > 0;
  if (rowScanModule.isCompiled()) {
    const exact = (floatDecider ??= new WasmScanner()).floatRepr(b, s, e);
    if (exact !== 0) return exact > 0;
  }
  const text = asciiText(b, s, e);
  if (text === lastPythonFloat) return true;
  if (!isFloatRepr(text)) return false;
  lastPythonFloat = text;
  return true;
}

/** Length of the valid UTF-8 sequence at p (Python's strict decoder: no overlongs, no surrogates, <= U+10FFFF), or -1. */
function utf8Length(b: Uint8Array, p: number, e: number): number {
  const c = b[p]!;
  if (c < 0xc2) return -1;
  if (c < 0xe0) return p + 1 < e && (b[p + 1]! & 0xc0) === 0x80 ? 2 : -1;
  if (c < 0xf0) {
    if (p + 2 >= e) return -1;
    const c1 = b[p + 1]!;
    if ((c1 & 0xc0) !== 0x80 || (b[p + 2]! & 0xc0) !== 0x80) return -1;
    if (c === 0xe0 && c1 < 0xa0) return -1;
    if (c === 0xed && c1 >= 0xa0) return -1;
    return 3;
  }
  if (c < 0xf5) {
    if (p + 3 >= e) return -1;
    const c1 = b[p + 1]!;
    if ((c1 & 0xc0) !== 0x80 || (b[p + 2]! & 0xc0) !== 0x80 || (b[p + 3]! & 0xc0) !== 0x80) return -1;
    if (c === 0xf0 && c1 < 0x90) return -1;
    if (c === 0xf4 && c1 >= 0x90) return -1;
    return 4;
  }
  return -1;
}

/**
 * Python's order of two key spans (a string's text between its quotes, as
 * the scanner took it): by code points, 0 only for the same string. Bytes
 * decide up to the first backslash in either (raw UTF-8 orders as its code
 * points do); from there both are decoded. Before that point the two are
 * the same raw bytes, so it is where a character starts in both. The
 * WebAssembly scanner's `$cmp` (bytes.wat) is the same function.
 */
export function compareSpans(b: Uint8Array, a0: number, a1: number, c0: number, c1: number): number {
  const la = a1 - a0;
  const lc = c1 - c0;
  const n = la < lc ? la : lc;
  for (let i = 0; i < n; i++) {
    const x = b[a0 + i]!;
    const y = b[c0 + i]!;
    if (x === BACKSLASH || y === BACKSLASH) return compareDecoded(b, a0 + i, a1, c0 + i, c1);
    if (x !== y) return x - y;
  }
  return la - lc;
}

/** compareSpans from a character's start in both spans on: each character decoded. */
function compareDecoded(b: Uint8Array, a: number, a1: number, c: number, c1: number): number {
  for (;;) {
    if (a >= a1) return c >= c1 ? 0 : -1;
    if (c >= c1) return 1;
    const x = codePointAt(b, a, a1);
    a = pointEnd;
    const y = codePointAt(b, c, c1);
    c = pointEnd;
    if (x !== y) return x - y;
  }
}

/** Where the character codePointAt read ends. */
let pointEnd = 0;

/**
 * The code point of the character at p in a string the scanner took (raw
 * UTF-8, a short escape, a \u escape, or two joined as json.loads joins a
 * surrogate pair within the span, which ends at `end`); where it ends in
 * `pointEnd`.
 */
function codePointAt(b: Uint8Array, p: number, end: number): number {
  const c = b[p]!;
  if (c !== BACKSLASH) {
    if (c < 0x80) return ((pointEnd = p + 1), c);
    if (c < 0xe0) return ((pointEnd = p + 2), ((c & 0x1f) << 6) | (b[p + 1]! & 0x3f));
    if (c < 0xf0) return ((pointEnd = p + 3), ((c & 0x0f) << 12) | ((b[p + 1]! & 0x3f) << 6) | (b[p + 2]! & 0x3f));
    pointEnd = p + 4;
    return ((c & 0x07) << 18) | ((b[p + 1]! & 0x3f) << 12) | ((b[p + 2]! & 0x3f) << 6) | (b[p + 3]! & 0x3f);
  }
  const d = b[p + 1]!;
  if (d !== 0x75) {
    pointEnd = p + 2;
    return SHORT_ESCAPE_VALUE[d]!;
  }
  const u = hex4(b, p + 2);
  pointEnd = p + 6;
  if ((u & 0xfc00) === 0xd800 && p + 12 <= end && b[p + 6] === BACKSLASH && b[p + 7] === 0x75) {
    const v = hex4(b, p + 8);
    if ((v & 0xfc00) === 0xdc00) {
      pointEnd = p + 12;
      return 0x10000 + (((u - 0xd800) << 10) | (v - 0xdc00));
    }
  }
  return u;
}

/**
 * Decide without conversion whether a fixed-notation float lexeme
 * (`-?digits.digits`) is Python's repr: 1 yes, -1 no, 0 undecided (use the
 * slow check). A decimal of at most 15 significant digits round-trips
 * through a double and no shorter decimal maps to the same double (15 =
 * DBL_DIG), so such a lexeme is the shortest repr exactly when it has no
 * superfluous zeros and its exponent is in repr's fixed range [-4, 16).
 */
export function fixedFloatIsRepr(b: Uint8Array, s: number, e: number): number {
  let p = s;
  if (b[p] === MINUS) p++;
  const intStart = p;
  while (b[p]! >= 0x30 && b[p]! <= 0x39) p++;
  const intEnd = p;
  if (b[p] !== 0x2e) return 0; // exponent form: slow check
  const fracStart = p + 1;
  if (e - fracStart < 1) return 0;
  for (let i = fracStart; i < e; i++) if (b[i]! < 0x30 || b[i]! > 0x39) return 0;
  const intLen = intEnd - intStart;
  if (intLen === 0 || (intLen > 1 && b[intStart] === 0x30)) return 0;
  const intIsZero = intLen === 1 && b[intStart] === 0x30;
  if (e - fracStart === 1 && b[fracStart] === 0x30) {
    // X.0: an integral value; repr is fixed for magnitudes below 1e16
    if (intLen > 16) return 0;
    let lastNonZero = intEnd - 1;
    while (lastNonZero > intStart && b[lastNonZero] === 0x30) lastNonZero--;
    return lastNonZero - intStart + 1 <= 15 ? 1 : 0;
  }
  if (b[e - 1] === 0x30) return -1; // trailing zero in the fraction: never shortest
  let sig: number;
  if (intIsZero) {
    let z = fracStart;
    while (b[z] === 0x30) z++;
    if (z - fracStart > 3) return 0; // below 1e-4: repr is scientific (slow check decides)
    sig = e - z;
  } else {
    if (intLen > 16) return 0;
    sig = intLen + (e - fracStart);
  }
  return sig <= 15 ? 1 : 0;
}
