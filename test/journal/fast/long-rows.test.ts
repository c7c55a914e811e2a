/**
 * Lines longer than the read area (256 KiB by default) are verified by the
 * WebAssembly kernel too, in a second kernel sized to the line. Its safety
 * property is the kernel's: with it, a range gives the same result as
 * without it (the exact path alone) and as the exact verifier, whatever the
 * tampering (a payload byte, the event hash, the prev link, the stored
 * index, a foreign spelling, a row re-chained onto a foreign prev_hash), in
 * every mode (chain, links-only, Merkle leaves and the kept row), on one
 * thread and two; and it must actually take the long rows.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyJournalFast, type FastVerifyOptions, type FastVerifyResult } from "../../../src/journal/fast/engine.ts";
import { KERNEL_MAX_ROW, RangeVerifier, type RangeResult, type RangeTask } from "../../../src/journal/fast/range.ts";
import { stitch } from "../../../src/journal/fast/stitch.ts";
import { eventHash } from "../../../src/journal/hash.ts";
import { verifyJournalSync, type JournalVerifyResult } from "../../../src/journal/verify.ts";
import { EventJournal } from "../../../src/journal/writer.ts";
import { tempDirs } from "../tmp.ts";
import { prng, type Rand } from "./rows.ts";

const dirs = tempDirs("long-rows");
afterAll(() => dirs.cleanup());

const WORDS = ["alpha", "beta", "gamma", "tâche ✓", 'say "hi"', "back\\slash", "tab\there", "line\nbreak", "🚀", "zz"];

function text(r: Rand, bytes: number): string {
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = WORDS[Math.floor(r() * WORDS.length)]!;
    parts.push(w);
    n += w.length + 1;
  }
  return parts.join(" ");
}

/**
 * A journal written by our writer (Python's spelling) whose rows at `big`
 * carry `bigBytes` of nested payload (a long line), the others a few
 * hundred bytes. Returns its path and lines.
 */
function journal(dir: string, rows: number, big: readonly number[], bigBytes: number, seed: number): { path: string; lines: string[] } {
  const r = prng(seed);
  const j = EventJournal.create("long", { sddDir: join(dir, "sdd") });
  try {
    for (let i = 0; i < rows; i++) {
      if (big.includes(i)) {
        const chunks = [];
        for (let c = 0; c < 8; c++) chunks.push({ seq: c, lines: [text(r, 64), text(r, 32)], ok: r() < 0.5, cost: c / 7 });
        j.record("tool_call", { agent_id: `a-${i % 3}`, tool: "run_tests", result: { output: text(r, bigBytes), chunks, nested: { b: [1, 2.5, null, true], a: "é" } }, duration_s: 1.25 });
      } else {
        j.record(i % 2 ? "task_completed" : "tâche ✓", { task_id: `T-${i}`, cost_usd: i / 7, note: text(r, 100) });
      }
    }
  } finally {
    j.close();
  }
  const path = join(dir, "sdd", "runs", "long", "journal.jsonl");
  return { path, lines: readFileSync(path, "utf8").split("\n").filter(Boolean) };
}

/** The tampered copies of row k (a long line): one per kind of edit. */
function tamperings(lines: string[], k: number): [string, string[]][] {
  const row = lines[k]!;
  const o = JSON.parse(row) as { event: string; prev_hash: string; payload_hash: string; event_hash: string };
  const flip = (h: string) => (h[10] === "a" ? h.slice(0, 10) + "b" + h.slice(11) : h.slice(0, 10) + "a" + h.slice(11));
  const at = (line: string) => lines.map((l, i) => (i === k ? line : l));
  const foreign = "ab".repeat(32);
  const mid = row.indexOf("alpha", row.length >> 1);
  return [
    ["payload byte", at(row.slice(0, mid) + "alphb" + row.slice(mid + 5))],
    ["event_hash", at(row.replace(o.event_hash, flip(o.event_hash)))],
    ["payload_hash", at(row.replace(o.payload_hash, flip(o.payload_hash)))],
    ["prev link", at(row.replace(`"prev_hash": "${o.prev_hash}"`, `"prev_hash": "${flip(o.prev_hash)}"`))],
    ["stored index", at(row.replace(`"index": ${k},`, `"index": ${k + 5},`))],
    ["foreign spelling", at(row.replace('"tool": "run_tests"', '"tool": "run\\u005ftests"'))],
    ["uppercase escape", at(row.replace("\\u00e9", "\\u00E9"))],
    ["re-chained", at(row.replace(`"prev_hash": "${o.prev_hash}"`, `"prev_hash": "${foreign}"`).replace(o.event_hash, eventHash(foreign, o.event, o.payload_hash, k)))],
    ["deleted", lines.filter((_, i) => i !== k)],
    ["CRLF", lines.map((l, i) => (i === k ? l + "\r" : l))],
    ["unterminated", lines.slice(0, k + 1)],
  ];
}

