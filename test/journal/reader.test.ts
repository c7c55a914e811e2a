/** The tolerant reader against the reference (Python) load_events on hostile files. */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { classifyLine, loadEvents, readJournal } from "../../src/journal/index.ts";
import { canonical } from "../../src/pyjson/index.ts";
import { runPython } from "../helpers/python.ts";
import { Gen } from "../pyjson/gen.ts";
import { REFERENCE_VERIFIER, tempDirs } from "./tmp.ts";

const dirs = tempDirs("reader");
afterAll(() => dirs.cleanup());

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

describe("classifyLine", () => {
  test("blank lines use Python's whitespace set (\\x1c-\\x1f, \\x85, U+2028 yes; U+FEFF no)", () => {
    for (const s of ["", "  ", "\t\x0b\x0c", "\x1c\x1d\x1e\x1f", "\u0085", "\u2028\u2029\u3000", "\u00a0"]) {
      expect(classifyLine(enc(s)).kind).toBe("blank");
    }
    expect(classifyLine(enc("\ufeff")).kind).toBe("discarded");
    expect(classifyLine(enc("\ufeff{}")).kind).toBe("discarded");
    expect(classifyLine(enc("\x1c{}\u2028")).kind).toBe("row");
  });

  test("invalid UTF-8 is discarded, never replaced; an escaped lone surrogate is kept", () => {
    expect(classifyLine(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).toMatchObject({
      kind: "discarded",
      reason: expect.stringContaining("UTF-8"),
    });
    expect(classifyLine(new Uint8Array([0xed, 0xa0, 0x80])).kind).toBe("discarded"); // encoded surrogate
    expect(classifyLine(new Uint8Array([0xc0, 0xaf])).kind).toBe("discarded"); // overlong
    const kept = classifyLine(enc('{"a": "\\udcff"}'));
    expect(kept.kind).toBe("row");
  });

  test("NaN/Infinity accepted, non-objects and junk discarded", () => {
    expect(classifyLine(enc('{"x": NaN, "y": -Infinity}')).kind).toBe("row");
    expect(classifyLine(enc("[1, 2]"))).toEqual({ kind: "discarded", reason: "non-object row" });
    expect(classifyLine(enc("null")).kind).toBe("discarded");
    expect(classifyLine(enc('{"a": 1,}')).kind).toBe("discarded");
  });
});

describe("readJournal / loadEvents", () => {
  test("400 hostile files: same rows and discarded physical indices as Python's reader", async () => {
    const dir = dirs.make();
    const g = new Gen(161803);
    const files: string[] = [];
    const lineKinds = (): Uint8Array => {
      switch (g.int(12)) {
        case 0:
          return enc(g.pick(["", " ", "\x1c", "\u0085", "\u2028", "\ufeff", "\t \u3000"]));
        case 1:
          return enc(g.pick(["not json", "[]", "1", '"s"', "null", "{", '{"a":1,}', "NaN"]));
        case 2:
          return new Uint8Array([0x7b, 0x7d, 0xff, 0xfe]);
        case 3:
          return new Uint8Array([...enc('{"a": "'), 0xe2, 0x82, ...enc('"}')]); // truncated sequence
        case 4:
          return enc("\ufeff" + g.objectText(1));
        case 5:
          return enc(g.pick(["\x1c", " ", "\u2028"]) + g.objectText(1) + g.pick(["\x1f", "\u0085", ""]));
        default:
          return enc(g.objectText(1));
      }
    };
    for (let i = 0; i < 400; i++) {
      const parts: Uint8Array[] = [];
      for (let k = 0, n = g.int(8); k < n; k++) {
        parts.push(lineKinds(), enc(g.pick(["\n", "\n", "\r\n", "\r"])));
      }
      if (g.chance(0.3)) parts.push(lineKinds()); // unterminated last line
      const p = join(dir, `j${i}.jsonl`);
      writeFileSync(p, Buffer.concat(parts));
      files.push(p);
    }
    const py = runPython(
      `
import json, sys
sys.path.insert(0, ${JSON.stringify(join(REFERENCE_VERIFIER, ".."))})
from verify_journal import load_events
out = []
for f in json.load(sys.stdin):
    events, discarded = load_events(f)
    out.append([[json.dumps(e, sort_keys=True, separators=(",", ":")) for e in events], discarded])
print(json.dumps(out))
`,
      files,
    ) as [string[], number[]][];
    const ours = await Promise.all(
      files.map(async (f) => {
        const { events, discardedLineIndices } = await loadEvents(f);
        return [events.map((e) => canonical(e)), discardedLineIndices];
      }),
    );
    expect(ours).toEqual(py);
    expect(py.some(([, d]) => d.length > 0)).toBe(true);
    expect(py.some(([e]) => e.length > 2)).toBe(true);
  });

  test("items carry physical line numbers and byte offsets; a missing file yields nothing", async () => {
    const dir = dirs.make();
    const p = join(dir, "j.jsonl");
    writeFileSync(p, '{"a": 1}\r\n\r\njunk\r{"b": 2}\n');
    const items = [];
    for await (const it of readJournal(p)) items.push({ kind: it.kind, line: it.line, offset: it.offset });
    expect(items).toEqual([
      { kind: "row", line: 0, offset: 0 },
      { kind: "discarded", line: 2, offset: 12 },
      { kind: "row", line: 3, offset: 17 },
    ]);
    const none = [];
    for await (const it of readJournal(join(dir, "missing.jsonl"))) none.push(it);
    expect(none).toEqual([]);
  });
});
