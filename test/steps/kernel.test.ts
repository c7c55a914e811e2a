/**
 * The WebAssembly step kernel (src/steps/kernel.wat) takes canonical rows
 * that check out, in bulk, and leaves every other row to the JavaScript
 * path. Its safety property: a step journal walked with the kernel gives
 * exactly the walk without it (head, steps, errors in order, the exception
 * of a malformed receipt, the verdict), on the writer's journals, on rows
 * spelled every way, on tampered copies, under every line break and chunk
 * size. And it must actually run: the rows it takes are counted.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mulberry32 } from "../../tools/fuzz/rng.ts";
import { canonical } from "../../src/pyjson/encode.ts";
import { parse } from "../../src/pyjson/parse.ts";
import type { PyLike } from "../../src/pyjson/types.ts";
import { pyFloat } from "../../src/pyjson/types.ts";
import { verifyReceipt } from "../../src/receipts/verify.ts";
import { GENESIS_HASH, stepHash } from "../../src/steps/hash.ts";
import { setStepKernelEnabled, stepKernelStats } from "../../src/steps/kernel.ts";
import { MAX_DEPTH } from "../../src/codec/bytes.ts";
import { LineSplitter } from "../../src/fsutil/lines.ts";
import { ChainWalker, rowHashFields } from "../../src/steps/walk.ts";
import { StepJournal } from "../../src/steps/writer.ts";
import { craftTar } from "../receipts/tarcraft.ts";

const tmp = mkdtempSync(join(tmpdir(), "steps-kernel-"));
afterAll(() => {
  setStepKernelEnabled(true);
  rmSync(tmp, { recursive: true, force: true });
});

type Rand = () => number;
const prng: (seed: number) => Rand = mulberry32;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

interface Walk {
  /** What the walk ended in: its result, or the exception it threw. */
  outcome: { head: string; steps: number; errors: string[] } | { thrown: string };
  kernelRows: number;
}

/**
 * One journal member walked the way the receipt verifier's JournalFeed
 * walks it (chunks read into the walker's arena, a `\n` appended to a
 * member that lacks one), `chunk` bytes at a time. `fresh`: the chunks are
 * buffers of their own (a gzip receipt's inflated output), not the arena.
 */
function walk(journal: Uint8Array, chunk: number, kernel: boolean, maxLineBytes = 1 << 20, fresh = false): Walk {
  setStepKernelEnabled(kernel);
  const before = stepKernelStats.rows;
  const walker = new ChainWalker("receipt", maxLineBytes);
  const splitter = new LineSplitter("splitlines", (line, n) => walker.line(line, n), maxLineBytes, walker.probe, walker);
  const buf = walker.readBuffer();
  try {
    for (let off = 0; off < journal.length; off += chunk) {
      const part = journal.subarray(off, Math.min(off + chunk, journal.length));
      if (fresh) {
        splitter.push(part.slice());
        continue;
      }
      buf.set(part);
      splitter.push(buf.subarray(0, part.length));
    }
    if (journal.length > 0 && journal[journal.length - 1] !== 0x0a) splitter.push(new Uint8Array([0x0a]));
    splitter.end();
    const r = walker.result();
    return { outcome: { head: r.head_hash, steps: r.steps, errors: r.errors }, kernelRows: stepKernelStats.rows - before };
  } catch (err) {
    return { outcome: { thrown: `${(err as Error).constructor.name}: ${(err as Error).message}` }, kernelRows: stepKernelStats.rows - before };
  } finally {
    // the next walk takes this one's kernel memory (what release promises: no trace of this walk in it)
    walker.release();
    setStepKernelEnabled(true);
  }
}

/** Walk with and without the kernel, expect the same outcome; the rows the kernel took. */
function same(journal: Uint8Array, chunk: number, maxLineBytes?: number): number {
  const off = walk(journal, chunk, false, maxLineBytes);
  const on = walk(journal, chunk, true, maxLineBytes);
  expect(off.kernelRows).toBe(0);
  expect(on.outcome).toEqual(off.outcome);
  expect(walk(journal, chunk, true, maxLineBytes, true).outcome).toEqual(off.outcome);
  return on.kernelRows;
}

