/**
 * The prose table laid out from the scan's cell spool (src/replay/
 * cell-spool.ts), and the scan on the verify kernel's fingerprint mode
 * (src/replay/kernel-row.ts), against the exact path: the same table and
 * facts on a journal holding every kind of spool record, at several widths
 * and limits; a broken or impossible spool falls back to reading the
 * journal; nothing is left in the temporary directory.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setColorEnabled } from "../../src/render/ansi.ts";
import { measureIds } from "../../src/replay/display.ts";
import { CellSpool, SpoolKind } from "../../src/replay/cell-spool.ts";
import { readFastLines } from "../../src/replay/fast-lines.ts";
import { KernelRowReader } from "../../src/replay/kernel-row.ts";
import { runTable, writeRunTable, writeRunTableExact } from "../../src/replay/run-table.ts";
import { scanRun, scanRunFast } from "../../src/replay/run-view.ts";
import { CollectingOutput } from "../../src/replay/sink.ts";
import { spoolJournalBytes, writeWriterJournal } from "./hostile-rows.ts";

const dir = mkdtempSync(join(tmpdir(), "cell-spool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const journal = join(dir, "spool.jsonl");
writeFileSync(journal, spoolJournalBytes());

async function exactTable(width: number, limit?: number): Promise<string> {
  const ids = { agent: 0, task: 0 };
  const s = await scanRun(journal, limit, (row) => measureIds(row, ids));
  const out = new CollectingOutput();
  await writeRunTableExact(journal, s.baseTs, limit, runTable(ids, width), out);
  return out.text();
}

/** The command's two passes; `breakSpool`: as if a spool write had failed. */
async function spooledTable(width: number, limit?: number, breakSpool = false): Promise<string> {
  const ids = { agent: 0, task: 0 };
  const spool = CellSpool.open()!;
  try {
    const s = await scanRunFast(journal, limit, ids, spool);
    if (breakSpool) spool.broken = true;
    const out = new CollectingOutput();
    await writeRunTable(journal, s.baseTs, limit, runTable(ids, width), out, spool);
    return out.text();
  } finally {
    spool.close();
  }
}

describe("replay table from the cell spool = exact path", () => {
  test("the journal spools every kind of record (the comparisons are not vacuous)", async () => {
    const spool = CellSpool.open()!;
    try {
      const s = await scanRunFast(journal, undefined, undefined, spool);
      expect(spool.finish()).toBe(true);
      const kinds = new Map<SpoolKind, number>();
      const rows = spool.reader();
      while (rows.next()) kinds.set(rows.kind, (kinds.get(rows.kind) ?? 0) + 1);
      // (no Time record: the scan's kernel takes rows in the writer's envelope only, and those have a ts)
      expect([...kinds.keys()].sort()).toEqual([SpoolKind.Ts, SpoolKind.Fields, SpoolKind.Exact]);
      expect([...kinds.values()].reduce((a, b) => a + b)).toBe(s.events);
      expect(s.discarded).toEqual([6]);
    } finally {
      spool.close();
    }
  });

  test("same lines at several widths (folded, wrapped, cut) and limits, plain and in colour", async () => {
    for (const colour of [false, true]) {
      setColorEnabled(colour);
      try {
        for (const width of [160, 120, 90, 60, 40]) {
          for (const limit of [undefined, 0, 1, 3, 5, 9, 12]) {
            expect([colour, width, limit, await spooledTable(width, limit)]).toEqual([colour, width, limit, await exactTable(width, limit)]);
          }
        }
      } finally {
        setColorEnabled(false);
      }
    }
  }, 60_000);

  test("the scan's facts with a spool are the exact scan's", async () => {
    for (const limit of [undefined, 2, 7]) {
      const ids = { agent: 0, task: 0 };
      const exactIds = { agent: 0, task: 0 };
      const spool = CellSpool.open()!;
      try {
        const fast = await scanRunFast(journal, limit, ids, spool);
        expect([limit, fast, ids]).toEqual([limit, await scanRun(journal, limit, (row) => measureIds(row, exactIds)), exactIds]);
      } finally {
        spool.close();
      }
    }
  });

  test("a broken spool (a failed write) falls back to reading the journal", async () => {
    for (const width of [120, 60]) expect(await spooledTable(width, undefined, true)).toBe(await exactTable(width));
  });

  test("the spool leaves no file behind, and without a usable temporary directory the table reads the journal", async () => {
    const saved = process.env.TMPDIR;
    const empty = join(dir, "tmp");
    mkdirSync(empty);
    try {
      process.env.TMPDIR = empty;
      const spool = CellSpool.open();
      expect(spool).not.toBeNull();
      expect(readdirSync(empty)).toEqual([]);
      spool!.close();
      process.env.TMPDIR = join(dir, "missing");
      expect(CellSpool.open()).toBeNull();
      const out = new CollectingOutput();
      const ids = { agent: 0, task: 0 };
      const s = await scanRunFast(journal, undefined, ids, undefined);
      await writeRunTable(journal, s.baseTs, undefined, runTable(ids, 120), out, undefined);
      expect(out.text()).toBe(await exactTable(120));
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  test("the fingerprint kernel takes the writer's rows, and declines other lines to the JS reader", async () => {
    const clean = join(dir, "clean.jsonl");
    writeWriterJournal(clean, 300);
    const k = new KernelRowReader();
    let taken = 0;
    let declined = 0;
    for (const _ of readFastLines(clean, {
      buffer: k.readBuffer,
      fast: (_b, s, e) => {
        if (k.take(s, e)) taken++;
        else declined++;
        k.clear();
        return true;
      },
      exact: () => {},
      done: () => false,
    }));
    // row 0 has an empty prev_hash (not the writer's 64 characters)
    expect([taken, declined]).toEqual([299, 1]);
  });
});
