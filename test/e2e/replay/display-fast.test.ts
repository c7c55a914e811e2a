/**
 * `replay <RUN_ID>` through the compiled binary (its fast paths) against
 * the exact path run in this process, on a generated ~20 MB journal with
 * hostile lines appended, and on a journal of ~1 MB rows with lines of
 * 64 KiB and more of every kind appended (the long-line paths): the JSON
 * byte for byte, the table and the footer's facts of the prose, and
 * `--from-step N` (JSON and prose).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { generateJournal } from "../../../bench/journal-gen.ts";
import { readMetadata } from "../../../src/journal/metadata.ts";
import { rebuildStateSync } from "../../../src/journal/rebuild.ts";
import { dumps } from "../../../src/pyjson/encode.ts";
import { sanitizeCell } from "../../../src/render/table.ts";
import { measureIds } from "../../../src/replay/display.ts";
import { streamRunJsonExact } from "../../../src/replay/run-json.ts";
import { runTable, writeRunTableExact } from "../../../src/replay/run-table.ts";
import { scanRun } from "../../../src/replay/run-view.ts";
import { CollectingOutput } from "../../../src/replay/sink.ts";
import { bernstein } from "../../helpers/cli.ts";
import { HOSTILE_LINES, writeLongRowJournal } from "../../replay/hostile-rows.ts";
import { makeSdd, type SddTree } from "./fixture.ts";

const RUN = "big";
const env = { COLUMNS: "100" };

const JOURNALS: [title: string, make: (sdd: string) => string, steps: number[]][] = [
  [
    "~20 MB journal",
    (sdd) => {
      const journal = generateJournal(sdd, RUN, 20e6, 3).path;
      appendFileSync(journal, HOSTILE_LINES.join("\n") + "\n");
      return journal;
    },
    [0, 1, 12_345, 1_000_000],
  ],
  [
    "journal of ~1 MB rows and long lines",
    (sdd) => {
      const journal = generateJournal(sdd, RUN, 6e6, 3, "large-rows").path;
      const long = join(sdd, "long.jsonl");
      writeLongRowJournal(long);
      appendFileSync(journal, readFileSync(long));
      return journal;
    },
    [0, 1, 4, 1_000_000],
  ],
];

for (const [title, make, steps] of JOURNALS) {
  describe(`replay <RUN_ID> fast paths = exact path (compiled binary, ${title})`, () => {
    let t: SddTree;
    let journal: string;
    beforeAll(() => {
      t = makeSdd();
      journal = make(t.sdd);
    }, 120_000);
    afterAll(() => t.cleanup());

    test("--as-json is byte-identical", async () => {
      const r = await bernstein(["replay", RUN, "--as-json", "--sdd-dir", t.sdd], { env });
      expect(r.code).toBe(0);
      const exact = new CollectingOutput();
      await streamRunJsonExact({ journal, runId: RUN, metadata: readMetadata(t.runDir(RUN)), limit: undefined }, exact);
      expect(r.stdout.length).toBeGreaterThan(6e6);
      expect(r.stdout === exact.text()).toBe(true);
    }, 120_000);

    test("--as-json --limit 1000 is byte-identical", async () => {
      const r = await bernstein(["replay", RUN, "--as-json", "--limit", "1000", "--sdd-dir", t.sdd], { env });
      const exact = new CollectingOutput();
      await streamRunJsonExact({ journal, runId: RUN, metadata: readMetadata(t.runDir(RUN)), limit: 1000 }, exact);
      expect(r.stdout === exact.text()).toBe(true);
    }, 60_000);

    test("the prose table, event count, fingerprint and head are the exact path's", async () => {
      const r = await bernstein(["replay", RUN, "--sdd-dir", t.sdd], { env });
      expect(r.code).toBe(0);
      const ids = { agent: 0, task: 0 };
      const scan = await scanRun(journal, undefined, (row) => measureIds(row, ids));
      const rows = new CollectingOutput();
      await writeRunTableExact(journal, scan.baseTs, undefined, runTable(ids, 100), rows);
      expect(r.stdout.includes(rows.text())).toBe(true);
      const has = (text: string): [string, boolean] => [text, r.stdout.includes(text)];
      expect(has(`Events: ${scan.events}  `)).toEqual([`Events: ${scan.events}  `, true]);
      expect(has(`SHA-256 fingerprint: ${scan.fingerprint}\n`)).toEqual([`SHA-256 fingerprint: ${scan.fingerprint}\n`, true]);
      expect(has(`Merkle head: ${scan.lastEventHash || "(none)"}\n`)).toEqual([`Merkle head: ${scan.lastEventHash || "(none)"}\n`, true]);
      expect(r.stderr).toContain(`${scan.discarded.length} line(s) of ${journal} could not be read as events`);
    }, 120_000);

    test("--from-step N: JSON and prose are the exact projection's", async () => {
      for (const n of steps) {
        const s = rebuildStateSync(journal, n);
        const json = await bernstein(["replay", RUN, "--from-step", String(n), "--as-json", "--sdd-dir", t.sdd], { env });
        expect(json.code).toBe(0);
        expect(json.stdout === dumps({ events: s.events, head_hash: s.head_hash, ok: true, step_count: s.step_count }, { sortKeys: true }) + "\n").toBe(true);
        const prose = await bernstein(["replay", RUN, "--from-step", String(n), "--sdd-dir", t.sdd], { env });
        expect(prose.stdout === `Rebuilt state for ${RUN} through step ${s.step_count}\nhead: ${s.head_hash || "(empty)"}\nevents: ${sanitizeCell(s.events.join(", "))}\n`).toBe(true);
      }
    }, 120_000);
  });
}