const enc = new TextEncoder();
const CHUNKS = [1, 7, 64, 333, 4096, 1 << 20];

/**
 * A journal from the project's step writer, with every kind of hashed
 * value. `escapedInputs`: some input_hash values need escapes, which the
 * fast path leaves to the general one (so the kernel must too).
 */
function writerJournal(rows: number, seed: number, escapedInputs = false): Uint8Array {
  const r = prng(seed);
  const dir = mkdtempSync(join(tmp, "sdd-"));
  const j = StepJournal.open(dir, "agent");
  const values: PyLike[] = [
    null, true, false, 0, -7, 12345678901234567890n, pyFloat(1), pyFloat(1.5), pyFloat(1e16), pyFloat(1e-5), pyFloat(0.1 + 0.2),
    pyFloat(NaN), pyFloat(-Infinity), pyFloat(-0), "plain", "café ✓ \u2028 \ud83d\ude00", "ctl \u0001\u007f \t\n\r\b\f \\ \" /", "",
    [], {}, [1, pyFloat(2.5), null], { z: 1, a: [true, { y: "x", b: pyFloat(3.25) }], "": 0 },
  ];
  for (let i = 0; i < rows; i++) {
    j.append({
      input_hash: r() < 0.9 ? Bun.SHA256.hash(String(i), "hex") : pick(r, escapedInputs ? ["", "in\u00e9", 'q"q'] : ["", "in"]),
      model: pick(r, ["claude-sonnet-4-5", null, "m\u00e9"]),
      prompt: r() < 0.5 ? `Step ${i}: do things` : (pick(r, values) as never),
      tool_call: pick(r, values) as never,
      tool_result: pick(r, values) as never,
      effort: pick(r, [null, null, "high", "", "low"]),
      blob_refs: r() < 0.2 ? ["sha256:" + "a".repeat(64)] : [],
    });
  }
  j.close();
  return new Uint8Array(readFileSync(join(dir, "runtime", "journal", "agent", "000000.jsonl")));
}

/**
 * Raw spellings of a value: canonical ones and every kind the kernel (and
 * the JavaScript fast path) must refuse.
 */
// (a value of the row's object is at depth 2: nested MAX_DEPTH - 1 deep, its deepest container is the codec's bound)
const CANONICAL_TOKENS = [
  "null", "true", "1", "-3", "1.5", "1e+16", "1e-05", "NaN", "-Infinity", '"x"', '"caf\\u00e9"', '"a\\nb"', "[]", "{}", '[1,2.5,null]', '{"a":1,"b":[true,{"c":"d"}]}',
  "[".repeat(MAX_DEPTH - 1) + "]".repeat(MAX_DEPTH - 1), '[' + '{"a":['.repeat((MAX_DEPTH - 2) / 2) + '"caf\\u00e9"' + "]}".repeat((MAX_DEPTH - 2) / 2) + "]",
];
const FOREIGN_TOKENS = [
  '"caf\\u00E9"', '"a\\/b"', '"\\u0041"', '"\\u0009"', '"caf\u00e9"', "1E5", "1.50", "1e16", "100000000000000000.0", "-0", "1.0e2",
  "[1, 2]", '{"b":1,"a":2}', '{"a":1,"a":2}', '{"a" :1}', '{"\\u0061":1}', "[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH), "0.00001",
];

interface Spelling {
  /** Members in the order written, as [key, raw value]; the placeholders PREV and STEP are filled in. */
  members: [string, string][];
  /** Text transform of the whole row (spaces, line breaks). */
  text?: (row: string) => string;
  /**
   * Hash the row as a kernel that trusted its spelling would: the pre-image
   * assembled from the raw values. The general path then finds a step_hash
   * mismatch (unless the spelling is canonical), so a kernel taking such a
   * row would change the verdict.
   */
  rawHash?: boolean;
}

