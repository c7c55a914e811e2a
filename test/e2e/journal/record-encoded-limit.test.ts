import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernsteinJson } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";
import { recordEncoding, terminate } from "./record-spawn.ts";

/**
 * Issue 29: the writer never writes what the reader refuses, and a long
 * encode neither runs for minutes nor ignores signals. Every case spawns
 * the compiled binary.
 *
 *  - the row limit (here `--max-row-bytes 16M`; the default, 256 MiB, is
 *    large-record.test.ts's) is checked on the row as encoded: a 12 MB line
 *    `[1,1,…]` (6 M elements) becomes an 18 MB row (json.dumps puts a space
 *    after each comma), refused with row_too_large before anything is
 *    written: an existing journal stays byte-identical, a new run gets no
 *    journal.jsonl or metadata.json, no lock file is left;
 *  - an object of 1.3 M shuffled top-level keys (15.8 MB) records in
 *    seconds (it took 24 minutes: an insertion sort) and verifies;
 *  - SIGTERM while such a row encodes ends the command at once with the
 *    interrupted document, exit 143, the journal unchanged; SIGKILL there
 *    leaves nothing a later record or verify chokes on.
 */

const dirs = tempDirs("e2e-record-encoded-limit");
afterAll(() => dirs.cleanup());

const MAX_ROW = 16 * 1024 * 1024;

/** Files of a run directory that are not the journal's own state. */
function strays(runDir: string): string[] {
  return existsSync(runDir) ? readdirSync(runDir).filter((n) => n.endsWith(".lock") || /\.tmp/.test(n)) : [];
}

/** `{"event": "wide", <n members>}` (or `{"event": "wide", "data": {<n members>}}` when nested): keys in a scrambled (not sorted) order, compact or json.dumps spelling. */
function wideLine(n: number, compact: boolean, nested = false): string {
  const parts: string[] = new Array(n + 1);
  parts[0] = compact ? '"event":"wide"' : '"event": "wide"';
  // i * 7919 mod n visits every index once (n not a multiple of 7919): distinct keys, scrambled
  for (let i = 0; i < n; i++) {
    const k = ((i * 7919) % n).toString(36);
    parts[i + 1] = compact ? `"${k}":${i % 10}` : `"${k}": ${i % 10}`;
  }
  if (nested) return '{"event":"wide","data":{' + parts.slice(1).join(",") + "}}\n";
  return "{" + parts.join(compact ? "," : ", ") + "}\n";
}

describe("journal record: the row limit is checked on the row as written (compiled binary)", () => {
  let cwd: string;
  let bigFile: string;
  beforeAll(() => {
    cwd = dirs.make();
    bigFile = join(cwd, "big.jsonl");
    // 12 MB of input, an 18 MB row
    writeFileSync(bigFile, '{"event": "small"}\n{"event": "big", "data": [' + "1,".repeat(6_000_000 - 1) + "1]}\n");
    expect(statSync(bigFile).size).toBeLessThan(MAX_ROW);
  });

  test("an existing journal: row_too_large (exit 3) naming the line, the journal byte-identical, no lock; it still records and verifies", async () => {
    const seed = await bernsteinJson(["journal", "record", "r"], { cwd, stdin: '{"event": "a"}\n{"event": "b", "n": 1}\n{"event": "c"}\n' });
    expect(seed.code).toBe(0);
    const journal = join(cwd, ".sdd", "runs", "r", "journal.jsonl");
    const before = readFileSync(journal);
    const r = await bernsteinJson(["journal", "record", "r", "--max-row-bytes", "16M"], { cwd, stdin: readFileSync(bigFile), timeoutMs: 60_000 });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "row_too_large", line: 2, index: 4, limit_bytes: MAX_ROW });
    expect(r.json.row_bytes).toBeGreaterThan(MAX_ROW);
    expect(r.json.detail).toContain("stdin line 2");
    expect(r.stderr).toBe("");
    expect(readFileSync(journal).equals(before)).toBe(true);
    expect(strays(join(cwd, ".sdd", "runs", "r"))).toEqual([]);
    // nothing stuck behind a row nobody can read
    const next = await bernsteinJson(["journal", "record", "r", "--max-row-bytes", "16M"], { cwd, stdin: '{"event": "d"}\n' });
    expect(next.json).toMatchObject({ ok: true, recorded: 1, count: 4 });
    const v = await bernsteinJson(["journal", "verify", "r"], { cwd });
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true, count: 4 });
  }, 90_000);

  test("a new run: refused, and no journal.jsonl, metadata.json or lock is left", async () => {
    const r = await bernsteinJson(["journal", "record", "fresh", "--max-row-bytes", "16M"], { cwd, stdin: readFileSync(bigFile), timeoutMs: 60_000 });
    expect(r.code).toBe(3);
    expect(r.json.error).toBe("row_too_large");
    const dir = join(cwd, ".sdd", "runs", "fresh");
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  }, 90_000);
});

