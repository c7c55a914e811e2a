import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mutateLines, splitLinesKeep } from "../../tools/fuzz/mutate.ts";
import { Rng } from "../../tools/fuzz/rng.ts";
import { CanonicalRow } from "../../src/steps/canonical-row.ts";
import { LineSplitter } from "../../src/fsutil/lines.ts";
import { ChainWalker, type WalkResult } from "../../src/steps/walk.ts";
import { VECTORS } from "../helpers/cli.ts";
import { listTar } from "../receipts/tarcraft.ts";

const journal = listTar(readFileSync(join(VECTORS, "agent-journal", "agent-a.tar"))).find((m) => m.name === "journal/000000.jsonl")!.data;

/** Journals: the vector and seeded line/byte mutants of it. */
function corpus(n: number): Uint8Array[] {
  const rng = new Rng(0xfa57);
  const out = [journal];
  for (let i = 0; i < n; i++) out.push(mutateLines(rng.fork(), journal));
  return out;
}

/** One scanner for the whole file: whatever state its index keeps carries from row to row, as in a walker. */
const scanner = new CanonicalRow();
const scanCanonicalRow = (line: Uint8Array) => scanner.scanRow(line);
const scanCanonicalRange = (buf: Uint8Array, start: number, end: number) => scanner.scanRange(buf, start, end);

const EMPTY_ROW = new TextEncoder().encode("{}");

function spans(at: number, of: CanonicalRow = scanner): number[] {
  const { spanStart, spanEnd, keyStart } = of;
  const out: number[] = [of.topKeyCount];
  for (let k = 0; k < spanStart.length; k++) {
    out.push(spanStart[k]! < 0 ? -1 : spanStart[k]! - at, spanEnd[k]! < 0 ? -1 : spanEnd[k]! - at);
    if (spanStart[k]! >= 0) out.push(keyStart[k]! - at);
  }
  return out;
}

describe("scanCanonicalRange", () => {
  test("agrees with scanCanonicalRow on a view, whatever bytes surround the range", () => {
    const rng = new Rng(7);
    const around = [0x0a, 0x7d, 0x2c, 0x22, 0x5d, 0x00, 0x20, 0x7b];
    for (const data of corpus(300)) {
      for (const withNl of splitLinesKeep(data)) {
        const line = withNl[withNl.length - 1] === 0x0a ? withNl.subarray(0, withNl.length - 1) : withNl;
        const view = line.slice();
        const ok = scanCanonicalRow(view);
        const want = ok ? spans(0) : null;
        const before = rng.int(9);
        const after = rng.int(9);
        const buf = new Uint8Array(before + line.length + after);
        for (let i = 0; i < buf.length; i++) buf[i] = rng.pick(around);
        buf.set(line, before);
        const got = scanCanonicalRange(buf, before, before + line.length);
        expect(got).toBe(ok);
        if (ok) expect(spans(before)).toEqual(want!);
      }
    }
  });
});

describe("rows scanned one after another (the index's state carried over)", () => {
  /** Rows derived from a canonical row whose keys differ from it in ways a previous row's scan must not hide. */
  function variants(row: string): string[] {
    const o = JSON.parse(row) as Record<string, unknown>;
    const keys = Object.keys(o);
    const enc = (entries: [string, unknown][]) => "{" + entries.map(([k, v]) => JSON.stringify(k) + ":" + JSON.stringify(v)).join(",") + "}";
    const entries = keys.map((k) => [k, o[k]] as [string, unknown]);
    const out: string[] = [];
    for (let i = 0; i + 1 < entries.length; i++) {
      const swapped = [...entries];
      [swapped[i], swapped[i + 1]] = [swapped[i + 1]!, swapped[i]!];
      out.push(enc(swapped)); // two keys out of order
      out.push(enc(entries.map(([k, v], j) => [j === i + 1 ? entries[i]![0] : k, v]))); // a duplicate key
      out.push(enc(entries.filter((_, j) => j !== i))); // one key fewer
      out.push(enc(entries.map(([k, v], j) => [j === i ? k + "x" : k, v]))); // a longer key
      out.push(enc(entries.map(([k, v], j) => [j === i ? k.slice(0, -1) : k, v]))); // a shorter key
      out.push(enc(entries.map(([k, v], j) => [j === i ? entries[i + 1]![0] + "z" : k, v]))); // a new key sorting after the kept key that follows it
    }
    out.push(row.replace(/}$/, ',"zz":1}')); // one key more
    out.push(row.replace('"model"', '"mod\\u0065l"')); // an escaped key
    return out;
  }

  test("a row scanned after other rows gets the verdict and spans of a row scanned afresh", () => {
    const lines: Uint8Array[] = [];
    for (const data of corpus(200)) {
      for (const withNl of splitLinesKeep(data)) {
        lines.push(withNl[withNl.length - 1] === 0x0a ? withNl.subarray(0, withNl.length - 1) : withNl);
      }
    }
    const h = (c: string) => c.repeat(64);
    const base =
      `{"blob_refs":[],"input_hash":"${h("a")}","model":"m-1","prev_hash":"${h("0")}","prompt":"do it\\n",` +
      `"schema_version":2,"seq":3,"step_hash":"${h("b")}","tool_call":{"args":{"line":4},"name":"edit"},"tool_result":{"ok":true},"ts":1.5}`;
    const baseBytes = new TextEncoder().encode(base);
    expect(scanCanonicalRow(baseBytes.slice())).toBe(true);
    for (const v of variants(base)) lines.push(baseBytes, new TextEncoder().encode(v));
    let accepted = 0;
    const afresh = new CanonicalRow();
    for (const line of lines) {
      const kept = scanCanonicalRow(line.slice());
      const keptSpans = kept ? spans(0) : null;
      // a second scanner whose previous row is the empty object: nothing of this corpus carried over
      afresh.scanRow(EMPTY_ROW.slice());
      const fresh = afresh.scanRow(line.slice());
      expect(kept).toBe(fresh);
      if (fresh) {
        accepted++;
        expect(keptSpans).toEqual(spans(0, afresh));
      }
    }
    expect(accepted).toBeGreaterThan(1000);
  });
});

describe("ChainWalker fed through the arena read buffer", () => {
  function walkChunks(data: Uint8Array, chunkSizes: () => number, arena: boolean): WalkResult | string {
    const walker = new ChainWalker("receipt", 1 << 20);
    const splitter = new LineSplitter("splitlines", (l, n) => walker.line(l, n), 1 << 20, walker.probe);
    const buffer = arena ? walker.readBuffer() : null;
    try {
      for (let off = 0; off < data.length; ) {
        const n = Math.min(chunkSizes(), data.length - off);
        let chunk: Uint8Array;
        if (buffer !== null) {
          buffer.set(data.subarray(off, off + n));
          // Stale bytes past the chunk must not matter.
          buffer.fill(0x7d, n, Math.min(buffer.length, n + 8));
          chunk = buffer.subarray(0, n);
        } else chunk = data.slice(off, off + n);
        splitter.push(chunk);
        off += n;
      }
      splitter.end();
    } catch (err) {
      return (err as Error).message;
    } finally {
      // the next walk takes this one's kernel memory (what release promises: no trace of this walk in it)
      walker.release();
    }
    return walker.result();
  }

  test("same verdict as fresh chunks, at any chunk size", () => {
    const rng = new Rng(11);
    for (const data of corpus(150)) {
      const want = walkChunks(data, () => 1 << 16, false);
      expect(walkChunks(data, () => 1 + rng.int(700), true)).toEqual(want);
      expect(walkChunks(data, () => 1 << 20, true)).toEqual(want);
    }
  });
});