const PREV = "<<PREV>>";
const STEP = "S".repeat(64);

/** Build rows of the given spellings into a chain; each row's hashes are those the general path computes from its values. */
function chain(spellings: Spelling[]): Uint8Array {
  const lines: string[] = [];
  let prev = GENESIS_HASH;
  for (const s of spellings) {
    const body = "{" + s.members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",") + "}";
    let row = (s.text ?? ((x: string) => x))(body.replace(PREV, prev));
    try {
      const parsed = parse(row.trim());
      if (parsed instanceof Map && row.includes(STEP)) {
        const h = s.rawHash ? (Bun.SHA256.hash(rawPreimage(s.members, prev), "hex") as string) : stepHash(rowHashFields(parsed));
        row = row.replace(STEP, h);
        prev = h;
      }
    } catch {
      /* not JSON: left as is (an error both ways) */
    }
    lines.push(row);
  }
  return enc.encode(lines.join("\n") + "\n");
}

/** The step-hash pre-image spelled with the row's raw values (absent ones null, a null effort omitted). */
function rawPreimage(members: [string, string][], prev: string): string {
  const raw = (k: string) => members.find(([key]) => key === k)?.[1].replace(PREV, prev) ?? "null";
  const effort = raw("effort") === "null" ? "" : `"effort":${raw("effort")},`;
  const rest = ["input_hash", "model", "prev_hash", "prompt", "tool_call", "tool_result"].map((k) => `"${k}":${raw(k)}`);
  return `{${effort}${rest.join(",")}}`;
}

/** A canonical row's members (sorted keys), `seq` its position. */
function canonicalMembers(r: Rand, seq: number): [string, string][] {
  const m: [string, string][] = [
    ["blob_refs", "[]"],
    ["input_hash", canonical(Bun.SHA256.hash(String(seq), "hex") as string)],
    ["model", pick(r, ['"m"', "null"])],
    ["prev_hash", `"${PREV}"`],
    ["prompt", pick(r, CANONICAL_TOKENS)],
    ["schema_version", "2"],
    ["seq", String(seq)],
    ["step_hash", `"${STEP}"`],
    ["tool_call", pick(r, CANONICAL_TOKENS)],
    ["tool_result", pick(r, CANONICAL_TOKENS)],
    ["ts", pick(r, ["1796055084.2827866", "1E5", "-0", "1.50"])],
  ];
  const effort = r();
  if (effort < 0.25) m.splice(1, 0, ["effort", "null"]);
  else if (effort < 0.5) m.splice(1, 0, ["effort", pick(r, ['"high"', "0", "[1]"])]);
  return m;
}

/**
 * A row spelled some way Python's sorted compact writer would not, lacking
 * what the fast path needs, or in error. With `strictly`, never a row the
 * kernel may take (no canonical row with a missing or extra key).
 */
function foreignRow(r: Rand, seq: number, strictly = false): Spelling {
  const row = foreignSpelling(r, seq, strictly);
  return { ...row, rawHash: r() < 0.5 };
}

