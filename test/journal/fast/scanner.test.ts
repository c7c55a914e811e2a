/**
 * The fast path's safety property: whenever the byte-level scanner accepts
 * a row, the pre-image it assembled is byte-for-byte the exact encoder's
 * (`payloadPreimage` of the parsed row), and the exact reader reads the
 * line as a row. Rows it refuses go to the exact path, so refusing is
 * always safe; accepting wrongly is the only possible bug.
 */
import { describe, expect, test } from "bun:test";
import { payloadPreimage } from "../../../src/journal/hash.ts";
import { RowScanner, ScanMode } from "../../../src/journal/fast/scanner.ts";
import { classifyLine } from "../../../src/journal/reader.ts";
import { pyStr } from "../../../src/pyjson/python.ts";
import { runPython } from "../../helpers/python.ts";
import { prng, randomRowLine } from "./rows.ts";

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

function load(sc: RowScanner, line: string): number {
  const bytes = encoder.encode(line);
  sc.mem.set(bytes, 0);
  sc.mem[bytes.length] = 10;
  return bytes.length;
}

function outBytes(sc: RowScanner): string {
  const base = (sc as unknown as { outBase: number }).outBase;
  return latin1.decode(sc.mem.subarray(base, base + sc.outLen));
}

describe("RowScanner", () => {
  test("accepted rows assemble exactly the exact pre-image (20,000 seeded random spellings)", () => {
    const sc = new RowScanner(1 << 16);
    const r = prng(20260901);
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 20000; i++) {
      const line = randomRowLine(r);
      const n = load(sc, line);
      const verdict = classifyLine(encoder.encode(line));
      for (const mode of [ScanMode.Classify, ScanMode.Links, ScanMode.Assemble]) {
        // 64-byte hash strings are only located by scan(); the verifier's
        // hex comparisons validate them, confirmTentative() stands in here.
        const ok = sc.scan(0, n, mode) && sc.confirmTentative();
        if (!ok) continue;
        // Accepting means: Python reads this line as a row.
        expect([line, verdict.kind]).toEqual([line, "row"]);
        if (mode === ScanMode.Assemble && verdict.kind === "row") {
          const row = verdict.row;
          const want = payloadPreimage(pyStr(row.get("event"), ""), row);
          expect([line, outBytes(sc)]).toEqual([line, want]);
        }
      }
      if (sc.scan(0, n, ScanMode.Assemble) && sc.confirmTentative()) accepted++;
      else refused++;
    }
    // The generator must exercise both sides substantially.
    expect(accepted).toBeGreaterThan(2000);
    expect(refused).toBeGreaterThan(2000);
  });

  test("foreign spellings are refused, canonical ones accepted", () => {
    const sc = new RowScanner(4096);
    const h = "a".repeat(64);
    const row = (payload: string) => `{"event": "e", "prev_hash": "", "payload_hash": "${h}", "event_hash": "${h}", ${payload}}`;
    const accept = ['"k": "x\\u00e9"', '"k": 1.5', '"k": [1, {"b": 2, "a": 1}]', '"k": "\\ud83d\\ude80"', '"k": NaN', '"k": -0.0', '"k": "\\u007f"'];
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
      '"k\\u00e9": 1', // escaped key
      '"hash_profile": "py-json-v1"',
      '"k": "\x7f"', // raw DEL
    ];
    for (const p of accept) expect([p, sc.scan(0, load(sc, row(p)), ScanMode.Assemble)]).toEqual([p, true]);
    for (const p of refuse) expect([p, sc.scan(0, load(sc, row(p)), ScanMode.Assemble)]).toEqual([p, false]);
    // whitespace Python would strip, and trailing data, go to the exact path too
    expect(sc.scan(0, load(sc, " " + row('"k": 1')), ScanMode.Assemble)).toBe(false);
    expect(sc.scan(0, load(sc, row('"k": 1') + " "), ScanMode.Assemble)).toBe(false);
  });

  test("float spellings: the fast repr check agrees with Python's repr (one python3 process)", () => {
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
    const sc = new RowScanner(4096);
    const h = "a".repeat(64);
    lexemes.forEach((x, i) => {
      const line = `{"event": "e", "prev_hash": "", "payload_hash": "${h}", "event_hash": "${h}", "k": ${x}}`;
      expect([x, sc.scan(0, load(sc, line), ScanMode.Assemble)]).toEqual([x, py[i]]);
    });
  });
});
