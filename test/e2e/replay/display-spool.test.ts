/**
 * `replay <RUN_ID>` (prose) through the compiled binary, whose table is
 * laid out from the scan's cell spool, against the exact path run in this
 * process: a journal holding every kind of spool record (rows before
 * run_started, non-plain cells, lines only the exact reader reads,
 * discarded lines, CRLF and lone-CR line ends) at several widths and
 * limits; the spool leaves nothing in TMPDIR and is not needed; `--limit`
 * stops reading the journal at its first screen.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measureIds } from "../../../src/replay/display.ts";
import { runTable, writeRunTableExact } from "../../../src/replay/run-table.ts";
import { scanRun } from "../../../src/replay/run-view.ts";
import { CollectingOutput } from "../../../src/replay/sink.ts";
import { bernstein } from "../../helpers/cli.ts";
import { foldingRows, spoolJournalBytes, writerRows } from "../../replay/hostile-rows.ts";
import { makeSdd, type SddTree } from "./fixture.ts";

async function exactTable(journal: string, width: number, limit?: number): Promise<{ table: string; events: number; fingerprint: string }> {
  const ids = { agent: 0, task: 0 };
  const s = await scanRun(journal, limit, (row) => measureIds(row, ids));
  const out = new CollectingOutput();
  await writeRunTableExact(journal, s.baseTs, limit, runTable(ids, width), out);
  return { table: out.text(), events: s.events, fingerprint: s.fingerprint };
}

describe("replay <RUN_ID> prose from the cell spool (compiled binary)", () => {
  let t: SddTree;
  let scratch: string;
  beforeAll(() => {
    t = makeSdd();
    scratch = mkdtempSync(join(tmpdir(), "display-spool-"));
    mkdirSync(t.runDir("mixed"), { recursive: true });
    writeFileSync(t.journal("mixed"), spoolJournalBytes());
    mkdirSync(t.runDir("folding"), { recursive: true });
    writeFileSync(t.journal("folding"), foldingRows(200).join("\n") + "\n");
  });
  afterAll(() => {
    t.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("the table, event count and fingerprint are the exact path's at several widths and limits", async () => {
    for (const width of [120, 60, 40]) {
      for (const limit of [undefined, 1, 5]) {
        const args = ["replay", "mixed", "--sdd-dir", t.sdd, ...(limit === undefined ? [] : ["--limit", String(limit)])];
        const r = await bernstein(args, { env: { COLUMNS: String(width) } });
        expect(r.code).toBe(0);
        const exact = await exactTable(t.journal("mixed"), width, limit);
        expect([width, limit, r.stdout.includes(exact.table)]).toEqual([width, limit, true]);
        expect(r.stdout).toContain(`Events: ${exact.events}`);
        if (limit === undefined) expect(r.stdout).toContain(`${exact.fingerprint}\n`);
      }
    }
  }, 60_000);

  test("on a narrow terminal (DETAIL, then TASK, folded below each row) the table is the exact path's", async () => {
    for (const width of [70, 50, 36]) {
      const r = await bernstein(["replay", "folding", "--sdd-dir", t.sdd], { env: { COLUMNS: String(width) } });
      expect(r.code).toBe(0);
      const exact = await exactTable(t.journal("folding"), width);
      expect([width, r.stdout.includes(exact.table)]).toEqual([width, true]);
    }
  }, 60_000);

  test("nothing is left in TMPDIR, and a TMPDIR that cannot hold the spool changes nothing", async () => {
    const env = { COLUMNS: "100", TMPDIR: join(scratch, "tmp") };
    mkdirSync(env.TMPDIR);
    const spooled = await bernstein(["replay", "mixed", "--sdd-dir", t.sdd], { env });
    expect(spooled.code).toBe(0);
    expect(readdirSync(env.TMPDIR)).toEqual([]);
    const without = await bernstein(["replay", "mixed", "--sdd-dir", t.sdd], { env: { ...env, TMPDIR: join(scratch, "missing") } });
    expect([without.code, without.stdout === spooled.stdout, without.stderr === spooled.stderr]).toEqual([0, true, true]);
  });

  test("--limit reads only the first screen: a row past the row limit further on is never reached", async () => {
    // 3 MB of writer rows, then a line over the run journal's 256 MiB row limit: reading it is refused
    // (row_too_large). The line is a hole in the file (zero bytes, no disk): refused on its length unparsed.
    mkdirSync(t.runDir("tail"), { recursive: true });
    const rows = writerRows(6000).join("\n") + "\n";
    writeFileSync(t.journal("tail"), rows + '{"event": "too long", "blob": "');
    truncateSync(t.journal("tail"), statSync(t.journal("tail")).size + 256 * 1024 * 1024);
    appendFileSync(t.journal("tail"), '"}\n');
    const limited = await bernstein(["replay", "tail", "--limit", "20", "--sdd-dir", t.sdd], { env: { COLUMNS: "120" } });
    expect(limited.code).toBe(0);
    expect(limited.stdout).toContain("Events: 20 (first 20 events shown)");
    const exact = await exactTable(t.journal("tail"), 120, 20);
    expect(limited.stdout.includes(exact.table)).toBe(true);
    const all = await bernstein(["replay", "tail", "--sdd-dir", t.sdd], { env: { COLUMNS: "120" } });
    expect([all.code, all.stderr]).toEqual([3, expect.stringContaining("row limit")]);
  }, 60_000);
});
