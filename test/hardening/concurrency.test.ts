/**
 * Concurrency through the compiled binary:
 *  - two writers on one run journal: the second (and repair, seal) is
 *    refused with a clear message while the first holds the journal;
 *  - two writers on one step journal: refused while the owner lives, taken
 *    over once it was SIGKILLed (stale lock);
 *  - `journal verify` / `replay --verify` of a journal being appended give
 *    snapshot verdicts: the chain always intact, and each verdict is a
 *    prefix of the final journal (its count and head name a real row).
 * (The task server under concurrent load is in harnesses.test.ts / scripts/load.ts.)
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyJournalSync } from "../../src/journal/verify.ts";
import { StepJournal } from "../../src/steps/writer.ts";
import { verifyStepJournal } from "../../src/steps/verify.ts";
import { parse } from "../../src/pyjson/parse.ts";
import { bernsteinJson, binPath, ROOT } from "../helpers/cli.ts";

const dirs: string[] = [];
function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `bernstein-conc-${prefix}-`));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 800; i++) {
    if (cond()) return;
    await Bun.sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A `journal record RUN` reading JSON Lines from a pipe we keep open. */
function openRecorder(sdd: string, runId: string) {
  const proc = Bun.spawn([binPath(), "journal", "record", runId, "--sdd-dir", sdd, "--as-json"], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  let sent = 0;
  return {
    proc,
    get sent() {
      return sent;
    },
    async send(n: number) {
      for (let i = 0; i < n; i++) proc.stdin.write(JSON.stringify({ event: "tick", i: sent++, pad: "x".repeat(sent % 400), u: "é🚀" }) + "\n");
      await proc.stdin.flush();
    },
    async finish() {
      proc.stdin.end();
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { out, err, code };
    },
  };
}

describe("two writers", () => {
  test("a second writer, repair and seal of a run journal being written are refused with a clear message", async () => {
    const sdd = join(tmp("writers"), "sdd");
    const rec = openRecorder(sdd, "live");
    await rec.send(10);
    await until(() => existsSync(join(sdd, "runs", "live", "journal.lock")), "the writer lock");
    for (const args of [["journal", "record", "live", "second_writer", "--sdd-dir", sdd], ["replay", "repair", "live", "--sdd-dir", sdd], ["journal", "seal", "live", "--sdd-dir", sdd]]) {
      const r = await bernsteinJson(args);
      expect({ args, code: r.code, error: r.json.error }).toEqual({ args, code: 2, error: "journal_locked" });
      expect(r.json.detail).toContain("another process is writing its journal");
      expect(r.json.owner_pid).toBe(rec.proc.pid);
    }
    await rec.send(5);
    const done = await rec.finish();
    expect(done.code).toBe(0);
    const v = verifyJournalSync(join(sdd, "runs", "live", "journal.jsonl"));
    expect(v.ok).toBe(true);
    expect(v.count).toBe(15);
    // Released: a second writer may now continue the same chain.
    const again = await bernsteinJson(["journal", "record", "live", "second_writer", "--sdd-dir", sdd]);
    expect(again.code).toBe(0);
    expect(String(again.json.count)).toBe("16");
  }, 30_000);

  test("a second step-journal writer is refused while the owner lives, and takes over after a SIGKILL", async () => {
    const sdd = join(tmp("steps"), "sdd");
    const driver = Bun.spawn([process.execPath, join(ROOT, "tools", "fuzz", "drivers", "step-writer.ts"), sdd, "agent-w", "3"], { stdout: "pipe", stderr: "pipe" });
    const bucket = join(sdd, "runtime", "journal", "agent-w", "000000.jsonl");
    await until(() => existsSync(bucket) && readFileSync(bucket).length > 10_000, "the driver's first appends");
    expect(() => StepJournal.open(sdd, "agent-w")).toThrow(/open in another writer/);
    driver.kill("SIGKILL");
    await driver.exited;
    const j = StepJournal.open(sdd, "agent-w");
    const recovered = j.nextSeq();
    j.append({ input_hash: "after", prompt: "takeover" });
    j.close();
    const v = await verifyStepJournal(bucket);
    expect(v.errors).toEqual([]);
    expect(v.steps).toBe(recovered + 1);
  }, 30_000);
});

describe("verify while appending", () => {
  test("every concurrent verdict is an intact snapshot of a prefix of the final journal", async () => {
    const sdd = join(tmp("snap"), "sdd");
    const journal = join(sdd, "runs", "live", "journal.jsonl");
    const rec = openRecorder(sdd, "live");
    // `journal record` writes in batches of 2048 events: send more than one.
    await rec.send(5000);
    await until(() => existsSync(journal) && readFileSync(journal).length > 0, "the first rows");
    let feeding = true;
    const feeder = (async () => {
      while (feeding) {
        await rec.send(3000);
        await Bun.sleep(1);
      }
    })();
    const verdicts: { count: number; head: string; ok: boolean; coverage: string; discarded: number[]; lines: number }[] = [];
    for (let k = 0; k < 8; k++) {
      const args = k % 2 ? ["journal", "verify", journal, "--as-json"] : ["replay", "live", "--verify", "--threads", "2", "--sdd-dir", sdd, "--as-json"];
      const r = await bernsteinJson(args);
      expect([0, 1]).toContain(r.code);
      const doc = parse(r.stdout.trim()) as Map<string, unknown>;
      const num = (x: unknown) => Number((x as { raw?: string })?.raw ?? x);
      expect(doc.get("chain_consistent")).toBe(true);
      verdicts.push({
        count: num(doc.get("count")),
        head: doc.get("head") as string,
        ok: doc.get("ok") as boolean,
        coverage: doc.get("coverage") as string,
        discarded: (doc.get("discarded_line_indices") as unknown[]).map(num),
        lines: num(doc.get("count")),
      });
    }
    feeding = false;
    await feeder;
    const done = await rec.finish();
    expect(done.code).toBe(0);
    const final = verifyJournalSync(journal);
    expect(final.ok).toBe(true);
    const rows = readFileSync(journal, "utf8").split("\n").filter(Boolean);
    expect(rows.length).toBe(final.count);
    let last = 0;
    for (const v of verdicts) {
      // A write in flight may show as one torn final line; nothing else may be discarded.
      if (!v.ok) expect(v.discarded).toEqual([v.count]);
      expect(v.count).toBeGreaterThanOrEqual(last);
      last = v.count;
      const headOfPrefix = v.count === 0 ? "" : (JSON.parse(rows[v.count - 1]!.replace(/\bNaN\b/g, "null")) as { event_hash: string }).event_hash;
      expect(v.head).toBe(headOfPrefix);
    }
    expect(verdicts.filter((v) => v.ok).length).toBeGreaterThan(0);
    console.log(`verify while appending: counts ${verdicts.map((v) => v.count).join(", ")} of ${final.count}`);
  }, 60_000);
});
