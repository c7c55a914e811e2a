/**
 * Issue 16 item 10: one dense row must not cost gigabytes. A run journal,
 * an event stream and a step journal each holding one ~8 MB row of dense
 * numbers or of small objects (hashes computed by Python), through every
 * path that reads such a row; each run's peak RSS (getrusage, what
 * `/usr/bin/time -f %M` reports) must stay within 64 MB + 3 x the row.
 * Before the byte path (src/pyjson/row.ts) these runs took 50-90x the row
 * (~400-700 MB here), so every case below failed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measuredRun, writeDenseFixture, type DenseFixture, type DenseKind } from "../../helpers/dense-rows.ts";

const ROW_BYTES = 8_000_000;
const MB = 1024 * 1024;

for (const kind of ["numbers", "objects"] as DenseKind[]) {
  describe(`one ~8 MB row of dense ${kind}: peak RSS <= 64 MB + 3 x the row`, () => {
    let dir: string;
    let fx: DenseFixture;
    let bound: number;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "bernstein-dense-"));
      fx = writeDenseFixture(dir, kind, ROW_BYTES);
      bound = 64 * MB + 3 * fx.rowBytes;
    }, 120_000);
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const within = (r: { peakRss: number; stderr: string }, what: string, limit = bound): void => {
      if (process.env.DENSE_RSS_LOG) console.error(`${what}: ${(r.peakRss / MB).toFixed(1)} MB`);
      if (r.peakRss > limit) throw new Error(`${what}: peak RSS ${(r.peakRss / MB).toFixed(1)} MB > bound ${(limit / MB).toFixed(1)} MB\n${r.stderr}`);
    };

    test("journal verify: fast engine (2 threads), its exact fallback (1 thread) and stdin, verdict from Python's hashes", async () => {
      for (const args of [["--threads", "2"], ["--threads", "1"]]) {
        const r = await measuredRun(["journal", "verify", fx.journal, ...args, "--as-json"]);
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, count: 2, head: fx.head });
        within(r, `journal verify ${args.join(" ")}`);
      }
      const s = await measuredRun(["journal", "verify", "-", "--as-json"], { stdinFile: fx.journal });
      expect(s.code).toBe(0);
      expect(JSON.parse(s.stdout)).toMatchObject({ ok: true, head: fx.head });
      within(s, "journal verify -");
    }, 120_000);

    test("replay <RUN> (table and --as-json, the huge row printed in full) and --from-step", async () => {
      const table = await measuredRun(["replay", "r", "--sdd-dir", fx.sdd]);
      expect(table.code).toBe(0);
      expect(table.stdout).toContain(fx.head);
      within(table, "replay r");
      const json = await measuredRun(["replay", "r", "--sdd-dir", fx.sdd, "--as-json"]);
      expect(json.code).toBe(0);
      const doc = JSON.parse(json.stdout);
      expect(doc.events.length).toBe(2);
      expect(doc.events[1].data.length).toBe(fx.items);
      expect(doc.events[1].event_hash).toBe(fx.head);
      // A row of many small objects rendered as indented JSON: 75-80 MB for 8.3 MB since its
      // pieces are collected every megabyte (95-98 MB before, over the 3x every other verb keeps).
      within(json, "replay r --as-json", bound);
      const step = await measuredRun(["replay", "r", "--sdd-dir", fx.sdd, "--from-step", "2", "--as-json"]);
      expect(step.code).toBe(0);
      expect(JSON.parse(step.stdout)).toMatchObject({ events: ["run_started", "big"], head_hash: fx.head, step_count: 2 });
      within(step, "replay r --from-step 2");
    }, 120_000);

    test("journal record: the row from stdin (a file), then resuming the journal that holds it", async () => {
      const r = await measuredRun(["journal", "record", "rec", "--sdd-dir", fx.sdd, "--as-json"], { stdinFile: fx.events });
      expect(r.code).toBe(0);
      // event hashes do not cover ts/elapsed_s: Python's head for the same event at index 0
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, recorded: 1, head: fx.recordedHead });
      within(r, "journal record (stdin)");
      const v = await measuredRun(["journal", "verify", join(fx.sdd, "runs", "rec", "journal.jsonl"), "--as-json"]);
      expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, count: 1, head: fx.recordedHead });
      const more = await measuredRun(["journal", "record", "rec", "tick", "--sdd-dir", fx.sdd, "--as-json"]);
      expect(more.code).toBe(0);
      expect(JSON.parse(more.stdout)).toMatchObject({ ok: true, count: 2 });
      within(more, "journal record (resume over the huge row)");
    }, 120_000);

    test("step journal: replay export, then replay verify of the receipt", async () => {
      const tar = join(dir, `receipt-${kind}.tar`);
      const e = await measuredRun(["replay", "export", "ag", tar, "--sdd-dir", fx.sdd, "--force", "--as-json"]);
      expect(e.code).toBe(0);
      expect(JSON.parse(e.stdout)).toMatchObject({ head_hash: fx.stepHead, steps: 3 });
      within(e, "replay export");
      const v = await measuredRun(["replay", "verify", tar, "--as-json"]);
      expect(v.code).toBe(0);
      expect(JSON.parse(v.stdout)).toMatchObject({ head_hash: fx.stepHead, steps: 3 });
      within(v, "replay verify <receipt>");
    }, 120_000);
  });
}
