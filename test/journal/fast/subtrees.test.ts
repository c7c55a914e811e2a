/**
 * The verify pass's Merkle subtrees (subtrees.ts): whatever the ranges,
 * threads and chunk sizes, the aligned subtrees it hands back give the
 * roots, prefix roots and proof hashes the leaves give one by one, and the
 * row it was asked to keep is that row's line.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyJournalFast, type FastVerifyOptions } from "../../../src/journal/fast/engine.ts";
import { TreeRequest } from "../../../src/journal/fast/subtrees.ts";
import { EventJournal } from "../../../src/journal/writer.ts";
import { consistencyRanges, inclusionRanges, leafHash, RangeHasher, type LeafRange } from "../../../src/tlog/merkle.ts";
import { tempDirs } from "../tmp.ts";

const dirs = tempDirs("subtrees");
afterAll(() => dirs.cleanup());

const hex = (h: Uint8Array) => Buffer.from(h).toString("hex");

function journal(rows: number, lineEnd = "\n"): { path: string; lines: string[] } {
  const dir = dirs.make();
  const j = EventJournal.create("r", { sddDir: join(dir, ".sdd") });
  for (let i = 0; i < rows; i++) j.record(i % 3 === 0 ? "tick" : "task_completed", { task_id: `T-${i}`, cost_usd: i / 7, note: "x".repeat(i % 50) });
  j.close();
  const lines = readFileSync(j.path, "utf8").split("\n").filter((l) => l !== "");
  if (lineEnd !== "\n") writeFileSync(j.path, lines.join(lineEnd) + lineEnd);
  return { path: j.path, lines };
}

/** What a proof over `ranges` (and a prefix of `at` leaves) gives, fed leaf by leaf or by the pass's subtrees. */
function hashes(h: RangeHasher): string[] {
  return [hex(h.root()), h.prefixRoot() === null ? "-" : hex(h.prefixRoot()!), ...h.proof().map(hex)];
}

async function compare(path: string, lines: string[], cuts: number[], keepRow: number | null, ranges: LeafRange[], at: number, opts: FastVerifyOptions) {
  const request = new TreeRequest({ cuts, keepRow });
  const v = await verifyJournalFast(path, { ...opts, tree: request });
  expect(v.chain_consistent).toBe(true);
  // a whole journal of 32 KiB and more: the kernel's leaves are in it
  if (opts.ranges === 1) expect(v.rows_by_path.kernel).toBeGreaterThan(0);
  const fromPass = new RangeHasher(ranges, at);
  for (const s of request.subtrees!) fromPass.addSubtree(s.hash, s.size);
  const fromLeaves = new RangeHasher(ranges, at);
  for (const l of lines) fromLeaves.addLeafHash(leafHash(Buffer.from(JSON.parse(l).event_hash as string, "hex")));
  expect(hashes(fromPass)).toEqual(hashes(fromLeaves));
  if (keepRow !== null) expect(request.row).toBe(lines[keepRow]!);
  return request.subtrees!.length;
}

// Ranges of 32 KiB and more go through the kernel (its leaves), smaller ones through the exact path.
const CONFIGS: FastVerifyOptions[] = [
  { inProcess: true, ranges: 1 },
  { inProcess: true, minRangeBytes: 40_000, chunkSize: 5000 },
  { inProcess: true, minRangeBytes: 1500, chunkSize: 700 },
  { threads: 2, minRangeBytes: 4000 },
];

describe("Merkle subtrees from the verify pass", () => {
  test("consistency proofs and prefix roots for every old size, over every split of the journal", async () => {
    const { path, lines } = journal(400);
    const n = lines.length;
    for (const opts of CONFIGS) {
      for (let m = 0; m <= n; m += m < 20 ? 1 : 29) await compare(path, lines, [m], null, consistencyRanges(m, n), m, opts);
    }
  }, 60_000);

  test("inclusion proofs and the kept row, for leaves across range edges (also with CRLF line ends)", async () => {
    for (const end of ["\n", "\r\n"]) {
      const { path, lines } = journal(400, end);
      const n = lines.length;
      for (const opts of CONFIGS) {
        for (let i = 0; i < n; i += i < 10 ? 1 : 37) await compare(path, lines, [i, i + 1], i, inclusionRanges(i, n), -1, opts);
      }
    }
  }, 60_000);

  test("without cuts, a handful of subtrees per range (at most two per bit of the leaf count)", async () => {
    const { path, lines } = journal(1000);
    expect(await compare(path, lines, [], null, [], -1, { inProcess: true, ranges: 1 })).toBeLessThanOrEqual(2 * 10);
  }, 60_000);
});
