import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rebuildStateSync } from "../../../src/journal/rebuild.ts";
import { dumps } from "../../../src/pyjson/encode.ts";
import { measureIds } from "../../../src/replay/display.ts";
import { projectionJson, projectRunFast } from "../../../src/replay/fast-project.ts";
import { streamRunJson, streamRunJsonExact } from "../../../src/replay/run-json.ts";
import { runTable, writeRunTable, writeRunTableExact } from "../../../src/replay/run-table.ts";
import { scanRun, scanRunFast } from "../../../src/replay/run-view.ts";
import { CellSpool } from "../../../src/replay/cell-spool.ts";
import { CollectingOutput } from "../../../src/replay/sink.ts";
import { renderTimeline } from "../../../src/timeline/generate.ts";
import { mutateBytes, mutateLines } from "../mutate.ts";
import { respaceLines } from "../respace.ts";
import { runJournalVectors } from "../seeds.ts";
import { violation, type FuzzTarget } from "../types.ts";
import type { Rng } from "../rng.ts";

/**
 * (e) `replay <RUN_ID>`'s display (--as-json, the prose scan and table,
 * --from-step, the --html page): run journals mutated from the vectors go
 * through the fast paths (byte-level rows, exact path for the rest) and
 * through the exact path alone; the outputs must be identical byte for
 * byte (or both fail with the same error), at a random --limit, table
 * width, step, and page bounds.
 */

async function collect(run: (out: CollectingOutput) => Promise<void>): Promise<string> {
  const out = new CollectingOutput();
  try {
    await run(out);
  } catch (err) {
    return `error ${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
  return out.text();
}

async function attempt(fn: () => string | Promise<string>): Promise<string> {
  try {
    return await fn();
  } catch (err) {
    return `error ${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
}

function same(invariant: string, fast: string, exact: string): void {
  if (fast === exact) return;
  let i = 0;
  while (i < fast.length && fast[i] === exact[i]) i++;
  throw violation(invariant, `differs at ${i}: fast ${JSON.stringify(fast.slice(i, i + 80))} vs exact ${JSON.stringify(exact.slice(i, i + 80))}`);
}

/** Fillers for a string value: plain, escaped, \u escapes (a surrogate pair too), raw UTF-8. */
const FILLERS = ["x", "ab\\n", "\\u00e9", "\\ud83d\\ude00", "\u00e9", " \\\"q\\\" "];

/**
 * A line made 64 KiB to ~300 KiB long by filling the first string value
 * after a `": "` (or `":"`): the display's long-line paths (the copy
 * kernel, the transcoder, --from-step's kernel), with every other mutation
 * still in the input.
 */
function lengthen(rng: Rng, input: Uint8Array): Uint8Array {
  const text = Buffer.from(input).toString("latin1");
  const lines = text.split("\n");
  const i = rng.int(lines.length);
  const line = lines[i]!;
  const at = line.search(/": ?"/);
  if (at < 0) return input;
  const q = line.indexOf('"', at + 2) + 1;
  const filler = Buffer.from(rng.pick(FILLERS), "utf8").toString("latin1");
  lines[i] = line.slice(0, q) + filler.repeat(Math.ceil(rng.range(65_536, 300_000) / filler.length)) + line.slice(q);
  return Buffer.from(lines.join("\n"), "latin1");
}

export function displayTarget(): FuzzTarget {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-fuzz-display-"));
  const file = join(dir, "journal.jsonl");
  let compared = 0;
  return {
    name: "display",
    seeds: () => runJournalVectors().map((v) => v.bytes),
    mutate(rng, seeds) {
      const base = rng.pick(seeds);
      const out = rng.chance(0.5) ? mutateLines(rng, base, { corpus: seeds, maxBytes: 1 << 20 }) : mutateBytes(rng, base, { corpus: seeds, maxBytes: 1 << 20 });
      // now and then its rows in another spacing (a journal rewritten by jq -c, say), taken by the fast paths re-spaced
      const spaced = rng.chance(0.15) ? respaceLines(rng, out) : out;
      return rng.chance(0.2) ? lengthen(rng, spaced) : spaced;
    },
    async run(input, rng) {
      writeFileSync(file, input);
      const limit = rng.chance(0.5) ? undefined : rng.int(12);
      const doc = { journal: file, runId: "fuzz", metadata: null, limit };
      same("json_fast_vs_exact", await collect((o) => streamRunJson(doc, o)), await collect((o) => streamRunJsonExact(doc, o)));
      const scanOf = async (fast: boolean): Promise<string> => {
        const ids = { agent: 0, task: 0 };
        try {
          const s = fast ? await scanRunFast(file, limit, ids) : await scanRun(file, limit, (row) => measureIds(row, ids));
          return JSON.stringify({ ...s, ids });
        } catch (err) {
          return `error ${(err as { code?: string }).code}: ${(err as Error).message}`;
        }
      };
      same("scan_fast_vs_exact", await scanOf(true), await scanOf(false));
      let base: number | null = null;
      try {
        base = (await scanRun(file, limit)).baseTs;
      } catch {
        /* unreadable: both table paths fail alike */
      }
      const table = runTable({ agent: rng.int(30), task: rng.int(30) }, 30 + rng.int(200));
      const exact = await collect((o) => writeRunTableExact(file, base, limit, table, o));
      // the table from the scan's spool (as the command lays it out), and without one
      const spool = CellSpool.open()!;
      try {
        same(
          "table_spool_vs_exact",
          await collect(async (o) => writeRunTable(file, (await scanRunFast(file, limit, undefined, spool)).baseTs, limit, table, o, spool)),
          exact,
        );
      } finally {
        spool.close();
      }
      same("table_fast_vs_exact", await collect((o) => writeRunTable(file, base, limit, table, o)), exact);
      const n = rng.chance(0.3) ? 1e9 : rng.int(40);
      const cap = rng.chance(0.5) ? 16 : undefined;
      same(
        "from_step_fast_vs_exact",
        await attempt(async () => Buffer.concat([...projectionJson(file, await projectRunFast(file, n, cap))]).toString("latin1")),
        await attempt(() => {
          const s = rebuildStateSync(file, n);
          return dumps({ events: s.events, head_hash: s.head_hash, ok: true, step_count: s.step_count }, { sortKeys: true }) + "\n";
        }),
      );
      const maxEvents = rng.chance(0.5) ? undefined : 1 + rng.int(20);
      const maxBars = rng.chance(0.5) ? undefined : rng.int(5);
      const pageOf = async (exactPass: boolean): Promise<string> => {
        let page = "";
        try {
          const input = { runId: "fuzz", journal: file, metadata: null, seal: null, sealPath: null, threads: 1, allowEmpty: true, exactPass, maxEvents, maxBars };
          const r = await renderTimeline(input, (chunk) => {
            page += chunk;
          });
          return `${page}\n${JSON.stringify({ ...r, verdict: undefined })}`;
        } catch (err) {
          return `${page}\nerror ${(err as { code?: string }).code}: ${(err as Error).message}`;
        }
      };
      same("page_fast_vs_exact", await pageOf(false), await pageOf(true));
      compared++;
    },
    stats: () => ({ compared }),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
