import { copyTo } from "../codec/bytes.ts";
import { UsageError } from "../errors/index.ts";
import { encodeString } from "../pyjson/encode.ts";
import { materialize } from "../pyjson/parse.ts";
import { PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";

/**
 * What `replay diff` compares. Two runs of the same plan differ, by
 * construction, in fields that say *which* run it was, not *what* it did;
 * comparing those would put every divergence at event 0. So by default:
 *
 * - identity fields are ignored (DEFAULT_IGNORES, each with its reason);
 * - agent ids are compared by the order in which each run first used them
 *   (an agent id is `<role>-<8 random hex>`, fresh in every run): the first
 *   agent of run A matches the first agent of run B, and a run that hands a
 *   task to a different agent than the other still diverges.
 *
 * `--ignore PATH` adds fields (dotted paths into nested objects; a path
 * through a list applies to each of its elements), `--no-default-ignores`
 * compares every field as recorded. The clock and chain fields (`ts`,
 * `elapsed_s`, `index`, `prev_hash`, `payload_hash`, `event_hash`) never
 * count: they are not part of what a row records (see IGNORED_FIELDS).
 */
export const DEFAULT_IGNORES: readonly { field: string; why: string }[] = [
  { field: "run_id", why: "the run's own id (its start time): every run has another one" },
  { field: "git_sha", why: "the commit the run was started from, not what the run did" },
  { field: "git_branch", why: "the branch the run was started from, not what the run did" },
  { field: "fingerprint", why: "run_completed's journal head: a hash over every row, clocks included, so it always differs" },
  { field: "session_id", why: "an agent CLI's conversation id, random per call" },
  { field: "pid", why: "an operating-system process id" },
];

/** Fields whose values are renamed to their order of first appearance in each run. */
export const ALIGNED_FIELDS: readonly { field: string; why: string }[] = [
  { field: "agent_id", why: "`<role>-<random hex>`, fresh in every run" },
  { field: "agent_ids", why: "lists of agent ids" },
];

export interface DiffRules {
  /** Dotted paths, in the order given (defaults first). */
  ignored: string[];
  aligned: string[];
  defaults: boolean;
}

export function diffRules(opts: { ignore?: readonly string[]; noDefaultIgnores?: boolean } = {}): DiffRules {
  const defaults = !opts.noDefaultIgnores;
  const ignored = defaults ? DEFAULT_IGNORES.map((d) => d.field) : [];
  for (const raw of opts.ignore ?? []) {
    const path = raw.trim();
    if (path === "" || path.split(".").some((s) => s === "")) {
      throw new UsageError(`--ignore needs a field name or a dotted path (a.b.c), got ${JSON.stringify(raw)}`);
    }
    if (!ignored.includes(path)) ignored.push(path);
  }
  return { ignored, aligned: defaults ? ALIGNED_FIELDS.map((a) => a.field) : [], defaults };
}

/** One run's side of the comparison: its alias table for aligned values, and what the rules touched. */
export class RowProjector {
  private readonly paths: string[][];
  /**
   * Alias ordinals by the value's canonical JSON token (json.dumps of the
   * string): the byte-level fast path (./diff-fast.ts) looks up the tokens
   * it reads, so both paths share one table and assign the same ordinals.
   */
  readonly ordinals = new TokenOrdinals();
  /** Ignored paths and aligned fields present in at least one projected row. */
  readonly seen = new Set<string>();

  constructor(private readonly rules: DiffRules) {
    this.paths = rules.ignored.map((p) => p.split("."));
  }

  /** The row as compared: ignored paths removed, aligned values replaced by their alias. Never mutates `row`. */
  project(row: PyObject): PyObject {
    let out = row;
    for (let i = 0; i < this.paths.length; i++) {
      const next = without(out, this.paths[i]!, 0);
      if (next !== out) {
        this.seen.add(this.rules.ignored[i]!);
        out = next;
      }
    }
    for (const field of this.rules.aligned) {
      const value = out.get(field);
      if (value === undefined) continue;
      this.seen.add(field);
      if (out === row) out = new Map(row);
      out.set(field, this.alias(value));
    }
    return out;
  }

  private alias(value: PyValue): PyValue {
    // a huge row's large member is still its bytes (src/pyjson/row.ts): its ids are aliased as in any other row
    if (value instanceof PyRaw) return this.alias(materialize(value));
    if (Array.isArray(value)) return value.map((v) => this.alias(v));
    if (typeof value !== "string") return value;
    return `#${this.ordinals.ofText(encodeString(value))}`;
  }
}

/** `obj` without `path` (a copy along the path when something is removed; `obj` itself otherwise). */
function without(obj: PyObject, path: readonly string[], depth: number): PyObject {
  const key = path[depth]!;
  if (!obj.has(key)) return obj;
  const copy = new Map(obj);
  if (depth === path.length - 1) {
    copy.delete(key);
    return copy;
  }
  const inner = withoutIn(obj.get(key)!, path, depth + 1);
  if (inner === obj.get(key)) return obj;
  copy.set(key, inner);
  return copy;
}

function withoutIn(value: PyValue, path: readonly string[], depth: number): PyValue {
  if (value instanceof PyRaw) {
    // a huge row's large member is still its bytes (src/pyjson/row.ts): read as a tree only to follow the path into it
    const tree = materialize(value);
    const inner = withoutIn(tree, path, depth);
    return inner === tree ? value : inner;
  }
  if (value instanceof Map) return without(value, path, depth);
  if (Array.isArray(value)) {
    const mapped = value.map((v) => withoutIn(v, path, depth));
    return mapped.some((v, i) => v !== value[i]) ? mapped : value;
  }
  return value;
}

const ascii = new TextEncoder();

/**
 * First-appearance ordinals (1-based) of tokens, keyed by their bytes: an
 * open-addressing table over one byte arena, so a run with many thousand
 * agent ids holds a few bytes per id, and the fast path looks ids up
 * without building strings.
 */
export class TokenOrdinals {
  private arena = new Uint8Array(1 << 16);
  private used = 0;
  /** Per entry: arena offset and length; the ordinal is the entry's number + 1. */
  private at: Int32Array = new Int32Array(1 << 10);
  private len: Int32Array = new Int32Array(1 << 10);
  private count = 0;
  /** Entry number + 1 by hash slot (0: empty). */
  private slots = new Int32Array(1 << 11);
  private scratch = new Uint8Array(256);
  /** The last token looked up (an agent's rows come in runs): its bytes, length and ordinal. */
  private readonly last = new Uint8Array(64);
  private lastLen = -1;
  private lastOrd = 0;

  get size(): number {
    return this.count;
  }

  /** The ordinal of token b[s, e), assigned on first sight. */
  of(b: Uint8Array, s: number, e: number): number {
    const n = e - s;
    if (n === this.lastLen) {
      let i = 0;
      while (i < n && this.last[i] === b[s + i]) i++;
      if (i === n) return this.lastOrd;
    }
    const o = this.lookup(b, s, e);
    if (n <= this.last.length) {
      for (let i = 0; i < n; i++) this.last[i] = b[s + i]!;
      this.lastLen = n;
      this.lastOrd = o;
    }
    return o;
  }

  private lookup(b: Uint8Array, s: number, e: number): number {
    const n = e - s;
    const h = hashBytes(b, s, e);
    const mask = this.slots.length - 1;
    let slot = h & mask;
    const arena = this.arena;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) break;
      const o = this.at[entry - 1]!;
      if (this.len[entry - 1] === n) {
        let i = 0;
        while (i < n && arena[o + i] === b[s + i]) i++;
        if (i === n) return entry;
      }
      slot = (slot + 1) & mask;
    }
    return this.add(b, s, n, slot);
  }

  /** The ordinal of a token given as (ASCII) text. */
  ofText(token: string): number {
    if (token.length * 3 > this.scratch.length) this.scratch = new Uint8Array(token.length * 3);
    const { written } = ascii.encodeInto(token, this.scratch);
    return this.of(this.scratch, 0, written);
  }

  private add(b: Uint8Array, s: number, n: number, slot: number): number {
    if (this.used + n > this.arena.length) {
      const grown = new Uint8Array(Math.max(2 * this.arena.length, this.used + n));
      grown.set(this.arena.subarray(0, this.used));
      this.arena = grown;
    }
    if (this.count === this.at.length) {
      this.at = grow(this.at);
      this.len = grow(this.len);
    }
    copyTo(b, s, s + n, this.arena, this.used);
    this.at[this.count] = this.used;
    this.len[this.count] = n;
    this.used += n;
    this.count++;
    this.slots[slot] = this.count;
    if (2 * this.count > this.slots.length) this.rehash();
    return this.count;
  }

  private rehash(): void {
    const slots = new Int32Array(2 * this.slots.length);
    const mask = slots.length - 1;
    for (let e = 0; e < this.count; e++) {
      const h = hashBytes(this.arena, this.at[e]!, this.at[e]! + this.len[e]!);
      let slot = h & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = e + 1;
    }
    this.slots = slots;
  }
}

/**
 * A hash of b[s, e) from its length and its last eight bytes (ids differ
 * most at their end: `<role>-<random hex>`), all bytes for short tokens.
 */
function hashBytes(b: Uint8Array, s: number, e: number): number {
  let h = Math.imul(e - s, 0x9e3779b1);
  for (let i = Math.max(s, e - 8); i < e; i++) h = Math.imul(h ^ b[i]!, 16777619);
  return h ^ (h >>> 16);
}

function grow(a: Int32Array): Int32Array {
  const g = new Int32Array(2 * a.length);
  g.set(a);
  return g;
}