describe.skipIf(process.platform !== "linux")("journal record of a wide object: seconds, and signals are taken (compiled binary)", () => {
  let cwd: string;
  let wideFile: string;
  let slowFile: string;
  let nestedFile: string;
  beforeAll(() => {
    cwd = dirs.make();
    wideFile = join(cwd, "wide.jsonl");
    writeFileSync(wideFile, wideLine(1_300_000, false));
    // 1.7 M compact members: seconds of encoding even on a fast machine (its row, re-spaced, is then over the limit)
    slowFile = join(cwd, "slow.jsonl");
    writeFileSync(slowFile, wideLine(1_700_000, true));
    expect(statSync(slowFile).size).toBeLessThan(MAX_ROW);
    // the same members one level down: they sort as long
    nestedFile = join(cwd, "nested.jsonl");
    writeFileSync(nestedFile, wideLine(1_700_000, true, true));
    expect(statSync(nestedFile).size).toBeLessThan(MAX_ROW);
  });

  test("1.3 M scrambled top-level keys (15.8 MB): recorded well within 60 s, and the journal verifies", async () => {
    expect(statSync(wideFile).size).toBeLessThan(MAX_ROW);
    const t0 = performance.now();
    const r = await bernsteinJson(["journal", "record", "wide"], { cwd, stdin: readFileSync(wideFile), timeoutMs: 60_000 });
    const seconds = (performance.now() - t0) / 1000;
    expect(r.json).toMatchObject({ ok: true, recorded: 1, count: 1 });
    expect(seconds).toBeLessThan(60);
    const v = await bernsteinJson(["journal", "verify", "wide"], { cwd, timeoutMs: 60_000 });
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true, count: 1, head: r.json.head });
  }, 150_000);

  for (const nested of [false, true]) {
    test(`SIGTERM while a long row encodes (${nested ? "a wide nested object" : "a wide top-level object"}): the interrupted document within seconds, exit 143, the journal unchanged, no lock`, async () => {
      const run = nested ? "sig-nested" : "sig";
      const seed = await bernsteinJson(["journal", "record", run], { cwd, stdin: '{"event": "a"}\n' });
      expect(seed.code).toBe(0);
      const runDir = join(cwd, ".sdd", "runs", run);
      const before = readFileSync(join(runDir, "journal.jsonl"));
      const started = await recordEncoding(cwd, run, nested ? nestedFile : slowFile);
      expect(started.proc.exitCode).toBeNull();
      const { code, seconds, stdout, stderr } = await terminate(started);
      expect(code).toBe(143);
      // the contract is 2 s; the margin is for a loaded machine
      expect(seconds).toBeLessThan(5);
      const doc = JSON.parse(stdout);
      expect(doc).toMatchObject({ ok: false, error: "interrupted", signal: "SIGTERM", command: "journal record", run_id: run, count: 1 });
      expect(stderr).toBe("");
      expect(readFileSync(join(runDir, "journal.jsonl")).equals(before)).toBe(true);
      expect(strays(runDir)).toEqual([]);
    }, 90_000);
  }

  test("SIGKILL while the first row of a new run encodes: no empty journal; the run records and verifies afterwards", async () => {
    const { proc } = await recordEncoding(cwd, "killed", slowFile);
    expect(proc.exitCode).toBeNull();
    proc.kill("SIGKILL");
    await proc.exited;
    const runDir = join(cwd, ".sdd", "runs", "killed");
    expect(existsSync(join(runDir, "journal.jsonl"))).toBe(false);
    // a lock file of a dead holder may remain: it holds nothing (an OS lock dies with its holder)
    const r = await bernsteinJson(["journal", "record", "killed"], { cwd, stdin: '{"event": "after"}\n' });
    expect(r.json).toMatchObject({ ok: true, recorded: 1, count: 1 });
    const v = await bernsteinJson(["journal", "verify", "killed"], { cwd });
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true, count: 1 });
  }, 90_000);
});
