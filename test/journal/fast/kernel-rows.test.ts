/**
 * The kernel's safety property, row by row: whenever the WebAssembly kernel
 * takes a row, the exact reader reads the line as a row and the payload
 * hash the kernel computed is the exact encoder's (`payloadHash` of the
 * parsed row). Rows it refuses go to the exact path, so refusing is always
 * safe; accepting wrongly is the only possible bug. (These checks were the
 * JavaScript scanner's until the kernel took over its verify role.)
 */
import { describe, expect, test } from "bun:test";
import { KernelMode, VerifyKernel } from "../../../src/journal/fast/kernel.ts";
import { eventHash, payloadHash } from "../../../src/journal/hash.ts";
import { classifyLine } from "../../../src/journal/reader.ts";
import { pyStr } from "../../../src/pyjson/python.ts";
import { runPython } from "../../helpers/python.ts";
import { prng, stringToken, valueToken, type Rand } from "./rows.ts";

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");
const PREV = "ab".repeat(32);
const PH = "cd".repeat(32);
const EH = "ef".repeat(32);

// room for a row with a map of thousands of keys
const kernel = new VerifyKernel(1 << 18);

/** Load `line` + LF into the kernel's read area; returns the data's end (where the sentinel goes). */
function load(line: string): number {
  const bytes = encoder.encode(line + "\n");
  kernel.lines.set(bytes, 0);
  kernel.lines[bytes.length] = 10;
  return bytes.length;
}

/** Whether the kernel's canonical-form check takes the line (Classify: no links, no hashes). */
function spelledRight(line: string): boolean {
  kernel.verify(0, load(line), 0, KernelMode.Classify);
  return kernel.rows === 1;
}

/** The line with its stored payload and event hash made the exact ones (null: Python reads no row). */
function hashedExactly(line: string): { line: string; ph: string } | null {
  const v = classifyLine(encoder.encode(line));
  if (v.kind !== "row") return null;
  const type = pyStr(v.row.get("event"), "");
  const ph = payloadHash(type, v.row);
  return { line: line.replace(PH, ph).replace(EH, eventHash(PREV, type, ph, 0)), ph };
}

/** The kernel verifies the line as a range's first row (linked to its own prev_hash, at position 0). */
function takes(line: string): boolean {
  kernel.verify(0, load(line), 0, KernelMode.First);
  return kernel.rows === 1;
}

/** A row with Python's envelope and the given payload members (already spelled). */
function row(type: string, members: string[]): string {
  const head = `{"ts": 1727000000.25, "elapsed_s": 0.5, "index": 0, "event": ${type}, "prev_hash": "${PREV}", "payload_hash": "${PH}", "event_hash": "${EH}"`;
  return head + members.map((m) => ", " + m).join("") + "}";
}

const KEYS = ["agent_id", "model", "cost_usd", "tokens", "files", "a", "Z", "_", "a b", "zz", "10", "9", "é", 'a"b', "🚀", "\uffff", "a\n", "中", "event", "ts", "hash_profile"];

function randomRow(r: Rand): string {
  const type = r() < 0.9 ? stringToken(r, ["task_claimed", "tool_call", "é/x", 'a"b'][Math.floor(r() * 4)]) : valueToken(r, 2);
  const members: string[] = [];
  const n = Math.floor(r() * 6);
  for (let k = 0; k < n; k++) {
    const key = KEYS[Math.floor(r() * (r() < 0.05 ? KEYS.length : KEYS.length - 5))]!;
    members.push(`${stringToken(r, key)}: ${valueToken(r, 0)}`);
  }
  return row(type, members);
}

