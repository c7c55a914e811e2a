/**
 * `replay <RUN_ID> --follow` through the compiled binary on journals
 * already written (its fast catch-up) against reading row by row in this
 * process (the reference): the events' lines byte for byte, prose and
 * JSON, then the verdict; on a generated ~6 MB journal that ends with
 * `run_completed` (non-ASCII text, escapes and floats among its rows),
 * and on one that ends without it, whose run is gone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateJournal } from "../../../bench/journal-gen.ts";
import { followJournal } from "../../../src/replay/follow.ts";
import { FollowLines } from "../../../src/replay/follow-lines.ts";
import { bernstein } from "../../helpers/cli.ts";

let sdd: string;
beforeAll(() => {
  sdd = mkdtempSync(join(tmpdir(), "bern-e2e-follow-"));
});
afterAll(() => rmSync(sdd, { recursive: true, force: true }));

/** The events' lines as reading row by row writes them, and the follow's end and verdict. */
async function reference(path: string, json: boolean) {
  const lines = new FollowLines(json);
  let text = "";
  const r = await followJournal({
    path,
    runAlive: () => false,
    signal: new AbortController().signal,
    quietMs: 0,
    fastFrom: Number.POSITIVE_INFINITY,
    wants: json ? "json" : "display",
    onEvent: (index, _line, ev) => lines.event(index, ev),
    drain: () => {
      text += new TextDecoder().decode(lines.view());
      lines.reset();
    },
  });
  return { text, ...r };
}

describe("replay <RUN_ID> --follow of a journal already written", () => {
  test("a run that completed: every event's line as the row-by-row read writes it, then the verdict, exit 0", async () => {
    const g = generateJournal(sdd, "done", 6e6, 21, "mixed");
    for (const json of [false, true]) {
      const ref = await reference(g.path, json);
      expect(ref.end).toBe("run_completed");
      const r = await bernstein(["replay", "done", "--follow", "--sdd-dir", sdd, ...(json ? ["--as-json"] : [])], { env: { COLUMNS: "100" }, timeoutMs: 30_000 });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const tail = json ? 1 : 2;
      const lines = r.stdout.split("\n").slice(0, -1);
      const events = lines.slice(0, -tail).join("\n") + "\n";
      // compared as booleans first: a diff of megabytes is not a useful failure message
      if (events !== ref.text) expect(events.slice(0, 2000)).toBe(ref.text.slice(0, 2000));
      expect(events === ref.text).toBe(true);
      if (json) {
        const doc = JSON.parse(lines.at(-1)!);
        expect(doc).toMatchObject({ ok: true, ended: "run_completed", count: g.rows, head: ref.verdict.head });
        // each event line is the journal's row, as a JSON reader reads both
        const first = JSON.parse(lines[0]!);
        expect(first.index).toBe(0);
        expect(first.event.event).toBe("run_started");
      } else {
        expect(lines.at(-2)).toBe(`chain intact for done (${g.rows} events; the run completed)`);
        expect(lines.at(-1)).toBe(`head=${ref.verdict.head}`);
      }
    }
  }, 120_000);

  test("a run gone long ago without run_completed: all its events, then 'the run's process is gone'", async () => {
    const g = generateJournal(sdd, "gone", 3e6, 22, "bench");
    const old = new Date(Date.now() - 60_000);
    utimesSync(g.path, old, old);
    const ref = await reference(g.path, false);
    const r = await bernstein(["replay", "gone", "--follow", "--sdd-dir", sdd], { env: { COLUMNS: "100" }, timeoutMs: 30_000 });
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n").slice(0, -1);
    expect(lines.slice(0, -2).join("\n") + "\n" === ref.text).toBe(true);
    expect(lines.at(-2)).toBe(`chain intact for gone (${g.rows} events; the run's process is gone)`);
  }, 60_000);
});
