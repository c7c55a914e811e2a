/**
 * The short, fixed-seed forms of the hardening harnesses (the long forms
 * are `npm run fuzz`, `bun scripts/crash.ts` and `bun scripts/load.ts`):
 * every fuzz target with its extremes, a few crash trials of every writer
 * kind, and a small load run through the compiled binary. Each asserts
 * that nothing broke and prints its figures.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runCrashTrials, TRIAL_KINDS } from "../../tools/fuzz/crash.ts";
import type { FuzzReport } from "../../tools/fuzz/runner.ts";
import type { TargetName } from "../../tools/fuzz/targets/index.ts";
import { pythonAvailable } from "../../tools/fuzz/python.ts";
import { binPath, ROOT } from "../helpers/cli.ts";

const SEED = 9;
const python = pythonAvailable();

// The tar target's short form is test/hardening/fuzz-tar.test.ts.
const SHORT: Record<Exclude<TargetName, "tar">, number> = { parser: 1500, journal: 250, receipt: 250, server: 1500, "replay-diff": 300, display: 150, "row-index": 3000 };

/**
 * One target's short run in a process of its own (scripts/fuzz.ts): inside
 * the suite's one process, after two hundred files, the same run took 4-6x
 * as long as alone (a large heap makes every collection slow) and brushed
 * its time limit.
 */
async function fuzzAlone(name: TargetName, cases: number): Promise<FuzzReport> {
  const argv = [process.execPath, join(ROOT, "scripts", "fuzz.ts"), "--target", name, "--seed", String(SEED), "--cases", String(cases)];
  argv.push("--bin", binPath(), "--binary-sample", "0.02", "--json", "--no-save", ...(python ? [] : ["--no-python"]));
  const proc = Bun.spawn(argv, { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  // exit 1 is a crash, reported in the document; anything else is the harness failing
  if (code !== 0 && code !== 1) throw new Error(`scripts/fuzz.ts --target ${name} exited ${code}: ${err}`);
  return (JSON.parse(out) as { targets: FuzzReport[] }).targets[0]!;
}

describe("fuzzers (short fixed-seed runs)", () => {
  for (const [name, cases] of Object.entries(SHORT) as [Exclude<TargetName, "tar">, number][]) {
    test(`${name}: ${cases} cases, extremes refused cleanly, no crash`, async () => {
      const report = await fuzzAlone(name, cases);
      const crashes = report.crashes.map((c) => `${c.signature} x${c.count}: ${c.message}`);
      expect(crashes).toEqual([]);
      expect(report.extremes.filter((x) => !x.ok)).toEqual([]);
      expect(report.cases).toBe(cases);
      if (name === "journal") expect(report.stats.parallel_checked).toBe(cases);
      if (python && (name === "parser" || name === "journal")) expect(report.stats.python_checked).toBeGreaterThan(0);
      console.log(`${name}: ${report.cases} cases, ${report.binaryCases} via binary, ${JSON.stringify(report.stats)}`);
    }, 60_000);
  }
});

describe("crash consistency (short)", () => {
  test("SIGKILL at random points of every writer kind: journals repair and resume, receipts atomic, session.json whole", async () => {
    const report = await runCrashTrials({ bin: binPath(), seed: SEED, trials: 2 * TRIAL_KINDS.length, exportSteps: 4000 });
    expect(report.failures.map((f) => `${f.kind} #${f.trial} (${f.delayMs} ms): ${f.detail}`)).toEqual([]);
    expect(report.outcomes.FAILED).toBe(0);
    expect(report.concurrency.forks).toBe(0);
    expect(report.concurrency.trials).toBe(2);
    for (const k of TRIAL_KINDS) expect(Object.values(report.by_kind[k]!).reduce((a, b) => a + b, 0)).toBe(2);
    console.log(`crash: ${JSON.stringify(report.outcomes)}`);
  }, 90_000);
});

describe("task server load (short)", () => {
  test("10 clients x 60 requests through 'bernstein server': no lost update, no double claim, no 5xx", async () => {
    const proc = Bun.spawn([process.execPath, join(ROOT, "scripts", "load.ts"), "--clients", "10", "--requests", "60", "--seed", String(SEED), "--bin", binPath(), "--json"], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const r = JSON.parse(out) as { ok: boolean; problems: string[]; server_checks: string[]; total_requests: number; double_claims: number; lost_updates: number; server_errors: number; latency: { all: { p99_ms: number } } };
    expect({ code, problems: r.problems, server: r.server_checks, err: code === 0 ? "" : err }).toEqual({ code: 0, problems: [], server: [], err: "" });
    expect(r.total_requests).toBe(600);
    expect([r.double_claims, r.lost_updates, r.server_errors]).toEqual([0, 0, 0]);
    console.log(`load: 600 requests, p99 ${r.latency.all.p99_ms} ms`);
  }, 60_000);

  test("lease-expiry run (--lease-s 1): no completion without the claim, every abandoned claim expires back to open and is journaled once", async () => {
    const proc = Bun.spawn(
      [process.execPath, join(ROOT, "scripts", "load.ts"), "--clients", "10", "--requests", "150", "--seed", String(SEED), "--lease-s", "1", "--bin", binPath(), "--json"],
      { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
    );
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const r = JSON.parse(out);
    expect({ code, problems: r.problems, server: r.server_checks, err: code === 0 ? "" : err }).toEqual({ code: 0, problems: [], server: [], err: "" });
    expect(r.theft_attempts).toBeGreaterThan(0);
    expect(r.stolen_completions).toBe(0);
    expect(r.abandoned).toBeGreaterThan(0);
    expect(r.expired_ok).toBe(r.abandoned);
    expect(r.journaled_expiries).toBe(r.claims_granted - r.completed);
    console.log(`lease load: ${r.theft_attempts} theft attempts refused, ${r.abandoned} abandoned claims expired, ${r.journaled_expiries} expiries journaled`);
  }, 60_000);
});
