import { tokenIs } from "../codec/bytes.ts";
import { indexRow, KeyTable, NOT_PLAIN_TEXT, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import { HEX_BYTES, HEX_VALUE } from "../hex.ts";
import { dumps } from "../pyjson/encode.ts";
import { pyInt, pyStr } from "../pyjson/python.ts";
import { rawIsEmpty } from "../pyjson/parse.ts";
import { PyNum, PyRaw, type PyValue } from "../pyjson/types.ts";
import { sha256Hex } from "./hash.ts";
import { classifyLine, type JournalRow, type LineVerdict } from "./reader.ts";

/**
 * The provider-state gate of `replay <RUN> --verify` (upstream-parity §4):
 * a `provider_state_mutation` row whose content address does not recompute,
 * or that is flagged (a provider-side context mutation arrived while the run
 * asked for deterministic record/replay), fails the verify even though the
 * chain is intact.
 *
 * It applies to a journal whose chain verified with complete coverage, so
 * every non-blank physical line is a row and the row index is the count of
 * non-blank lines before it.
 *
 * The verify runs it in its own pass (RangeGate, gateOfRanges): each row is
 * read once, at the position the chain walk gave it. The verify kernel
 * checks the rows it takes as it takes them (kernel.wat $gate: the rows
 * Python's writer spells, whose strings are the pre-image's own bytes).
 * Of the others only lines that can hold such a row are read: those
 * spelling `provider_state_mutation`, or escaping a printable ASCII
 * character (`\u0020`..`\u007e`), which no Python or bernstein writer does
 * but which could spell the event name without its bytes. Such a row is
 * read off the codec's index (mutationFinding), parsed only when a member
 * it reads is not plain.
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

/** What the gate checks of a mutation row's content address. */
export const enum AddressCheck {
  Matches = 0,
  Mismatch = 1,
  /** `int(step_index)` fails: there is no address to check. */
  NotInteger = 2,
}

/** What the gate found in one mutation row (messages are made once its index is known: `record`). */
export interface MutationFinding {
  address: AddressCheck;
  /** str() of mutation_kind when the row is flagged (its message names it), else null. */
  flagged: string | null;
}

/** The findings of one mutation row. */
function findingOf(row: JournalRow): MutationFinding {
  const address = contentAddress(row);
  const check = address === null ? AddressCheck.NotInteger : pyStr(row.get("content_address"), "None") !== address ? AddressCheck.Mismatch : AddressCheck.Matches;
  return { address: check, flagged: truthy(row.get("flagged")) ? pyStr(row.get("mutation_kind"), "None") : null };
}

/** A row with nothing to report. */
function isClean(f: MutationFinding): boolean {
  return f.address === AddressCheck.Matches && f.flagged === null;
}

/** Fold the finding of the mutation row at chain index `i` into the verdict (upstream's messages, in its order). */
function record(out: ProviderStateVerdict, i: number, f: MutationFinding): void {
  if (f.address === AddressCheck.NotInteger) out.errors.push(`step ${i}: provider_state_mutation step_index is not an integer`);
  else if (f.address === AddressCheck.Mismatch) out.errors.push(`step ${i}: provider_state_mutation content address mismatch`);
  if (f.flagged !== null) {
    out.flagged_steps.push(i);
    out.errors.push(`step ${i}: flagged provider-side mutation (${f.flagged}) arrived in deterministic mode`);
  }
}

/** The row of a line, when it is a mutation row. */
function mutationRow(v: LineVerdict): JournalRow | null {
  return v.kind === "row" && pyStr(v.row.get("event"), "") === MUTATION_EVENT ? v.row : null;
}

/** The members the gate reads, as the codec's key ids. */
const GATE_KEYS = new KeyTable(["event", "step_index", "after_digest", "before_digest", "mutation_kind", "content_address", "flagged"]);
const enum GateKey {
  Event = 1,
  StepIndex,
  After,
  Before,
  Kind,
  Address,
  Flagged,
}
/** Rows this long are parsed (the byte path keeps their long values as bytes): an index would copy one into the scanner's memory. */
const INDEXED_MAX = 1 << 20;
let gateIndex: RowIndex | null = null;
/** Rows the verify's pass gated in this thread, and how many between two minor collections. */
let gated = 0;
const GATED_GC_ROWS = 256;

/**
 * The finding of the physical line `bytes` when it holds a mutation row,
 * else null. Read off the codec's index of the row when every member the
 * gate reads is absent or plain (a string of printable ASCII without
 * escapes, an integer in Python's spelling, a literal): what the exact
 * reference (the parsed row, findingOf) gives for it, without building the
 * row. Any other row is parsed.
 */
export function mutationFinding(bytes: Uint8Array): MutationFinding | null {
  const indexed = bytes.length < INDEXED_MAX ? indexedFinding(bytes, (gateIndex ??= new RowIndex())) : undefined;
  return indexed !== undefined ? indexed : parsedFinding(bytes);
}

/** mutationFinding from the parsed row (pyjson, the exact reference). */
export function parsedFinding(bytes: Uint8Array): MutationFinding | null {
  const row = mutationRow(classifyLine(bytes));
  return row === null ? null : findingOf(row);
}

/** mutationFinding from the row's index; undefined when only a parse can tell. */
export function indexedFinding(bytes: Uint8Array, ix: RowIndex): MutationFinding | null | undefined {
  if (!indexRow(bytes, 0, bytes.length, ix, GATE_KEYS) || ix.repeatedName) return undefined;
  const event = ix.valueOf(GateKey.Event);
  // str() of anything but a string (a number, a literal, a list, an object) never spells the event's name
  if (event < 0 || ix.kind(event) !== Tok.String) return null;
  if ((ix.flags(event) & NOT_PLAIN_TEXT) !== 0) return undefined;
  if (!tokenIs(ix.buf, ix.start(event), ix.end(event), NEEDLE)) return null;
  const flagged = truthyAt(ix, GateKey.Flagged);
  const stored = ix.valueOf(GateKey.Address);
  if (flagged === undefined || (stored >= 0 && !plainString(ix, stored))) return undefined;
  // the content address's pre-image (contentAddress's), straight from the members' bytes: the strings need no escape
  const pre = ADDRESS.reset();
  if (!pre.text(ix, GateKey.After, AFTER_KEY) || !pre.text(ix, GateKey.Before, BEFORE_KEY) || !pre.text(ix, GateKey.Kind, KIND_KEY) || !pre.step(ix)) return undefined;
  return { address: pre.addresses(ix, stored) ? AddressCheck.Matches : AddressCheck.Mismatch, flagged: flagged ? strOf(ix, GateKey.Kind) : null };
}

const AFTER_KEY = Buffer.from('{"after_digest":');
const BEFORE_KEY = Buffer.from(',"before_digest":');
const KIND_KEY = Buffer.from(',"kind":');
const STEP_KEY = Buffer.from(',"step_index":');
const NONE = Buffer.from('"None"');
const ZERO = Buffer.from("0");
const CLOSE = Buffer.from("}");

/** The content address's pre-image, assembled member by member in one reused buffer (no string made). */
class AddressPreimage {
  private bytes = new Uint8Array(1024);
  private length = 0;
  private readonly digest = new Uint8Array(32);

  reset(): this {
    this.length = 0;
    return this;
  }

  private put(b: Uint8Array, s: number, e: number): void {
    const need = this.length + (e - s);
    if (need > this.bytes.length) {
      const grown = new Uint8Array(Math.max(need, 2 * this.bytes.length));
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    // short spans, copied byte by byte: a view made per member would be garbage per row
    const out = this.bytes;
    for (let i = s, o = this.length; i < e; i++, o++) out[o] = b[i]!;
    this.length = need;
  }

  /** `key` and str() of member `id` as a JSON string: "None" when absent, a plain string as it is; false for anything else. */
  text(ix: RowIndex, id: number, key: Uint8Array): boolean {
    const t = ix.valueOf(id);
    if (t >= 0 && !plainString(ix, t)) return false;
    this.put(key, 0, key.length);
    if (t < 0) this.put(NONE, 0, NONE.length);
    else this.put(ix.buf, ix.start(t), ix.end(t));
    return true;
  }

  /** `,"step_index":` and int() of the member: 0 when absent, an integer in Python's spelling as it is; false for anything else. */
  step(ix: RowIndex): boolean {
    const t = ix.valueOf(GateKey.StepIndex);
    if (t >= 0 && (ix.kind(t) !== Tok.Int || (ix.flags(t) & Spell.NotPython) !== 0)) return false;
    this.put(STEP_KEY, 0, STEP_KEY.length);
    if (t < 0) this.put(ZERO, 0, 1);
    else this.put(ix.buf, ix.start(t), ix.end(t));
    this.put(CLOSE, 0, 1);
    return true;
  }

  /** The stored content_address (token `stored`, a plain string, or -1: absent, "None") is the pre-image's digest in lowercase hex. */
  addresses(ix: RowIndex, stored: number): boolean {
    if (stored < 0 || ix.end(stored) - ix.start(stored) !== 66) return false;
    const d = this.digest;
    Bun.SHA256.hash(this.bytes.subarray(0, this.length), d);
    const b = ix.buf;
    for (let i = 0, p = ix.start(stored) + 1; i < 32; i++, p += 2) {
      if (b[p] !== HEX_BYTES[d[i]! >> 4] || b[p + 1] !== HEX_BYTES[d[i]! & 15]) return false;
    }
    return true;
  }
}

const ADDRESS = new AddressPreimage();

/** Token t is a string of printable ASCII without escapes (its bytes between the quotes are its text). */
function plainString(ix: RowIndex, t: number): boolean {
  return ix.kind(t) === Tok.String && (ix.flags(t) & NOT_PLAIN_TEXT) === 0;
}

/** str() of member `id`, a plain string or absent ("None"). */
function strOf(ix: RowIndex, id: number): string {
  const t = ix.valueOf(id);
  return t < 0 ? "None" : ix.plainText(t);
}

/** Python truthiness of member `id` (absent: false); undefined for a list or an object (parsed). */
function truthyAt(ix: RowIndex, id: number): boolean | undefined {
  const t = ix.valueOf(id);
  if (t < 0) return false;
  switch (ix.kind(t)) {
    case Tok.Literal:
      return ix.buf[ix.start(t)] === 0x74; // true (false, null: falsy)
    case Tok.Int:
    case Tok.Float:
    case Tok.NonFinite:
      return Number(ix.latin1(ix.start(t), ix.end(t))) !== 0;
    case Tok.String:
      return ix.end(t) - ix.start(t) > 2;
    default:
      return undefined;
  }
}

/**
 * True when the line may hold a mutation row: it spells the event's name,
 * or escapes a printable ASCII character (which could spell it without its
 * bytes). Any other line cannot be one.
 */
export function mayHoldMutation(line: Uint8Array): boolean {
  const text = Buffer.from(line.buffer, line.byteOffset, line.length);
  return text.indexOf(NEEDLE) >= 0 || escapesPrintable(text);
}

/**
 * The gate inside the verify's own pass (src/journal/fast/range.ts): the
 * verify kernel checks the mutation rows it takes itself (kernel.wat
 * $gate) and tells `counted` and `mismatch` what it found, and `row` each
 * row it leaves to the host; the exact path hands `row` each row whose line
 * may hold a mutation row (mayHoldMutation). `result()` goes on with the
 * range's result, and `gateOfRanges` joins the ranges into the verdict.
 */
export class RangeGate {
  private count = 0;
  private readonly found: number[] = [];
  private readonly kinds: string[] = [];

  /** `n` mutation rows the kernel checked (their findings, if any, come by `mismatch`). */
  counted(n: number): void {
    this.count += n;
  }

  /** The kernel's finding: the range's row `local` is a mutation row whose content address does not recompute (and is not flagged). */
  mismatch(local: number): void {
    this.found.push(local, AddressCheck.Mismatch, 0);
  }

  /** The line `bytes` (no terminator), which may hold a mutation row (left by the kernel, or mayHoldMutation), is the range's row `local`. */
  row(bytes: Uint8Array, local: number): void {
    const finding = mutationFinding(bytes);
    // each row read leaves a little garbage, in every verifying thread at once: collected as it piles up, peak memory stays flat
    if (++gated % GATED_GC_ROWS === 0) Bun.gc(false);
    if (finding === null) return;
    this.count++;
    if (isClean(finding)) return;
    this.found.push(local, finding.address, finding.flagged === null ? 0 : 1);
    if (finding.flagged !== null) this.kinds.push(finding.flagged);
  }

  result(): RangeMutations {
    return { count: this.count, found: this.found, kinds: this.kinds };
  }
}

/** A range's mutation rows (what RangeGate saw; it crosses the worker boundary as a plain object). */
export interface RangeMutations {
  /** Mutation rows in the range. */
  count: number;
  /** Those with a finding, in order, three numbers each: the row's position in the range, its AddressCheck, 1 when flagged. */
  found: number[];
  /** The flagged ones' str(mutation_kind), in order. */
  kinds: string[];
}

/** The gate's verdict over parsed rows, in order (the exact reference the verify's pass is held to). */
export function gateOfRows(rows: Iterable<JournalRow>): ProviderStateVerdict {
  const out: ProviderStateVerdict = { ok: true, mutations: 0, flagged_steps: [], errors: [] };
  let i = 0;
  for (const row of rows) {
    if (pyStr(row.get("event"), "") === MUTATION_EVENT) {
      out.mutations++;
      record(out, i, findingOf(row));
    }
    i++;
  }
  out.ok = out.errors.length === 0;
  return out;
}

/**
 * The gate's verdict from a verify's ranges, in order, each with the row
 * index of its first row: null when a range was verified without the gate.
 */
export function gateOfRanges(ranges: readonly { baseIndex: number; mutations: RangeMutations | null }[]): ProviderStateVerdict | null {
  const out: ProviderStateVerdict = { ok: true, mutations: 0, flagged_steps: [], errors: [] };
  for (const r of ranges) {
    if (r.mutations === null) return null;
    out.mutations += r.mutations.count;
    const { found, kinds } = r.mutations;
    for (let i = 0, k = 0; i < found.length; i += 3) record(out, r.baseIndex + found[i]!, { address: found[i + 1]!, flagged: found[i + 2] === 1 ? kinds[k++]! : null });
  }
  out.ok = out.errors.length === 0;
  return out;
}