function foreignSpelling(r: Rand, seq: number, strictly: boolean): Spelling {
  const m = canonicalMembers(r, seq);
  const at = (k: string) => m.findIndex(([key]) => key === k);
  let kind = Math.floor(r() * 12);
  while (strictly && (kind === 4 || kind === 5)) kind = Math.floor(r() * 12);
  switch (kind) {
    case 0: {
      const i = Math.floor(r() * (m.length - 1));
      [m[i], m[i + 1]] = [m[i + 1]!, m[i]!];
      return { members: m };
    }
    case 1:
      return { members: m, text: (t) => t.replace('":', '": ') };
    case 2:
      return { members: m, text: (t) => t.replace(',"', ', "') };
    case 3:
      m[at(pick(r, ["prompt", "tool_call", "tool_result", "model"]))]![1] = pick(r, FOREIGN_TOKENS);
      return { members: m };
    case 4:
      m.splice(at(pick(r, ["model", "prompt", "tool_call", "tool_result", "input_hash", "seq", "step_hash", "prev_hash"])), 1);
      return { members: m };
    case 5:
      m.push(["zz_extra", pick(r, CANONICAL_TOKENS)]);
      m.unshift(["aa_extra", '"x"']);
      m.sort(([a], [b]) => (a < b ? -1 : 1));
      return { members: m };
    case 6:
      m[at("seq")]![1] = pick(r, [`${seq}.0`, "-0", `${seq}e0`, `"${seq}"`, String(seq + 1), "1".repeat(16)]);
      return { members: m };
    case 7:
      m[at("input_hash")]![1] = pick(r, ['"in\\u00e9"', "7", "null", '"a\\"b"']);
      return { members: m };
    case 8:
      m.push(["seq", String(seq)]);
      return { members: m };
    case 9:
      return { members: m, text: (t) => ` ${t}\t` };
    case 10:
      m[at("effort") >= 0 ? at("effort") : at("model")]![1] = pick(r, ["1E5", "1.50", "-0", '"\\u0041"']);
      return { members: m };
    default:
      m[at("prev_hash")]![1] = pick(r, ['"x"', "null", `"${"0".repeat(63)}"`]);
      return { members: m };
  }
}

