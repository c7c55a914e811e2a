/**
 * The verify's progress samples with several threads (issue 17: the line
 * went backwards and stopped near 48 %): each worker reports its bytes of
 * the whole run, so the sum never drops when a range ends, and it keeps
 * up with the workers while the main thread is busy with a range of its own.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { verifyJournalFast } from "../../../src/journal/fast/engine.ts";
import { writeBigJournal } from "../../helpers/big-journal.ts";
import { tempDirs } from "../tmp.ts";

const dirs = tempDirs("fast-progress");
afterAll(() => dirs.cleanup());

test("progress with 2 threads and many ranges never goes back and never exceeds the total", async () => {
  const path = join(dirs.make(), "journal.jsonl");
  writeBigJournal(path, 40_000, 2000); // ~90 MB
  const samples: [number, number][] = [];
  // Small reads slow the verify down enough for several 250 ms samples.
  const r = await verifyJournalFast(path, { threads: 2, minRangeBytes: 2 << 20, chunkSize: 16 << 10, onProgress: (d, t) => void samples.push([d, t]) });
  expect(r.ok).toBe(true);
  expect(samples.length).toBeGreaterThanOrEqual(1);
  for (let i = 1; i < samples.length; i++) expect(samples[i]![0]).toBeGreaterThanOrEqual(samples[i - 1]![0]);
  for (const [done, total] of samples) expect(done).toBeLessThanOrEqual(total);
}, 60_000);