describe("the kernel on single rows", () => {
  test("accepted rows are rows and hash exactly as the exact path does (20,000 seeded random spellings)", () => {
    const r = prng(20260901);
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 20000; i++) {
      const line = randomRow(r);
      const ok = spelledRight(line);
      const exact = hashedExactly(line);
      if (ok) {
        // Accepting means: Python reads this line as a row, and its hashes are the exact ones.
        expect([line, exact !== null]).toEqual([line, true]);
        expect([line, takes(exact!.line)]).toEqual([line, true]);
        expect([line, latin1.decode(kernel.payloadHex)]).toEqual([line, exact!.ph]);
        accepted++;
      } else {
        // A spelling it refuses it refuses whatever the hashes say.
        if (exact !== null) expect([line, takes(exact.line)]).toEqual([line, false]);
        refused++;
      }
    }
    // The generator must exercise both sides substantially.
    expect(accepted).toBeGreaterThan(2000);
    expect(refused).toBeGreaterThan(2000);
  });

  test("maps of many keys in the order they were filled (by their heads, or Shell's sort past the table's room): taken exactly when no key repeats, hashed exactly", () => {
    const r = prng(20261208);
    let taken = 0;
    for (let round = 0; round < 300; round++) {
      // up to the member table's 4,096 entries: the larger maps are past the room the sort by heads needs (Shell's sort)
      const n = [17, 24, 58, 133, 302, 702, 1000, 2500][round % 8]! + Math.floor(r() * 5);
      const keys = Array.from({ length: n }, (_, i) => (i % 9 === 4 ? `m\\u00e9_${i}` : `src/module_${String(i).padStart(4, "0")}.py`));
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [keys[i], keys[j]] = [keys[j]!, keys[i]!];
      }
      const repeats = round % 4 === 1;
      if (repeats) keys.splice(Math.floor(r() * n), 0, keys[Math.floor(r() * n)]!);
      const map = "{" + keys.map((k, i) => `"${k}": ${i}`).join(", ") + "}";
      // as a nested map and as the payload's own members
      const members = round % 2 === 0 ? [`"by_file": ${map}`, '"n": 1'] : keys.map((k, i) => `"${k}": ${i}`);
      const exact = hashedExactly(row('"coverage"', members));
      expect(exact).not.toBeNull();
      const ok = takes(exact!.line);
      expect({ round, n, ok }).toEqual({ round, n, ok: !repeats });
      if (ok) {
        expect(latin1.decode(kernel.payloadHex)).toBe(exact!.ph);
        taken++;
      }
    }
    expect(taken).toBeGreaterThan(200);
  });

  test("maps of many keys sorted by their first sixteen bytes: heads of each other, long shared heads, escapes at every position", () => {
    const r = prng(20261207);
    // Python's spelling of each key's text (ensure_ascii): é, DEL and 🚀 escaped
    const family = (i: number): string => {
      const long = "pkg/components/widgets/module_";
      switch (i % 8) {
        case 0:
          return long.slice(0, 1 + (i % long.length)); // heads of one another, 1 to 30 bytes
        case 1:
          return `${long}${String(i).padStart(5, "0")}.py`; // the first 16+ bytes shared
        case 2:
          return `${"y".repeat(i % 21)}\\u00e9${i}`; // an escape at every position to 20
        case 3:
          return `${"y".repeat(i % 19)}\\n${i}`; // a short escape
        case 4:
          return `${"y".repeat(i % 17)}\\u007f${i}`; // DEL: escaped, it sorts above "~", its backslash below
        case 5:
          return `a${"~".repeat(i % 12)}\\ud83d\\ude80${i}`; // an astral character, escaped as a pair
        case 6:
          return `${i % 97}${["", "!", " "][i % 3]}`; // short keys, and keys one of them is the head of (a byte below the quote after it)
        default:
          return `y${"y".repeat(i % 23)}`; // keys ending where another's escape begins
      }
    };
    let taken = 0;
    for (let round = 0; round < 160; round++) {
      const n = [17, 25, 64, 130, 257, 700][round % 6]! + Math.floor(r() * 7);
      const keys = [...new Set(Array.from({ length: n * 2 }, (_, i) => family(i + round * 7)))].slice(0, n);
      for (let i = keys.length - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [keys[i], keys[j]] = [keys[j]!, keys[i]!];
      }
      const repeats = round % 4 === 1;
      if (repeats) keys.splice(Math.floor(r() * keys.length), 0, keys[Math.floor(r() * keys.length)]!);
      const pairs = keys.map((k, i) => `"${k}": ${i}`);
      const members = round % 2 === 0 ? [`"by_key": {${pairs.join(", ")}}`, '"n": 1'] : pairs;
      const exact = hashedExactly(row('"coverage"', members));
      expect(exact).not.toBeNull();
      // a repeat is refused by the sort itself, before any hash (the canonical-form check hashes nothing)
      expect({ round, classified: spelledRight(exact!.line) }).toEqual({ round, classified: !repeats });
      const ok = takes(exact!.line);
      expect({ round, n: keys.length, ok }).toEqual({ round, n: keys.length, ok: !repeats });
      if (ok) {
        expect(latin1.decode(kernel.payloadHex)).toBe(exact!.ph);
        taken++;
      }
    }
    expect(taken).toBeGreaterThan(100);
  });

  test("foreign spellings are refused, canonical ones accepted", () => {
    const accept = [
      '"k": "x\\u00e9"', '"k": 1.5', '"k": [1, {"b": 2, "a": 1}]', '"k": "\\ud83d\\ude80"', '"k": NaN', '"k": -0.0', '"k": "\\u007f"',
      // escaped keys, as Python's writer spells non-ASCII and control characters, sorted by their code points
      '"k\\u00e9": 1', // escaped key
      '"\\u00e9": 1, "z": 2', // é after z, though its backslash sorts before z
      '"k": {"\\u00e9": 1, "z": 2, "\\n": 3, "\\\\": 4, "\\"": 5}',
      '"k": {"\\ud83d\\ude80": 1, "\\uffff": 2, "\\ue000": 3, "\\udcff": 4}', // a surrogate pair is one code point, past U+FFFF
    ];
    const refuse = [
      '"k": "x\u00e9"', // raw UTF-8
      '"k": "a\\/b"',
      '"k": "\\u00E9"', // uppercase hex
      '"k": "\\u0041"', // needless escape
      '"k": "\\u000a"', // \n has a short form
      '"k": 1E5',
      '"k": 1.50',
      '"k": -0',
      '"k": 1, "k": 2', // duplicate key
      '"k\\u00E9": 1', // a key's uppercase hex
      '"\\u0041": 1', // a key's needless escape
      '"k\u00e9": 1', // a key's raw UTF-8
      '"\\u00e9": 1, "\\u00e9": 2', // duplicate escaped key
      '"k": {"\\ud83d\\ude80": 1, "\\ud83d\\ude80": 2}',
      '"hash_profile": "py-json-v1"',
      '"k": "\x7f"', // raw DEL
    ];
    const exactly = (p: string) => hashedExactly(row('"e"', [p]))!.line;
    for (const p of accept) expect([p, takes(exactly(p))]).toEqual([p, true]);
    for (const p of refuse) expect([p, takes(exactly(p))]).toEqual([p, false]);
    // whitespace Python would strip, and trailing data, go to the exact path too
    expect(takes(" " + exactly('"k": 1'))).toBe(false);
    expect(takes(exactly('"k": 1') + " ")).toBe(false);
  });

  test("a string's first special byte at every position of a word, in key and value: taken exactly when Python's spelling", () => {
    // The string scan skips plain bytes eight at a time and takes the first
    // special byte's position from the word's flags; each special byte is
    // placed at offsets 0..17 from the string's start (and after an escape),
    // with bytes whose SWAR arithmetic carries or borrows (0x7f, 0xff-range
    // UTF-8, controls, a space) on both sides of it.
    const specials = ['"', "\\n", "\\u00e9", "\\u007f", "\x7f", "\u00ff", "\x01", "\t", "\\/"];
    const fillers = ["a", " ", "~", "!", "#", "["];
    let taken = 0;
    for (const sp of specials) {
      for (let at = 0; at < 18; at++) {
        for (const f of fillers) {
          const before = f.repeat(at);
          for (const after of ["", "zz", "\x7f", "\u00e9"]) {
            const value = sp === '"' ? `"${before}"` : `"${before}${sp}${after}"`;
            const key = sp === '"' || sp.startsWith("\\") ? `"k${before}"` : `"k"`;
            for (const p of [`${key}: ${value}`, `"k": "\\t${before}${sp === '"' ? "" : sp}"`]) {
              const line = row('"e"', [p]);
              const exact = hashedExactly(line);
              const ok = spelledRight(line);
              if (ok) {
                expect([p, exact !== null]).toEqual([p, true]);
                expect([p, takes(exact!.line)]).toEqual([p, true]);
                expect([p, latin1.decode(kernel.payloadHex)]).toEqual([p, exact!.ph]);
                taken++;
              } else if (exact !== null) {
                // refused: only spellings Python's writer would not produce
                expect([p, /\\\/|\x7f|\u00e9|\u00ff|\x01|\t/.test(p)]).toEqual([p, true]);
              }
            }
          }
        }
      }
    }
    expect(taken).toBeGreaterThan(1000);
  });

  test("float spellings: the kernel's repr check agrees with Python's repr (one python3 process)", () => {
    const r = prng(7);
    const lexemes: string[] = [];
    const digits = () => String(Math.floor(r() * 10));
    for (let i = 0; i < 3000; i++) {
      let int = String(Math.floor(r() * 10 ** Math.floor(r() * 18)));
      if (r() < 0.3) int = "0";
      let frac = "";
      const fl = 1 + Math.floor(r() * 18);
      for (let k = 0; k < fl; k++) frac += r() < 0.3 ? "0" : digits();
      lexemes.push((r() < 0.2 ? "-" : "") + int + "." + frac);
    }
    lexemes.push("0.0001", "0.00001", "1234567890123456.0", "123456789012345.0", "1e-05", "1.0", "-0.0", "0.1", "0.30000000000000004");
    const py = runPython(
      "import json,sys\nxs=json.load(sys.stdin)\nprint(json.dumps([repr(float(x))==x for x in xs]))",
      lexemes,
    ) as boolean[];
    lexemes.forEach((x, i) => {
      expect([x, spelledRight(row('"e"', [`"k": ${x}`]))]).toEqual([x, py[i]]);
    });
  });

  test("line ends: LF, CRLF and a lone CR end a row; a CR at the data's end is left to the caller", () => {
    const line = hashedExactly(row('"e"', ['"k": 1']))!.line;
    for (const [end, next] of [["\n", 1], ["\r\n", 2], ["\rX", 1]] as const) {
      const bytes = encoder.encode(line + end);
      kernel.lines.set(bytes, 0);
      kernel.lines[bytes.length] = 10;
      const q = kernel.verify(0, bytes.length, 0, KernelMode.First);
      expect([end, kernel.rows, q]).toEqual([end, 1, line.length + next]);
    }
    const bytes = encoder.encode(line + "\r");
    kernel.lines.set(bytes, 0);
    kernel.lines[bytes.length] = 10;
    expect([kernel.verify(0, bytes.length, 0, KernelMode.First), kernel.rows]).toEqual([0, 0]);
  });
});
