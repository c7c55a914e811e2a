/** BERNSTEIN_REPLAY_RETENTION (§1.6, #5881 behaviour) and Python int() parsing of N. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EventJournal, parseRetention, pruneRuns } from "../../src/journal/index.ts";
import { acquireLock } from "../../src/fsutil/lock.ts";
import { runPython } from "../helpers/python.ts";
import { tempDirs } from "./tmp.ts";

const dirs = tempDirs("retention");
afterAll(() => dirs.cleanup());

function runsWith(names: string[]): string {
  const sdd = dirs.make();
  for (const n of names) mkdirSync(join(sdd, "runs", n), { recursive: true });
  return sdd;
}

const list = (sdd: string): string[] => readdirSync(join(sdd, "runs")).sort();

describe("retention", () => {
  test("retention 2 over run-00..03 keeps run-02, run-03 (opening run-03)", () => {
    const sdd = runsWith(["run-00", "run-01", "run-02"]);
    EventJournal.create("run-03", { sddDir: sdd, env: { BERNSTEIN_REPLAY_RETENTION: "2" } }).close();
    expect(list(sdd)).toEqual(["run-02", "run-03"]);
  });

  test("the active run sorting first still caps the total (#5881)", () => {
    const sdd = runsWith(["run-b", "run-c"]);
    EventJournal.create("run-a", { sddDir: sdd, env: { BERNSTEIN_REPLAY_RETENTION: "2" } }).close();
    expect(list(sdd)).toEqual(["run-a", "run-c"]);
  });

  test("0, negative, empty, unset or unparsable keep everything", () => {
    for (const v of [undefined, "", "0", "-3", "3x", "two", "1.5"]) {
      const sdd = runsWith(["a", "b", "c"]);
      EventJournal.create("d", { sddDir: sdd, env: { BERNSTEIN_REPLAY_RETENTION: v } }).close();
      expect(list(sdd)).toEqual(["a", "b", "c", "d"]);
    }
  });

  test("resume also prunes; files and symlinks under runs/ are not candidates; a run another live writer holds is spared", async () => {
    const sdd = runsWith(["r1", "r2", "r3", "r4"]);
    writeFileSync(join(sdd, "runs", "stray.txt"), "x");
    symlinkSync(join(sdd, "runs", "r4"), join(sdd, "runs", "r0-link"));
    // r1 is being written by another writer (its OS lock is held); r2 has a
    // pid-only lock file naming a live pid, which holds nothing.
    const held = acquireLock(join(sdd, "runs", "r1", "journal.lock"));
    writeFileSync(join(sdd, "runs", "r2", "journal.lock"), `${process.ppid}\n`);
    (await EventJournal.resume("r4", { sddDir: sdd, env: { BERNSTEIN_REPLAY_RETENTION: "2" } })).close();
    held.release();
    expect(list(sdd)).toEqual(["r0-link", "r1", "r4", "stray.txt"]);
  });

  test("pruneRuns is a no-op on a missing root", () => {
    expect(pruneRuns(join(dirs.make(), "runs"), "x", 1)).toEqual([]);
  });

  test("N is parsed like Python int(value.strip()) (ValueError -> 0)", () => {
    const values = ["3", " 3 ", "+3", "3_0", "3__0", "\u0663", "\uff13", "\t2\x1c", "\u20282\u2029", "2e1", "0x2", "-1", "", " ", "\ufeff2", "\u00a02"];
    const py = runPython(
      `import json, sys
def parse(raw):
    raw = raw.strip()
    if not raw:
        return 0
    try:
        n = int(raw)
    except ValueError:
        return 0
    return n if n > 0 else 0
print(json.dumps([parse(v) for v in json.load(sys.stdin)]))`,
      values,
    ) as number[];
    expect(values.map(parseRetention)).toEqual(py);
    expect(py).toContain(30);
  });
});