function write(dir: string, name: string, lines: string[], terminated = true): string {
  const p = join(dir, name);
  writeFileSync(p, lines.join("\n") + (terminated ? "\n" : ""));
  return p;
}

function runRange(path: string, kernel: "always" | "never", readCap: number, extra: Partial<RangeTask> = {}): RangeResult {
  return new RangeVerifier(readCap, kernel).run({ path, start: 0, end: statSync(path).size, isLast: true, baseIndex: 0, linksOnly: false, ...extra });
}

/** The exact verifier's fields of a fast result. */
function core(r: FastVerifyResult): JournalVerifyResult {
  const { mode, payloads_checked, snapshot_bytes, grew_by, threads, rows_by_path, bytes_read, stream, ...rest } = r;
  void mode, payloads_checked, snapshot_bytes, grew_by, threads, rows_by_path, bytes_read, stream;
  return rest;
}

/**
 * Kernel and exact path agree on `path` (and with the exact verifier), in
 * every mode, at read area `readCap`. Returns the rows the kernel took.
 */
function expectAgree(path: string, readCap: number, keepRow: number): number {
  const exact = verifyJournalSync(path);
  const withKernel = runRange(path, "always", readCap);
  const without = runRange(path, "never", readCap);
  expect({ path, readCap, v: stitch({ path, exists: true, results: [withKernel] }) }).toEqual({ path, readCap, v: exact });
  expect({ path, readCap, v: stitch({ path, exists: true, results: [without] }) }).toEqual({ path, readCap, v: exact });
  expect({ path, checked: withKernel.kernelRows + withKernel.exactRows }).toEqual({ path, checked: without.exactRows });
  // the range's diagnostics but which path took a row: identical
  const same = (r: RangeResult) => ({ ...r, fastRows: 0, kernelRows: 0, exactRows: 0, respacedRows: 0, declinedAt: null });
  expect({ path, r: same(withKernel) }).toEqual({ path, r: same(without) });
  // links-only, and the Merkle leaves with a kept row (a seal's or proof's pass)
  const links = (k: "always" | "never") => stitch({ path, exists: true, results: [runRange(path, k, readCap, { linksOnly: true })] });
  expect({ path, v: links("always") }).toEqual({ path, v: links("never") });
  const tree = { cuts: [1, keepRow, keepRow + 1], keepRow };
  const treed = (k: "always" | "never") => runRange(path, k, readCap, { tree }).tree;
  expect({ path, t: treed("always") }).toEqual({ path, t: treed("never") });
  // a range starting at every row boundary: the long row as a range's first row (linked to its own prev_hash)
  const bytes = readFileSync(path);
  for (let s = 1; s < bytes.length; s++) {
    if (bytes[s - 1] !== 0x0a) continue;
    const v = (k: "always" | "never") => {
      const a = runRange(path, k, readCap, { end: s, isLast: false });
      const b = runRange(path, k, readCap, { start: s, baseIndex: a.rows });
      return stitch({ path, exists: true, results: [a, b] });
    };
    expect({ path, s, v: v("always") }).toEqual({ path, s, v: exact });
  }
  return withKernel.kernelRows;
}