describe("step kernel: differential against the JavaScript path", () => {
  test("the writer's journals: identical walks, and the kernel takes every row a chunk holds whole", () => {
    const journal = writerJournal(300, 1);
    for (const chunk of CHUNKS) {
      const took = same(journal, chunk);
      if (chunk === 1 << 20) expect(took).toBe(300);
      if (chunk <= 64) expect(took).toBe(0); // every row crosses a chunk boundary: the splitter's carry has it
    }
    expect(same(journal, 4096)).toBeGreaterThan(0);
    // chunks outside the arena (a gzip receipt's) are copied in and taken too
    expect(walk(journal, 1 << 20, true, 1 << 20, true).kernelRows).toBe(300);
  });

  test("rows spelled every way: canonical ones taken, foreign ones left to the JavaScript path", () => {
    for (let seed = 1; seed <= 6; seed++) {
      const r = prng(seed);
      const spellings: Spelling[] = [];
      for (let i = 0; i < 200; i++) spellings.push(r() < 0.5 ? { members: canonicalMembers(r, i) } : foreignRow(r, i));
      const journal = chain(spellings);
      for (const chunk of [5, 1000, 1 << 20]) same(journal, chunk);
      expect(same(journal, 1 << 20)).toBeGreaterThan(20);
    }
  });

  test("canonical spellings only: the kernel takes every row (effort null, absent or set; keys missing or extra)", () => {
    const r = prng(7);
    const spellings: Spelling[] = [];
    for (let i = 0; i < 200; i++) {
      const m = canonicalMembers(r, i);
      if (i % 5 === 1) m.splice(m.findIndex(([k]) => k === pick(r, ["model", "prompt", "tool_call", "tool_result"])), 1);
      if (i % 7 === 2) m.splice(0, 0, ["aa", '"x"']);
      spellings.push({ members: m, rawHash: r() < 0.5 });
    }
    const journal = chain(spellings);
    expect(walk(journal, 1 << 20, false).outcome).toMatchObject({ errors: [] });
    expect(same(journal, 1 << 20)).toBe(200);
  });

  test("a chunk ending right after a row's closing brace: the row is left to the splitter", () => {
    const journal = writerJournal(20, 8);
    const text = new TextDecoder().decode(journal);
    const first = text.indexOf("\n");
    // A later row in error, so a shifted line number would show.
    const tampered = text.replace('"seq":15,', '"seq":16,');
    for (const after of ["\n", "x\n", "\r\n", " \n", "\u2028\n"]) {
      const t = enc.encode(tampered.slice(0, first) + after + tampered.slice(first + 1));
      same(t, first);
      same(t, first + after.length);
    }
  });

  test("a journal of foreign spellings only: the kernel takes none", () => {
    const r = prng(99);
    const spellings: Spelling[] = [];
    for (let i = 0; i < 300; i++) spellings.push(foreignRow(r, i, true));
    const journal = chain(spellings);
    expect(same(journal, 1 << 20)).toBe(0);
    expect(same(journal, 999)).toBe(0);
    expect((walk(journal, 1 << 20, false).outcome as { errors: string[] }).errors.length).toBeGreaterThan(0);
  });

  test("after a run of rows it refused, the kernel is asked again (more rarely) and takes the canonical rows that follow", () => {
    const r = prng(11);
    const spellings: Spelling[] = [];
    for (let i = 0; i < 60; i++) spellings.push({ ...foreignRow(r, i, true), rawHash: false });
    for (let i = 60; i < 200; i++) spellings.push({ members: canonicalMembers(r, i) });
    const journal = chain(spellings);
    const took = same(journal, 1 << 20);
    expect(took).toBeGreaterThan(100);
    expect(took).toBeLessThan(140);
  });

  test("seeded tampering: single bytes, deleted, duplicated and swapped rows", () => {
    const journal = writerJournal(120, 2, true);
    const lines = new TextDecoder().decode(journal).split("\n").slice(0, -1);
    const r = prng(3);
    const BYTES = [0x0a, 0x0d, 0x0b, 0x0c, 0x1c, 0x1d, 0x1e, 0x20, 0x22, 0x2c, 0x30, 0x31, 0x39, 0x5c, 0x61, 0x66, 0x7b, 0x7d, 0x7f, 0x80, 0xc2, 0x85, 0xe2, 0x00];
    for (let n = 0; n < 60; n++) {
      const t = journal.slice();
      for (let k = 0; k < 1 + Math.floor(r() * 2); k++) t[Math.floor(r() * t.length)] = pick(r, BYTES);
      for (const chunk of [777, 1 << 20]) same(t, chunk);
    }
    for (let n = 0; n < 20; n++) {
      const ls = [...lines];
      const i = 1 + Math.floor(r() * (ls.length - 2));
      if (n % 3 === 0) ls.splice(i, 1);
      else if (n % 3 === 1) ls.splice(i, 0, ls[i]!);
      else [ls[i], ls[i + 1]] = [ls[i + 1]!, ls[i]!];
      const took = same(enc.encode(ls.join("\n") + "\n"), 1 << 20);
      expect(took).toBeGreaterThan(0);
      expect(took).toBeLessThan(lines.length + 1);
    }
  });

  test("line breaks of both dialects, blank lines, a missing final newline", () => {
    const journal = writerJournal(40, 4);
    const text = new TextDecoder().decode(journal);
    const variants = [
      text.replaceAll("\n", "\r\n"),
      text.replaceAll("\n", "\r"),
      text.replaceAll("\n", "\v"),
      text.replaceAll("\n", "\x1c"),
      text.replaceAll("\n", "\u2028"),
      text.replaceAll("\n", "\u0085"),
      text.replaceAll("\n", "\n\n"),
      "\n\n" + text.replace(/\n(?=.)/g, "\n   \n"),
      text.replace(/\n(?=.)/, "\r\n"),
      text.slice(0, -1),
      text.replace(/,"seq":/, ',"seq":\u2028'),
    ];
    for (const v of variants) for (const chunk of [3, 100, 1 << 20]) same(enc.encode(v), chunk);
    // CR LF ends a row as LF does (one break to both dialects: Python's text mode on Windows writes it), alone or
    // before a run of LF rows; a lone CR, or a CR CR LF (a row, then a blank line), is left to the splitter.
    expect(same(enc.encode(variants[0]!), 1 << 20)).toBe(40);
    expect(same(enc.encode(variants[8]!), 1 << 20)).toBe(40);
    expect(same(enc.encode(variants[1]!), 1 << 20)).toBe(0);
    const doubled = text.replace(/\n(?=.)/, "\r\r\n");
    for (const chunk of [3, 100, 1 << 20]) same(enc.encode(doubled), chunk);
    expect(same(enc.encode(doubled), 1 << 20)).toBe(39);
  });

  test("overlong lines: the cap applies to the kernel's rows exactly as to the others", () => {
    const journal = writerJournal(30, 5);
    const lengths = new TextDecoder().decode(journal).split("\n").slice(0, -1).map((l) => enc.encode(l).length).sort((a, b) => a - b);
    for (const cap of [lengths[0]! - 1, lengths[0]!, lengths[10]!, lengths[29]! - 1, lengths[29]!]) {
      for (const chunk of [50, 1 << 20]) same(journal, chunk, cap);
    }
    expect(same(journal, 1 << 20, lengths[29]!)).toBe(30);
  });
});

