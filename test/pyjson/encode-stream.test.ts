/**
 * A long object is written member by member in its output order (sorted
 * keys, or input order with duplicates at their first place), not
 * buffered whole (src/pyjson/encode-bytes.ts streamedObject). Its bytes
 * must be exactly the buffered encoding's and Python's json.dumps', for
 * objects past the real streaming size holding duplicate keys (spelled
 * alike and differently), nested long and short objects, non-ASCII keys
 * and keys that need escapes; and the sink must stay small meanwhile.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { isUtf8 } from "node:buffer";
import { ByteSink, BytesEncoder, dumpsBytes, setStreamObjectMin, type ByteDumpsOptions } from "../../src/pyjson/encode-bytes.ts";
import { validateBytes } from "../../src/pyjson/bytes.ts";
import { encodeStringToken } from "../../src/pyjson/encode-bytes.ts";
import { encodeStringPieces } from "../../src/pyjson/encode.ts";
import { runPython } from "../helpers/python.ts";
import { Gen } from "./gen.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

const OPTIONS: [string, ByteDumpsOptions][] = [
  ["canonical", { sortKeys: true, itemSep: ",", keySep: ":", indent: null, ensureAscii: true, rawNumbers: false }],
  ["default", { sortKeys: false, itemSep: ", ", keySep: ": ", indent: null, ensureAscii: true, rawNumbers: false }],
  ["indent2-sorted", { sortKeys: true, itemSep: ",", keySep: ": ", indent: 2, ensureAscii: true, rawNumbers: false }],
  ["display", { sortKeys: false, itemSep: ",", keySep: ": ", indent: 2, ensureAscii: false, rawNumbers: true }],
];

/** Python's arguments for OPTIONS (its indented encoder is pure Python: too slow for these sizes). */
const PY_KWARGS: Record<string, string> = {
  canonical: "sort_keys=True, separators=(',', ':')",
  default: "",
};

const CHUNK = 1 << 16;

/** The value at 0 encoded with onChunk (pieces joined), and the largest the sink grew. */
function streamed(b: Uint8Array, opts: ByteDumpsOptions): { bytes: Uint8Array; sinkBytes: number } {
  const pieces: Uint8Array[] = [];
  const e = new BytesEncoder(b, opts, new ByteSink(4096), (p) => pieces.push(p.slice()), CHUNK);
  e.value(0);
  e.finish();
  return { bytes: Buffer.concat(pieces), sinkBytes: e.out.buf.length };
}

/** Many small members: a filler that makes an object long without a long member. */
function filler(prefix: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`"${prefix}${(n - i).toString(36)}": {"z": ${i}.5, "a": "x\\u00e9y", "m": [1, null, true]}`);
  return out;
}

/** A long array of small unsorted objects (streams as an array does). */
function longArray(n: number): string {
  return "[" + Array.from({ length: n }, (_, i) => `{"c": [${i}, null], "b": "xy", "a": 1.5}`).join(", ") + "]";
}

/** Objects of several megabytes, well past the streaming size, with every hazard of member order. */
const LONG: string[] = [
  // duplicate keys: the last value wins, at the first key's place (unsorted forms)
  "{" + [`"b": 1`, ...filler("k", 80000), `"a": {"dup": 1}`, `"b": [2, 3]`, `"a": {"dup": 2, "\\u0061": 3, "a": 4}`].join(", ") + "}",
  // a duplicate spelled two ways, non-ASCII and astral keys, keys needing escapes, sorted by code point
  "{" + [
    `"\\u00e9t\\u00e9": "escaped"`,
    ...filler("\u00e9", 80000),
    `"été": "raw"`,
    `"\u{1F680}": 1`,
    `"\\ud83d\\ude80x": 2`,
    `"\uffff": 3`,
    `"q\\"uote": 4`,
    `"back\\\\slash": 5`,
    `"nl\\nkey\\t": 6`,
    `"ctl\\u0001": 7`,
    `"": 8`,
    `"\\u007f": 9`,
  ].join(", ") + "}",
  // nested long objects inside a long object, next to a long array and short objects
  `{"zz": {"y": ${longArray(120000)}, "x": {${filler("n", 48000).join(", ")}}, "x": {"short": [1.0, 1e16, -0.0]}}, "k\\u00e9y": {"b": 2, "a": 1}, "aa": ${longArray(80000)}, "m": "tail", "aa": "last"}`,
  // long strings inside a long object: handed over in pieces too
  `{"b": {"text": "${String.raw`R\u00e9sum\u00e9 \"q\" \ud83d\ude80 `.repeat(240_000)}é🚀", "a": 1}, "a": "${"plain ".repeat(1_200_000)}"}`,
  // whitespace everywhere JSON allows it
  "{ \n" + filler("w", 80000).join(" ,\r\n\t ") + ' , "w1" :\t{ "dup" : 1 } \n}',
];

afterAll(() => {
  setStreamObjectMin(1 << 20);
});

describe("a long object streams in its output order", () => {
  const docs = LONG.map((t) => enc.encode(t));

  test("the fixtures are valid JSON objects past the streaming size", () => {
    for (const b of docs) {
      expect(b.length).toBeGreaterThan(1 << 20);
      expect(isUtf8(b)).toBe(true);
      expect(validateBytes(b).members).not.toBeNull();
    }
  });

  test("streamed = buffered, for every form, and the sink stays small", () => {
    for (const b of docs) {
      for (const [name, opts] of OPTIONS) {
        const whole = dumpsBytes(b, 0, opts);
        const s = streamed(b, opts);
        expect({ name, same: Buffer.compare(s.bytes, whole) === 0 }).toEqual({ name, same: true });
        // buffering the object would grow the sink to the whole output; streamed, it holds about the streaming size
        expect(s.sinkBytes).toBeLessThan(3 << 20);
        expect(whole.length).toBeGreaterThan(4 << 20);
      }
    }
  });

  test("streamed = Python's json.dumps (sorted canonical, and default: first place, last value)", () => {
    const jobs: { text: string; kwargs: string[] }[] = [];
    const ours: string[] = [];
    const forms = OPTIONS.filter(([name]) => PY_KWARGS[name] !== undefined);
    for (const t of LONG) {
      const b = enc.encode(t);
      jobs.push({ text: t, kwargs: forms.map(([name]) => PY_KWARGS[name]!) });
      for (const [, opts] of forms) ours.push(new Bun.CryptoHasher("sha256").update(streamed(b, opts).bytes).digest("hex"));
    }
    const py = runPython(
      `
