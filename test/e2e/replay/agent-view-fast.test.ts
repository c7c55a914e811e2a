import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PyLike } from "../../../src/pyjson/types.ts";
import { exactAgentView } from "../../helpers/agent-view.ts";
import { bernstein } from "../../helpers/cli.ts";
import { exactAgentCells, narrowAgentTable } from "../../../src/replay/agent-table.ts";
import { readEntries } from "../../../src/steps/reader.ts";
import { BUCKET_NAME } from "../../../src/steps/paths.ts";
import { dictFormJournal, journalBytes, wideRow, writeAgentJournal } from "../../helpers/step-journals.ts";

/**
 * `replay <AGENT_ID>` through the compiled binary (both passes read in
 * chunks ending at a line feed; the render pass on the step kernel's render
 * mode) against the exact path run in this process with the kernel off:
 * the same document byte for byte, or the same refusal, on journals with
 * non-plain rows, a row over 1 MiB, rows that render larger than the
 * render area, many chunks' worth of rows, a chain broken in the middle, a
 * torn tail, and empty ones.
 */

const tmp = mkdtempSync(join(tmpdir(), "agent-view-fast-"));
const sdd = join(tmp, ".sdd");
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const nested = (depth: number, width: number): PyLike => (depth === 0 ? 7 : Array.from({ length: width }, () => nested(depth - 1, width)));

beforeAll(() => {
  const plain = journalBytes({ rows: 3000, seed: 61, plain: true });
  const lines = plain.split("\n");
  const journals: Record<string, string> = {
    mixed: journalBytes({ rows: 2500, seed: 62 }),
    huge: journalBytes({ rows: 300, seed: 63, hugeAt: 150 }),
    // rows rendering to ~200 KB and ~2 MB (more than the 1 MiB render area)
    wide: dictFormJournal(30, (seq) => wideRow(seq, seq % 9 === 4 ? nested(4, 10) : seq === 20 ? nested(5, 10) : { name: "t", n: seq })),
    many: journalBytes({ rows: 20_000, seed: 64, plain: true }),
    "broken-mid": lines.map((l, i) => (i === 1500 ? l.replace('"ok":true', '"ok":false') : l)).join("\n"),
    "relinked-mid": lines.map((l, i) => (i === 1700 ? l.replace(/"prev_hash":"[0-9a-f]{4}/, '"prev_hash":"0000') : l)).join("\n"),
    torn: plain.slice(0, plain.length - 57),
    "no-final-newline": plain.slice(0, -1),
    empty: "",
    blanks: "\n\n  \n",
  };
  for (const [id, text] of Object.entries(journals)) writeAgentJournal(sdd, id, text);
}, 60_000);

/** The empty journals are viewed with --allow-empty (without it they are refused as input_empty). */
const allowEmpty = (id: string): string[] => (id === "empty" || id === "blanks" ? ["--allow-empty"] : []);

describe("replay <AGENT_ID> --as-json (binary): the exact path's output", () => {
  for (const id of ["mixed", "huge", "wide", "many", "broken-mid", "relinked-mid", "torn", "no-final-newline", "empty", "blanks"]) {
    test(id, async () => {
      for (const limit of [null, 1, 37]) {
        // (an empty journal is refused unless --allow-empty: test/e2e/journal/no-journal.test.ts; here its document)
        const args = ["replay", id, "--as-json", "--sdd-dir", sdd, ...(limit === null ? [] : ["--limit", String(limit)]), ...allowEmpty(id)];
        const r = await bernstein(args);
        const exact = await exactAgentView(sdd, id, limit);
        if ("document" in exact) {
          expect({ id, limit, code: r.code }).toEqual({ id, limit, code: 0 });
          expect(r.stdout === exact.document).toBe(true);
        } else {
          // refused with the verdict alone: nothing of the entries printed before it
          expect({ id, limit, code: r.code }).toEqual({ id, limit, code: 1 });
          const doc = JSON.parse(r.stdout);
          expect([doc.ok, doc.error, doc.head_hash, doc.steps, doc.errors]).toEqual([false, "chain_verification_failed", exact.refused.head_hash, exact.refused.steps, exact.refused.errors]);
          expect(doc.entries).toBeUndefined();
        }
      }
    }, 120_000);
  }

  test("the prose view of the same journals: the table of the entries, or the refusal", async () => {
    for (const id of ["mixed", "many", "broken-mid", "torn", "empty"]) {
      const r = await bernstein(["replay", id, "--sdd-dir", sdd, ...allowEmpty(id)]);
      const exact = await exactAgentView(sdd, id);
      if ("refused" in exact) {
        expect({ id, code: r.code }).toEqual({ id, code: 1 });
        expect(r.stderr).toContain(exact.refused.errors[0]!);
        continue;
      }
      expect({ id, code: r.code }).toEqual({ id, code: 0 });
      const entries = JSON.parse(exact.document).entries as { seq: unknown; step_hash: string }[];
      if (entries.length === 0) {
        expect(r.stdout).toBe(`Journal for ${id} is empty\n`);
        continue;
      }
      const rows = r.stdout.split("\n").slice(5, 5 + entries.length);
      expect(rows.map((l) => l.split(/\s+/).slice(0, 2))).toEqual(entries.map((e) => [JSON.stringify(e.seq), `${e.step_hash.slice(0, 16)}...`]));
    }
  }, 120_000);

  test("the prose table, byte for byte: every entry's cells as the exact parse reads them", async () => {
    const widths = [6, 19, 19, 24, 0];
    for (const id of ["mixed", "huge", "wide", "many", "no-final-newline"]) {
      for (const limit of [null, 1, 37]) {
        const r = await bernstein(["replay", id, "--sdd-dir", sdd, ...(limit === null ? [] : ["--limit", String(limit)])], { env: { COLUMNS: "120" } });
        expect({ id, limit, code: r.code }).toEqual({ id, limit, code: 0 });
        const want: string[] = [];
        for await (const row of readEntries(join(sdd, "runtime", "journal", id, BUCKET_NAME), limit)) {
          want.push(exactAgentCells(row).map((c, i) => c.padEnd(widths[i]!)).join(" ").trimEnd());
        }
        const lines = r.stdout.split("\n");
        expect({ id, limit, rows: lines.slice(5, 5 + want.length) }).toEqual({ id, limit, rows: want });
        expect(lines.slice(5 + want.length)).toEqual(["", `Use 'bernstein replay export ${id}' to produce an offline-verifiable receipt.`, ""]);
      }
    }
  }, 120_000);

  test("on a narrow terminal (model, then tool, folded below each row): the Table's lines of every entry's exact cells", async () => {
    for (const id of ["mixed", "huge", "wide"]) {
      for (const width of [70, 50, 30]) {
        const r = await bernstein(["replay", id, "--sdd-dir", sdd], { env: { COLUMNS: String(width) } });
        expect({ id, width, code: r.code }).toEqual({ id, width, code: 0 });
        const t = narrowAgentTable(width);
        let want = t.header() + "\n";
        for await (const row of readEntries(join(sdd, "runtime", "journal", id, BUCKET_NAME), null)) want += t.format(exactAgentCells(row)).join("\n") + "\n";
        expect({ id, width, has: r.stdout.includes(want) }).toEqual({ id, width, has: true });
      }
    }
  }, 120_000);
});