describe("rows longer than the read area, on the kernel", () => {
  test("rows of ~300-600 KB (over the 256 KiB read area): clean and every tampering, kernel = exact path = exact verifier", () => {
    const dir = dirs.make();
    const big = [1, 2, 5];
    const { path, lines } = journal(dir, 8, big, 300_000, 1);
    expect(lines.filter((l) => l.length > 1 << 18).length).toBe(3);
    // clean: every row but the genesis row by the kernel, the long ones too
    const clean = runRange(path, "always", 1 << 18);
    expect([clean.rows, clean.kernelRows, clean.exactRows]).toEqual([8, 7, 1]);
    expect(expectAgree(path, 1 << 18, 2)).toBe(7);
    for (const k of [2, 5]) {
      for (const [kind, tampered] of tamperings(lines, k)) {
        const p = write(dir, `${kind.replace(" ", "-")}-${k}.jsonl`, tampered, kind !== "unterminated");
        const exact = verifyJournalSync(p);
        if (!["stored index", "payload_hash", "foreign spelling", "uppercase escape", "CRLF", "unterminated"].includes(kind)) {
          expect([kind, k, exact.divergent_index]).toEqual([kind, k, k]);
        }
        expectAgree(p, 1 << 18, k);
      }
    }
  }, 120_000);

  test("a small read area (every row a long line, the line's kernel growing row by row): kernel = exact path", () => {
    const dir = dirs.make();
    const { path, lines } = journal(dir, 16, [3, 7, 8, 12], 20_000, 2);
    let taken = 0;
    for (const cap of [256, 1000, 4096]) taken += expectAgree(path, cap, 7);
    expect(taken).toBe(3 * 15);
    for (const [kind, tampered] of tamperings(lines, 8)) expectAgree(write(dir, `small-${kind.replace(" ", "-")}.jsonl`, tampered, kind !== "unterminated"), 1000, 8);
  }, 120_000);

  test("seeded layouts: long rows among junk, blank and whitespace lines, LF / CRLF / lone CR ends, an unterminated last line, every read area and chunk size", () => {
    const dir = dirs.make();
    const { lines } = journal(dir, 10, [2, 4, 5, 8], 6_000, 7);
    const r = prng(99);
    const fillers = ["", "   ", "x".repeat(3000), " ".repeat(2500), '{"a": ' + '"z'.repeat(1) + "y".repeat(4000) + '"}', "[1, 2]"];
    const ends = ["\n", "\r\n", "\r"];
    let taken = 0;
    for (let t = 0; t < 24; t++) {
      let text = "";
      for (const [i, line] of lines.entries()) {
        if (r() < 0.3) text += fillers[Math.floor(r() * fillers.length)]! + ends[Math.floor(r() * 3)]!;
        // a leading space (the exact path's) now and then, a tampered row once in a while
        let l = r() < 0.05 ? " " + line : line;
        if (t % 4 === 3 && i === 5) l = l.replace("alpha", "alphb");
        text += l + (i === lines.length - 1 && t % 3 === 0 ? "" : ends[Math.floor(r() * 3)]!);
      }
      const p = join(dir, `layout-${t}.jsonl`);
      writeFileSync(p, text);
      const exact = verifyJournalSync(p);
      for (const cap of [256, 1000, 4096]) {
        for (const kernel of ["always", "never"] as const) {
          const chunkSize = 64 + Math.floor(r() * 3000);
          const res = runRange(p, kernel, cap, { chunkSize });
          if (kernel === "always") taken += res.kernelRows;
          expect({ t, cap, kernel, chunkSize, v: stitch({ path: p, exists: true, results: [res] }) }).toEqual({ t, cap, kernel, chunkSize, v: exact });
        }
      }
    }
    expect(taken).toBeGreaterThan(24 * 3 * 4);
  }, 120_000);

  test("a line over KERNEL_MAX_ROW or the row limit stays on the exact path", () => {
    const dir = dirs.make();
    const { path } = journal(dir, 4, [2], 40_000, 3);
    // a row limit under the line: refused as row_too_large either way
    const limited = (k: "always" | "never") => runRange(path, k, 4096, { maxRowBytes: 20_000 });
    expect(limited("always").overlong).toEqual([2]);
    const refusal = (k: "always" | "never") => {
      try {
        stitch({ path, exists: true, results: [limited(k)] });
        return null;
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refusal("always")).toContain("line 3 ");
    expect(refusal("always")).toBe(refusal("never"));
    // within the limit: the kernel takes it
    expect(runRange(path, "always", 4096, { maxRowBytes: 60_000 }).kernelRows).toBe(3);
    expect(KERNEL_MAX_ROW).toBeGreaterThanOrEqual(1 << 20);
  });

  test("a row over KERNEL_MAX_ROW (within the row limit): the exact path, handed the bytes the kernel read; the rows around it on the kernel", () => {
    const dir = dirs.make();
    // a row past KERNEL_MAX_ROW between rows over the read area, as our writer writes them
    const j2 = join(dir, "huge");
    const r = prng(6);
    const w = EventJournal.create("huge", { sddDir: j2 });
    try {
      w.record("run_started", { n: 0 });
      w.record("tool_call", { result: { output: text(r, 300_000) } });
      w.record("tool_call", { result: { output: text(r, KERNEL_MAX_ROW + 100_000), chunks: [{ a: 1 }] } });
      w.record("tool_call", { result: { output: text(r, 300_000) } });
    } finally {
      w.close();
    }
    const huge = join(j2, "runs", "huge", "journal.jsonl");
    const hugeLines = readFileSync(huge, "utf8").split("\n").filter(Boolean);
    expect(Buffer.byteLength(hugeLines[2]!)).toBeGreaterThan(KERNEL_MAX_ROW);
    const exact = verifyJournalSync(huge);
    expect(exact.chain_consistent).toBe(true);
    const withKernel = runRange(huge, "always", 1 << 18);
    expect(stitch({ path: huge, exists: true, results: [withKernel] })).toEqual(exact);
    // the genesis row and the huge one exactly, the others on the kernel (the one after it linked from the exact path's hash)
    expect([withKernel.kernelRows, withKernel.exactRows]).toEqual([2, 2]);
    // tampered inside the huge row: the same verdict as the exact verifier's
    const mid = hugeLines[2]!.indexOf("alpha", hugeLines[2]!.length >> 1);
    hugeLines[2] = hugeLines[2]!.slice(0, mid) + "alphb" + hugeLines[2]!.slice(mid + 5);
    const bad = write(dir, "huge-bad.jsonl", hugeLines);
    const badExact = verifyJournalSync(bad);
    expect(badExact.divergent_index).toBe(2);
    expect(stitch({ path: bad, exists: true, results: [runRange(bad, "always", 1 << 18)] })).toEqual(badExact);
  }, 60_000);

  test("verifyJournalFast on one and two threads (in process and on workers) gives the exact verdict on long rows", async () => {
    const dir = dirs.make();
    const { path, lines } = journal(dir, 10, [2, 3, 4, 6, 7], 280_000, 4);
    const configs: FastVerifyOptions[] = [{ threads: 1 }, { threads: 2, minRangeBytes: 1, inProcess: true }, { threads: 2, minRangeBytes: 1 }];
    const files = [path, ...tamperings(lines, 6).map(([kind, t]) => write(dir, `fast-${kind.replace(" ", "-")}.jsonl`, t, kind !== "unterminated"))];
    for (const p of files) {
      const exact = verifyJournalSync(p);
      for (const cfg of configs) {
        const fast = await verifyJournalFast(p, cfg);
        expect({ p, cfg, v: core(fast) }).toEqual({ p, cfg, v: exact });
      }
    }
    const clean = await verifyJournalFast(path, { threads: 1 });
    expect(clean.rows_by_path.kernel).toBe(9);
  }, 120_000);

  test("rows over the long-line gate in both threads' ranges take turns: the exact verdict, clean and tampered", async () => {
    const dir = dirs.make();
    // rows over KERNEL_MAX_ROW (the exact path, one thread at a time) in the first and the second half of the file
    const { path, lines } = journal(dir, 6, [1, 4], 9_000_000, 8);
    expect(lines[1]!.length).toBeGreaterThan(KERNEL_MAX_ROW);
    const files = [path, ...tamperings(lines, 4).slice(0, 1).map(([kind, t]) => write(dir, `gate-${kind.replace(" ", "-")}.jsonl`, t))];
    for (const p of files) {
      const exact = verifyJournalSync(p);
      for (const cfg of [{ threads: 2, minRangeBytes: 1 }, { threads: 2, minRangeBytes: 1, inProcess: true }] as FastVerifyOptions[]) {
        const fast = await verifyJournalFast(p, cfg);
        expect({ p, cfg, v: core(fast) }).toEqual({ p, cfg, v: exact });
        expect(fast.rows_by_path.exact).toBeGreaterThanOrEqual(2);
      }
    }
  }, 120_000);

  test("a gate its holder never gives back costs a bounded wait, never a hang: the line is verified without it", () => {
    const dir = dirs.make();
    const { path } = journal(dir, 3, [1], 9_000_000, 9);
    const held = new Int32Array(new SharedArrayBuffer(8));
    held[1] = 1; // taken by a thread that is gone
    const task: RangeTask = { path, start: 0, end: statSync(path).size, isLast: true, baseIndex: 0, linksOnly: false };
    const t0 = performance.now();
    const result = new RangeVerifier(1 << 18, "never", 300).run(task, undefined, held);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300);
    expect(stitch({ path, exists: true, results: [result] })).toEqual(verifyJournalSync(path));
    expect(held[1]).toBe(1); // not taken, so not given back either
  }, 120_000);
});
