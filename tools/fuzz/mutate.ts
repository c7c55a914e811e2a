import type { Rng } from "./rng.ts";

/**
 * The mutation engine: byte-level mutations (AFL-style havoc) with a
 * dictionary of tokens that matter to JSON, journals and tars, plus
 * line-level mutations for line-oriented formats. Mutators are pure
 * functions of (rng, input), so a case is reproducible from its seed.
 */

const enc = new TextEncoder();

/** Tokens worth splicing into JSON-ish inputs. */
export const JSON_TOKENS: readonly Uint8Array[] = [
  "{", "}", "[", "]", ",", ":", '"', "\\", "\\u", "\\ud800", "\\udc00", "\\ud83d\\ude80", "\\u0000", "\\/", "\\x",
  "null", "true", "false", "NaN", "Infinity", "-Infinity", "-0", "-0.0", "1e+16", "1e-05", "5e-324", "1.7976931348623157e308",
  "1e400", "-1e400", "0.1", "1E5", "1.50", "123456789012345678901234567890", "9".repeat(4301), "0x10", "01", ".5", "1.", "+1",
  '"event"', '"event_hash"', '"prev_hash"', '"payload_hash"', '"index"', '"ts"', '"hash_profile"', '"jcs-v3"', '"py-json-v1"',
  '"seq"', '"step_hash"', '"input_hash"', '"effort"', '"tool_call"', '"tool_result"', '"model"', '"prompt"', '"schema_version"',
  "\u2028", "\u2029", "\u0085", "\x7f", "\ufeff", "\r", "\n", "\r\n", "\v", "\f", "\x1c", "\x1e", "\x00", "\t", " ",
  "é", "задача", "🚀", "\uD800", "{}", "[]", '""', '{"a":1,"a":2}',
].map((t) => enc.encode(t));

/** Bytes that sit on format boundaries. */
const INTERESTING_BYTES = [0x00, 0x01, 0x0a, 0x0d, 0x20, 0x22, 0x2c, 0x30, 0x3a, 0x5b, 0x5c, 0x5d, 0x7b, 0x7d, 0x7f, 0x80, 0xc0, 0xc2, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];

function concat(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export interface MutateOptions {
  /** Extra tokens for this target (tar magic, header fields, ...). */
  dictionary?: readonly Uint8Array[];
  /** Other corpus entries to splice with. */
  corpus?: readonly Uint8Array[];
  /** Cap on the output size. */
  maxBytes?: number;
  /** How many stacked mutations at most (default 8). */
  maxStack?: number;
}

/** One havoc step. */
function havocOnce(rng: Rng, data: Uint8Array, opts: MutateOptions): Uint8Array {
  const n = data.length;
  const pos = () => rng.int(n + 1);
  const dict = opts.dictionary && rng.chance(0.5) ? opts.dictionary : JSON_TOKENS;
  switch (rng.int(13)) {
    case 0: {
      if (n === 0) return data;
      const out = data.slice();
      const i = rng.int(n);
      out[i]! ^= 1 << rng.int(8);
      return out;
    }
    case 1: {
      if (n === 0) return data;
      const out = data.slice();
      out[rng.int(n)] = rng.pick(INTERESTING_BYTES);
      return out;
    }
    case 2: {
      if (n === 0) return data;
      const out = data.slice();
      out[rng.int(n)] = rng.u32() & 0xff;
      return out;
    }
    case 3: {
      const at = pos();
      return concat(data.subarray(0, at), rng.bytes(rng.smallSize(16)), data.subarray(at));
    }
    case 4: {
      if (n === 0) return data;
      const at = rng.int(n);
      const len = rng.smallSize(Math.max(1, n - at));
      return concat(data.subarray(0, at), data.subarray(at + len));
    }
    case 5: {
      if (n === 0) return data;
      const at = rng.int(n);
      const len = rng.smallSize(Math.min(64, n - at));
      const to = pos();
      return concat(data.subarray(0, to), data.subarray(at, at + len), data.subarray(to));
    }
    case 6:
    case 7: {
      const at = pos();
      return concat(data.subarray(0, at), rng.pick(dict), data.subarray(at));
    }
    case 8: {
      // Overwrite with a token.
      if (n === 0) return rng.pick(dict);
      const t = rng.pick(dict);
      const at = rng.int(n);
      return concat(data.subarray(0, at), t, data.subarray(Math.min(n, at + t.length)));
    }
    case 9: {
      // Truncate (a torn write).
      if (n === 0) return data;
      return data.subarray(0, rng.int(n));
    }
    case 10: {
      // Splice with another corpus entry.
      const other = opts.corpus && opts.corpus.length ? rng.pick(opts.corpus) : data;
      const a = pos();
      const b = rng.int(other.length + 1);
      return concat(data.subarray(0, a), other.subarray(b));
    }
    case 11: {
      // Repeat a block (size blow-up, repeated structure).
      if (n === 0) return data;
      const at = rng.int(n);
      const len = rng.smallSize(Math.min(32, n - at));
      const block = data.subarray(at, at + len);
      const times = rng.smallSize(64);
      const parts: Uint8Array[] = [data.subarray(0, at)];
      for (let i = 0; i < times; i++) parts.push(block);
      parts.push(data.subarray(at));
      return concat(...parts);
    }
    default: {
      // Increment/decrement an ASCII digit (number and hash edits).
      if (n === 0) return data;
      const out = data.slice();
      const start = rng.int(n);
      for (let i = 0; i < n; i++) {
        const j = (start + i) % n;
        const c = out[j]!;
        if ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)) {
          out[j] = c === 0x39 ? 0x30 : c === 0x66 ? 0x61 : c + 1;
          break;
        }
      }
      return out;
    }
  }
}