import json, sys, hashlib
out = []
for job in json.load(sys.stdin):
    v = json.loads(job["text"])
    for kwargs in job["kwargs"]:
        out.append(hashlib.sha256(eval("json.dumps(v, " + kwargs + ")").encode("utf-8")).hexdigest())
print(json.dumps(out))
`,
      jobs,
    ) as string[];
    expect(ours).toEqual(py);
  });
});

describe("every object streamed (the streaming size lowered to 0)", () => {
  test("random hostile objects: streamed = buffered, in every form", () => {
    setStreamObjectMin(0);
    try {
      let checked = 0;
      for (let seed = 1; seed <= 600; seed++) {
        const g = new Gen(seed);
        const text = dec.decode(enc.encode(g.objectText(1, seed % 3 === 0 ? 20 : 1)));
        const b = enc.encode(text);
        if (!isUtf8(b)) continue;
        try {
          validateBytes(b);
        } catch {
          continue;
        }
        if (b[0] !== 0x7b) continue;
        for (const [name, opts] of OPTIONS) {
          const whole = dumpsBytes(b, 0, opts);
          const s = streamed(b, opts);
          if (Buffer.compare(s.bytes, whole) !== 0) throw new Error(`seed ${seed} ${name}: ${dec.decode(s.bytes)} != ${dec.decode(whole)}`);
        }
        checked++;
      }
      expect(checked).toBeGreaterThan(300);
    } finally {
      setStreamObjectMin(1 << 20);
    }
  });
});

describe("a long string written in pieces", () => {
  // Escaped surrogate pairs end to end (without ensure_ascii a pair is one character: never cut), and a long plain run.
  const pairs = "\\ud83d\\ude80".repeat(200_000);
  const mixed = String.raw`\ud83d\ude80\u00e9 \n\"q\\ é` + "\u{1F680}";
  const STRINGS = [
    `"${pairs}"`,
    `"x${pairs}"`,
    `"${mixed.repeat(80_000)}\\ud83d"`,
    `"${"\\ud83d".repeat(300_000)}\\ude80"`,
    `"${"plain ascii ".repeat(250_000)}é"`,
  ];

  test("pieces joined = the token encoded whole, with and without ensure_ascii", () => {
    for (const text of STRINGS) {
      const b = enc.encode(text);
      expect(b.length).toBeGreaterThan(1 << 20);
      for (const ascii of [true, false]) {
        const whole = new ByteSink();
        encodeStringToken(b, 0, whole, ascii);
        for (const chunk of [1 << 16, 1 << 20]) {
          const pieces: Uint8Array[] = [];
          const sink = new ByteSink(4096);
          encodeStringPieces(b, sink, (p) => pieces.push(p.slice()), chunk, ascii);
          expect({ ascii, chunk, same: Buffer.compare(Buffer.concat(pieces), whole.view()) === 0 }).toEqual({ ascii, chunk, same: true });
          // each piece is handed over near the chunk size, not the whole string's output
          expect(sink.buf.length).toBeLessThanOrEqual(8 * chunk);
        }
      }
    }
  });
});
