/**
 * Issue 16 items 1-3 through the compiled binary: concurrent writers never
 * fork the chain, stale or forged lock files never block a writer, and
 * `journal record` fsyncs the journal before it reports success.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { concurrentRunWriters, concurrentStepWriters, straceCommand } from "../../../tools/fuzz/writers.ts";
import { Rng } from "../../../tools/fuzz/rng.ts";
import { verifyJournalSync } from "../../../src/journal/verify.ts";
import { bernsteinJson, binPath } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("e2e-locking");
afterAll(() => dirs.cleanup());

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => JSON.stringify({ event: "e", tag, i }) + "\n").join("");

describe("concurrent writers (item 1)", () => {
  test("8 `journal record` processes started together on one run: one chain, every loser refused with journal_locked (exit 2)", async () => {
    const rng = new Rng(16);
    let winners = 0;
    for (let trial = 0; trial < 6; trial++) {
      const s = await concurrentRunWriters(binPath(), dirs.make(), rng, 8);
      expect(s.winners + s.refused).toBe(8);
      winners += s.winners;
    }
    expect(winners).toBeGreaterThanOrEqual(6);
  }, 60_000);

  test("step journals alike: 6 writer processes on one agent never interleave", async () => {
    const rng = new Rng(17);
    for (let trial = 0; trial < 3; trial++) {
      const s = await concurrentStepWriters(dirs.make(), rng, 6);
      expect(s.winners).toBeGreaterThanOrEqual(1);
    }
  }, 60_000);

  test("a writer holding the lock refuses the second one for its whole life", async () => {
    const cwd = dirs.make();
    const first = Bun.spawn([binPath(), "journal", "record", "held", "--as-json"], { cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const lock = join(cwd, ".sdd", "runs", "held", "journal.lock");
    for (let i = 0; i < 200 && !existsSync(lock); i++) await Bun.sleep(25);
    await Bun.sleep(50);
    expect(statSync(lock).mode & 0o777).toBe(0o600);
    for (let i = 0; i < 3; i++) {
      const r = await bernsteinJson(["journal", "record", "held", "x"], { cwd });
      expect([r.code, r.json.error]).toEqual([2, "journal_locked"]);
      expect(r.json.owner_pid).toBe(first.pid);
    }
    first.stdin.write(lines(3, "first"));
    first.stdin.end();
    expect(await first.exited).toBe(0);
    const after = await bernsteinJson(["journal", "record", "held", "x"], { cwd });
    expect([after.code, after.json.count]).toEqual([0, 4]);
  });
});

describe("stale locks (item 2)", () => {
  test("a lock file naming pid 1, a live unrelated pid, garbage or nothing never blocks a writer", async () => {
    const cwd = dirs.make();
    expect((await bernsteinJson(["journal", "record", "r", "a"], { cwd })).code).toBe(0);
    const lock = join(cwd, ".sdd", "runs", "r", "journal.lock");
    const contents = ["1\n", `${process.pid}\n`, `${process.pid} 12345\n`, "", "not a pid"];
    for (const [i, text] of contents.entries()) {
      writeFileSync(lock, text);
      const r = await bernsteinJson(["journal", "record", "r", "b"], { cwd });
      expect({ text, code: r.code, count: r.json.count }).toEqual({ text, code: 0, count: i + 2 });
    }
    expect(existsSync(lock)).toBe(false);
  });

  test("a writer killed with SIGKILL leaves no lock behind that blocks the next one", async () => {
    const cwd = dirs.make();
    const p = Bun.spawn([binPath(), "journal", "record", "k"], { cwd, stdin: "pipe", stdout: "ignore", stderr: "ignore" });
    const lock = join(cwd, ".sdd", "runs", "k", "journal.lock");
    for (let i = 0; i < 200 && !existsSync(lock); i++) await Bun.sleep(25);
    p.kill("SIGKILL");
    await p.exited;
    expect(existsSync(lock)).toBe(true); // the file stays; the OS lock died with its holder
    const r = await bernsteinJson(["journal", "record", "k", "after"], { cwd });
    expect([r.code, r.json.count]).toEqual([0, 1]);
  });
});

describe("durability (item 3)", () => {
  const strace = straceCommand();
  test.skipIf(strace === null)("journal record fsyncs journal.jsonl after its last write and before it reports", async () => {
    const cwd = dirs.make();
    const trace = join(cwd, "trace.log");
    const p = Bun.spawn([...strace!, "-o", trace, binPath(), "journal", "record", "d", "--as-json"], {
      cwd,
      stdin: new Blob([lines(20_000, "d")]),
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(p.stdout).text();
    expect(await p.exited).toBe(0);
    const ops = readFileSync(trace, "utf8")
      .split("\n")
      .map((l) => /^\d+\s+(write|fsync|fdatasync)\((\d+)<([^>]*)>/.exec(l))
      .filter((m) => m !== null)
      .map((m) => ({ op: m![1]!, path: m![3]! }));
    const journal = ops.filter((o) => o.path.endsWith("/runs/d/journal.jsonl"));
    const lastWrite = journal.map((o) => o.op).lastIndexOf("write");
    const lastSync = journal.map((o) => o.op).lastIndexOf("fsync");
    expect(lastWrite).toBeGreaterThanOrEqual(0);
    expect(lastSync).toBeGreaterThan(lastWrite);
    // one fsync for the whole batch of 20,000 events, not one per row
    expect(journal.filter((o) => o.op === "fsync").length).toBe(1);
    // the acknowledgement (stdout) comes after the fsync
    const stdoutWrite = ops.findIndex((o) => o.path.startsWith("pipe:") && o.op === "write");
    const syncAt = ops.findIndex((o) => o.op === "fsync" && o.path.endsWith("/runs/d/journal.jsonl"));
    if (stdoutWrite >= 0) expect(stdoutWrite).toBeGreaterThan(syncAt);
    expect(JSON.parse(out).count).toBe(20_000);
    expect(verifyJournalSync(join(cwd, ".sdd", "runs", "d", "journal.jsonl")).count).toBe(20_000);
  }, 30_000);
});

describe("file modes (item 9, journal side)", () => {
  test("run journal and seal 0644 (shared); lock and metadata 0600; step journals 0600 in 0700; torn fragments 0600", async () => {
    const cwd = dirs.make();
    expect((await bernsteinJson(["journal", "record", "m", "a"], { cwd })).code).toBe(0);
    const run = join(cwd, ".sdd", "runs", "m");
    const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
    expect(mode(join(run, "journal.jsonl"))).toBe("644");
    expect(mode(join(run, "metadata.json"))).toBe("600");
    expect((await bernsteinJson(["journal", "seal", "m"], { cwd })).code).toBe(0);
    expect(mode(join(run, "seal.json"))).toBe("644");
  });
});
