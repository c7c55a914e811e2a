/**
 * The agent view's render pass on the step kernel's render mode (each row
 * the kernel takes is rendered in the visit that scans it, into an area
 * the host writes out as it fills) against the exact path (the kernel off:
 * every entry parsed and rendered by renderJson), with render areas from a
 * few KiB (the kernel stops for room after nearly every row; rows larger
 * than the area go the exact way) to the product's 1 MiB, with and without
 * the span records the verifying pass leaves.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PyLike } from "../../src/pyjson/types.ts";
import { writeAgentEntriesJson } from "../../src/replay/agent-json.ts";
import { setStepKernelEnabled, SPAN_RECORD_BYTES, stepKernelStats } from "../../src/steps/kernel.ts";
import { SpanRecords } from "../../src/steps/records.ts";
import { verifyAgentJournal } from "../../src/steps/verify.ts";
import { dictFormJournal, journalBytes, wideRow, writeAgentJournal } from "../helpers/step-journals.ts";

const tmp = mkdtempSync(join(tmpdir(), "steps-render-"));
afterAll(() => {
  setStepKernelEnabled(true);
  rmSync(tmp, { recursive: true, force: true });
});

const buckets: Record<string, string> = {};
beforeAll(() => {
  const sdd = join(tmp, "sdd");
  const nested = (depth: number, width: number): PyLike => (depth === 0 ? 7 : Array.from({ length: width }, () => nested(depth - 1, width)));
  const journals: Record<string, string> = {
    plain: journalBytes({ rows: 6000, seed: 51, plain: true }),
    mixed: journalBytes({ rows: 2500, seed: 52 }),
    huge: journalBytes({ rows: 300, seed: 53, hugeAt: 120 }),
    // rows of ~30 KB that render to ~700 KB: larger than a small area, and a few per 1 MiB area
    wide: dictFormJournal(40, (seq) => wideRow(seq, seq % 7 === 3 ? nested(4, 10) : { name: "t", n: seq })),
  };
  for (const [id, text] of Object.entries(journals)) buckets[id] = writeAgentJournal(sdd, id, text);
}, 60_000);

async function render(bucket: string, limit: number | null, areaBytes?: number, records: SpanRecords | null = null): Promise<{ n: number; text: string }> {
  const chunks: Uint8Array[] = [];
  const n = await writeAgentEntriesJson(bucket, limit, { write: async (b) => void chunks.push(b.slice()), writeSync: (b) => void chunks.push(b.slice()) }, areaBytes, records);
  return { n, text: Buffer.concat(chunks).toString("utf8") };
}

/** The verifying pass's span records of `id`'s journal (held in `memoryBytes`, the rest in a temporary file). */
async function recordsOf(id: string, memoryBytes?: number, maxRecords: number | null = null): Promise<SpanRecords> {
  const records = new SpanRecords(maxRecords, memoryBytes);
  await verifyAgentJournal(join(tmp, "sdd"), id, records);
  return records;
}

async function exactly(bucket: string, limit: number | null): Promise<{ n: number; text: string }> {
  setStepKernelEnabled(false);
  try {
    return await render(bucket, limit);
  } finally {
    setStepKernelEnabled(true);
  }
}

test("astral characters whose low bits look like a surrogate (U+1D921, U+2D800): rendered by the kernel as the exact path renders them", async () => {
  const bucket = writeAgentJournal(join(tmp, "sdd"), "astral", dictFormJournal(60, (seq) => wideRow(seq, { text: `\u{1d921} ${seq} \u{2d800} \u{10dfff}`, lone: seq % 10 === 0 ? "\ud800" : "" })));
  const exact = await exactly(bucket, null);
  const before = stepKernelStats.rows;
  const fast = await render(bucket, null);
  expect(fast.n).toBe(exact.n);
  expect(fast.text === exact.text).toBe(true);
  expect(fast.text).toContain("\u{1d921}");
  // every row but those holding a lone surrogate (which the exact path escapes)
  expect(stepKernelStats.rows - before).toBe(54);
});

describe("render mode: the exact path's entries, whatever the area's size", () => {
  for (const id of ["plain", "mixed", "huge", "wide"]) {
    test(id, async () => {
      for (const limit of [null, 1, 250]) {
        const exact = await exactly(buckets[id]!, limit);
        for (const area of [2048, 40_000, 1 << 20]) {
          // without span records, and replaying those the verifying pass left (in memory, or mostly in a file)
          for (const held of [null, 8 << 20, 4096]) {
            const records = held === null ? null : await recordsOf(id, held, limit);
            const before = stepKernelStats.rows;
            const fast = await render(buckets[id]!, limit, area, records);
            records?.close();
            expect({ id, limit, area, held, n: fast.n }).toEqual({ id, limit, area, held, n: exact.n });
            expect(fast.text === exact.text).toBe(true);
            // the kernel rendered rows (most plain ones; those holding a lone surrogate go the exact way)
            expect(stepKernelStats.rows - before).toBeGreaterThan(id === "plain" && limit === null ? 3000 : 0);
          }
        }
      }
    }, 120_000);
  }
});

describe("span records", () => {
  test("the verifying pass leaves one per dict-form row, stamped with the file", async () => {
    const plain = await recordsOf("plain");
    expect(plain.stamp).not.toBeNull();
    // every plain row but those with a lone surrogate (the kernel takes them all: they are canonical)
    expect(plain.size / SPAN_RECORD_BYTES).toBe(6000);
    plain.close();
    const mixed = await recordsOf("mixed", 4096);
    expect(mixed.size % SPAN_RECORD_BYTES).toBe(0);
    expect(mixed.size).toBeGreaterThan(4096);
    mixed.close();
  });

  test("records of another version of the file are not replayed: the render pass scans it", async () => {
    const sdd = join(tmp, "sdd");
    const bucket = writeAgentJournal(sdd, "changing", journalBytes({ rows: 3000, seed: 54, plain: true }));
    const records = new SpanRecords();
    await verifyAgentJournal(sdd, "changing", records);
    // rewritten in place with other rows at other offsets, or only touched: the stamp differs
    writeFileSync(bucket, journalBytes({ rows: 2000, seed: 55, plain: true }).replaceAll('"ok":true', '"ok": true'));
    const exact = await exactly(bucket, null);
    expect((await render(bucket, null, undefined, records)).text === exact.text).toBe(true);
    writeFileSync(bucket, journalBytes({ rows: 3000, seed: 54, plain: true }));
    const again = await exactly(bucket, null);
    expect((await render(bucket, null, undefined, records)).text === again.text).toBe(true);
    records.close();
  });
});