describe("step kernel: receipt verdicts", () => {
  const manifest = (head: string, steps: number) => JSON.stringify({ agent_id: "a", head_hash: head, steps });

  async function verdicts(tar: Uint8Array): Promise<[string, string, number]> {
    const path = join(tmp, `r-${Math.random().toString(36).slice(2)}.tar`);
    writeFileSync(path, tar);
    const run = async (on: boolean) => {
      setStepKernelEnabled(on);
      try {
        return JSON.stringify(await verifyReceipt(path));
      } catch (err) {
        return `${(err as Error).constructor.name}: ${(err as Error).message}`;
      } finally {
        setStepKernelEnabled(true);
      }
    };
    const off = await run(false);
    const before = stepKernelStats.rows;
    const on = await run(true);
    return [off, on, stepKernelStats.rows - before];
  }

  test("identical verdict JSON with and without the kernel", async () => {
    const journal = writerJournal(200, 6);
    const good = walk(journal, 1 << 20, false).outcome as { head: string };
    const text = new TextDecoder().decode(journal);
    const cut = text.indexOf("\n", text.length / 2);
    const cases: Uint8Array[] = [
      craftTar([{ name: "manifest.json", data: manifest(good.head, 200) }, { name: "journal/000000.jsonl", data: journal }]),
      craftTar([{ name: "manifest.json", data: manifest("x", 7) }, { name: "journal/000000.jsonl", data: journal }]),
      // Members split mid-row and at a row boundary; members out of name order.
      craftTar([
        { name: "manifest.json", data: manifest(good.head, 200) },
        { name: "journal/000000.jsonl", data: text.slice(0, cut - 10) },
        { name: "journal/000001.jsonl", data: text.slice(cut - 10, cut + 1) },
        { name: "journal/000002.jsonl", data: text.slice(cut + 1) },
      ]),
      craftTar([
        { name: "manifest.json", data: manifest(good.head, 200) },
        { name: "journal/000001.jsonl", data: text.slice(cut + 1) },
        { name: "journal/000000.jsonl", data: text.slice(0, cut + 1) },
      ]),
      craftTar([{ name: "manifest.json", data: manifest(good.head, 200) }, { name: "journal/000000.jsonl", data: text.replace('"seq":5,', '"seq":6,') }]),
      craftTar([{ name: "manifest.json", data: manifest(good.head, 200) }, { name: "journal/000000.jsonl", data: text.replace("\n", "\n\xff\n") }]),
    ];
    const took: number[] = [];
    for (const tar of cases) {
      const [off, on, rows] = await verdicts(tar);
      expect(on).toBe(off);
      took.push(rows);
    }
    expect(JSON.parse((await verdicts(cases[0]!))[1]).ok).toBe(true);
    expect(took[0]).toBe(200);
    // A member ending mid-row gets a line feed (§5b): the chain breaks there, the kernel takes the rows before.
    expect(took[2]).toBeGreaterThan(50);
    expect(took[3]).toBe(200);
    expect(took[4]).toBe(199); // all but the row with the wrong seq
  });
});
