import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VECTORS } from "../helpers/cli.ts";
import { followJournal } from "../../src/replay/follow.ts";

const dir = mkdtempSync(join(tmpdir(), "bern-follow-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A valid four-event chain (test vectors), one string per row. */
const ROWS = readFileSync(join(VECTORS, "run-journal", "chain-4.jsonl"), "utf8").split("\n").filter(Boolean);
let n = 0;

/** Follow `path` while `write` appends to it; the run counts as gone (quiet 300 ms after the writes). */
async function follow(write: (path: string) => Promise<void>, abort?: (ac: AbortController, seen: number) => void, aliveForever = false) {
  const path = join(dir, `j${n++}.jsonl`);
  writeFileSync(path, "");
  const seen: { index: number; line: number; event: unknown }[] = [];
  const ac = new AbortController();
  let writing = true;
  const followed = followJournal({
    path,
    runAlive: () => writing || aliveForever,
    signal: ac.signal,
    quietMs: 300,
    onEvent: (index, line, ev) => {
      seen.push({ index, line, event: ev.fields.get("event") });
      abort?.(ac, seen.length);
    },
  });
  await write(path);
  writing = false;
  const r = await followed;
  return { ...r, seen };
}

describe("followJournal: a growing run journal, verified as it grows", () => {
  test("rows appended in pieces (a line split mid-way) are each handed on once, verified, in order", async () => {
    const r = await follow(async (path) => {
      for (const row of ROWS.slice(0, 3)) {
        const half = Math.floor(row.length / 2);
        appendFileSync(path, row.slice(0, half));
        await Bun.sleep(150);
        appendFileSync(path, row.slice(half) + "\n\n");
        await Bun.sleep(50);
      }
    });
    expect(r.end).toBe("run_gone");
    expect(r.seen.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(r.seen.map((s) => s.line)).toEqual([0, 2, 4]);
    expect(r.verdict).toMatchObject({ ok: true, count: 3, head: JSON.parse(ROWS[2]!).event_hash, divergent_index: null });
  });

  test("a tampered row stops it at that row: not handed on, its index and line in the verdict", async () => {
    const r = await follow(async (path) => {
      appendFileSync(path, ROWS.slice(0, 2).join("\n") + "\n");
      await Bun.sleep(200);
      appendFileSync(path, ROWS[2]!.replace('"index": 2', '"index": 2, "forged": true') + "\n" + ROWS[3] + "\n");
    });
    expect(r.end).toBe("diverged");
    expect(r.seen.map((s) => s.index)).toEqual([0, 1]);
    expect(r.verdict).toMatchObject({ ok: false, chain_consistent: false, divergent_index: 2, divergent_line: 3 });
  });

  test("a line that is no row stops it with coverage partial", async () => {
    const r = await follow(async (path) => appendFileSync(path, ROWS[0] + "\nnot json\n" + ROWS[1] + "\n"));
    expect(r.end).toBe("diverged");
    expect(r.verdict).toMatchObject({ ok: false, chain_consistent: true, coverage: "partial", discarded_line_indices: [1], count: 1 });
  });

  test("the run_completed event ends it at once; an abort ends it with the verdict so far", async () => {
    expect(JSON.parse(ROWS[3]!).event).toBe("run_completed");
    // the run's process still there: only the event ends it
    const r1 = await follow(async (path) => appendFileSync(path, ROWS.join("\n") + "\n"), undefined, true);
    expect(r1.end).toBe("run_completed");
    expect(r1.verdict).toMatchObject({ ok: true, count: 4 });
    const r2 = await follow(
      async (path) => {
        appendFileSync(path, ROWS.slice(0, 2).join("\n") + "\n");
        await Bun.sleep(300);
        appendFileSync(path, ROWS.slice(2).join("\n") + "\n");
      },
      (ac, seen) => seen === 2 && ac.abort(),
    );
    expect(r2.end).toBe("interrupted");
    expect(r2.verdict).toMatchObject({ ok: true, count: 2 });
  });
});

describe("followJournal: catching up with a long journal", () => {
  test("a signal's handler runs while it reads (an abort from a timer ends it), and the events read are handed out first", async () => {
    const { generateJournal } = await import("../../bench/journal-gen.ts");
    // long enough that reading it exactly takes several turns' worth (100 ms each) on any machine
    const gen = generateJournal(join(dir, "sdd"), "long", 30_000_000, 9);
    const ac = new AbortController();
    let events = 0;
    let caughtUp = 0;
    let handedOutAtEnd = -1;
    // a timer is a handler of the event loop, as a SIGINT/SIGTERM handler is: it runs only between two turns
    let timer: ReturnType<typeof setTimeout> | undefined;
    const t0 = performance.now();
    const r = await followJournal({
      path: gen.path,
      runAlive: () => false,
      signal: ac.signal,
      quietMs: 0,
      onEvent: () => {
        if (events++ === 0) timer = setTimeout(() => ac.abort(), 0);
      },
      drain: () => {
        caughtUp++;
        handedOutAtEnd = events;
      },
    });
    clearTimeout(timer);
    expect(r.end).toBe("interrupted");
    expect(events).toBeGreaterThan(0);
    expect(events).toBeLessThan(gen.rows);
    expect(performance.now() - t0).toBeLessThan(2000);
    // the events handed on were written out before the verdict
    expect(caughtUp).toBeGreaterThanOrEqual(1);
    expect(handedOutAtEnd).toBe(events);
    expect(r.verdict).toMatchObject({ ok: true, count: events });
  }, 30_000);
});