/** Stack 1..maxStack havoc mutations. */
export function mutateBytes(rng: Rng, input: Uint8Array, opts: MutateOptions = {}): Uint8Array {
  const steps = 1 + rng.int(opts.maxStack ?? 8);
  let data = input;
  const max = opts.maxBytes ?? 1 << 20;
  for (let i = 0; i < steps; i++) {
    data = havocOnce(rng, data, opts);
    if (data.length > max) data = data.subarray(0, max);
  }
  return data;
}

/** Split on `\n`, keeping each line's terminator. */
export function splitLinesKeep(data: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (;;) {
    const nl = data.indexOf(0x0a, start);
    if (nl < 0) break;
    out.push(data.subarray(start, nl + 1));
    start = nl + 1;
  }
  if (start < data.length) out.push(data.subarray(start));
  return out;
}

/**
 * Line-level mutations of a line-oriented file (journals): drop, duplicate,
 * swap, move, insert junk or blank lines, change terminators, mutate the
 * bytes of one line, tear the last line.
 */
export function mutateLines(rng: Rng, input: Uint8Array, opts: MutateOptions = {}): Uint8Array {
  const lines = splitLinesKeep(input);
  const steps = 1 + rng.int(3);
  for (let s = 0; s < steps; s++) {
    const n = lines.length;
    const i = rng.int(n);
    switch (rng.int(10)) {
      case 0:
        if (n) lines.splice(i, 1);
        break;
      case 1:
        if (n) lines.splice(i, 0, lines[i]!);
        break;
      case 2:
        if (n > 1) {
          const j = rng.int(n);
          [lines[i], lines[j]] = [lines[j]!, lines[i]!];
        }
        break;
      case 3:
        lines.splice(rng.int(n + 1), 0, enc.encode(rng.pick(["\n", "   \n", "\r\n", "not json\n", "[]\n", "null\n", "{}\n", '{"event": 1}\n', "\x1c\n", "\ufeff{}\n"])));
        break;
      case 4:
        if (n) {
          // Change the terminator of one line.
          const l = lines[i]!;
          const body = l[l.length - 1] === 0x0a ? l.subarray(0, l.length - 1) : l;
          lines[i] = concat(body, enc.encode(rng.pick(["\r\n", "\r", "", "\n\n", "\u2028\n", "\x85\n"])));
        }
        break;
      case 5:
        if (n) lines[n - 1] = lines[n - 1]!.subarray(0, rng.int(lines[n - 1]!.length));
        break;
      default:
        if (n) lines[i] = mutateBytes(rng, lines[i]!, { ...opts, maxStack: 3 });
    }
  }
  return concat(...lines);
}

/** `depth` nested arrays/objects around `inner` (recursion-depth attacks). */
export function deepNesting(depth: number, kind: "array" | "object" | "mixed" = "array", inner = "1"): string {
  if (kind === "array") return "[".repeat(depth) + inner + "]".repeat(depth);
  if (kind === "object") return '{"a":'.repeat(depth) + inner + "}".repeat(depth);
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    open.push(i % 2 ? '{"k":' : "[");
    close.push(i % 2 ? "}" : "]");
  }
  return open.join("") + inner + close.reverse().join("");
}

export { concat as concatBytes };
