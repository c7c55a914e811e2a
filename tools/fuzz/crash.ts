import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputError, RefusalError } from "../../src/errors/index.ts";
import { scanTail } from "../../src/journal/repair.ts";
import { readSealFile } from "../../src/journal/seal.ts";
import { verifyJournalSync } from "../../src/journal/verify.ts";
import { verifyReceipt } from "../../src/receipts/verify.ts";
import { loadSession, sessionPath } from "../../src/session/state.ts";
import { StepJournal } from "../../src/steps/writer.ts";
import { verifyStepJournal } from "../../src/steps/verify.ts";
import { looksLikeStackTrace } from "./binary.ts";
import { Rng } from "./rng.ts";
import { concurrentRunWriters, concurrentStepWriters, forbiddenExportChecks, hostileTailChecks, powerLossTrial, WriterFailure, type ConcurrencyStats } from "./writers.ts";

/**
 * Crash consistency: start a writer, SIGKILL it at a random instant, then
 * check what it left behind:
 *  - a run journal verifies, or its only damage is a torn tail that
 *    `replay repair` removes, after which it verifies and `journal record`
 *    resumes the same chain (the next row links to the surviving head);
 *  - a step journal verifies or has a torn last line only, and reopening
 *    recovers it (then one more append verifies);
 *  - `session.json` (when present) always parses as a whole snapshot, 0600;
 *  - a receipt never exists half-written under its final name.
 * Writers: `journal record` (binary, stdin stream), the step-journal writer
 * (library driver), `replay export` / `replay publish` (binary), and
 * `bernstein run` with script agents (orchestrator + session saver).
 * Plus the writer harnesses of tools/fuzz/writers.ts: concurrent writers on
 * one run or agent (0 forks), power loss under strace (no acknowledged
 * event lost), every hostile tail shape against repair, every forbidden
 * export target.
 */
export const TRIAL_KINDS = [
  "journal-record",
  "step-writer",
  "receipt-export",
  "orchestrator",
  "concurrent-writers",
  "power-loss",
  "hostile-tails",
  "forbidden-exports",
] as const;
export type TrialKind = (typeof TRIAL_KINDS)[number];

export type TrialOutcome =
  /** The writer finished before the kill landed. */
  | "finished"
  /** Killed; everything on disk verified as it was. */
  | "intact"
  /** Killed mid-write; the torn tail was repaired/recovered and the chain resumed. */
  | "torn-tail-repaired"
  /** An invariant broke. */
  | "FAILED";

export interface TrialResult {
  kind: TrialKind;
  trial: number;
  delayMs: number;
  outcome: TrialOutcome;
  detail: string;
  /** Leftover `*.tmp.*` files of atomic writes (harmless; counted). */
  leftoverTemps: number;
  /** concurrent-writers: processes started, how many recorded, how many were refused. */
  concurrency?: ConcurrencyStats;
  /** hostile-tails / forbidden-exports: cases checked. */
  cases?: number;
}

export interface CrashOptions {
  bin: string;
  seed: number;
  /** Workspace template for orchestrator trials (plan + config + agent). */
  workDir?: string;
  /** Steps in the export trials' source journal (default 40,000; kill delays scale with it). */
  exportSteps?: number;
}

class TrialFailure extends Error {}
function fail(msg: string): never {
  throw new TrialFailure(msg);
}

async function spawnAndKill(cmd: string[], opts: { cwd?: string; stdin?: Uint8Array; delayMs: number; env?: Record<string, string> }): Promise<{ finished: boolean; code: number | null; stderr: string }> {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    stdin: opts.stdin ? new Blob([opts.stdin]) : "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
  });
  const stderr = new Response(proc.stderr).text();
  const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(opts.delayMs).then(() => false)]);
  if (!done) proc.kill("SIGKILL");
  const code = await proc.exited;
  return { finished: done, code: done ? code : null, stderr: await stderr };
}

/**
 * Simulated power loss: appends that were never fsynced may be lost from
 * any byte on. Cut the file at a random offset in its last `window` bytes
 * (never at a line boundary on purpose, so the last line is usually torn).
 */
function tear(path: string, rng: Rng, window = 64 * 1024): boolean {
  if (!existsSync(path)) return false;
  const size = statSync(path).size;
  if (size < 2) return false;
  const cut = size - 1 - rng.int(Math.min(window, size - 1));
  truncateSync(path, cut);
  return true;
}

function countTemps(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true } as never) as unknown as { name: string; isFile(): boolean }[]) {
    if (e.isFile() && /\.tmp\.\d+\.[0-9a-f]{8}$/.test(e.name)) n++;
  }
  return n;
}

async function run(bin: string, args: string[], cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([bin, ...args], { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (looksLikeStackTrace(stderr)) fail(`bernstein ${args.join(" ")} printed a stack trace: ${stderr.slice(0, 200)}`);
  return { code, stdout, stderr };
}

/**
 * The run-journal invariant: verifies, or torn tail -> `replay repair`
 * (binary) -> verifies -> `journal record` resumes from the same head.
 */
async function checkRunJournal(bin: string, sdd: string, runId: string): Promise<"intact" | "torn-tail-repaired"> {
  const path = join(sdd, "runs", runId, "journal.jsonl");
  const v = verifyJournalSync(path);
  let outcome: "intact" | "torn-tail-repaired" = "intact";
  if (!v.chain_consistent) fail(`run ${runId}: chain broken at step ${v.divergent_index}: ${v.errors.join("; ")}`);
  if (v.coverage !== "complete") {
    const scan = scanTail(path);
    if (!scan.tornTail) fail(`run ${runId}: discarded line(s) ${v.discarded_line_indices.join(", ")} are not a torn tail`);
    const r = await run(bin, ["replay", "repair", runId, "--sdd-dir", sdd, "--as-json"]);
    if (r.code !== 0) fail(`run ${runId}: replay repair exited ${r.code}: ${r.stdout.slice(0, 300)}`);
    const after = verifyJournalSync(path);
    if (!after.ok) fail(`run ${runId}: after repair: ${after.errors.join("; ")}`);
    if (after.count !== v.count || after.head !== v.head) fail(`run ${runId}: repair changed the chain (${v.count}/${v.head} -> ${after.count}/${after.head})`);
    outcome = "torn-tail-repaired";
  }
  const sealFile = join(sdd, "runs", runId, "seal.json");
  if (existsSync(sealFile)) {
    // A sealed run is finished: it must verify against its seal, and appending is refused by design.
    const sealed = verifyJournalSync(path, { seal: readSealFile(sealFile) });
    if (sealed.identity !== "verified") fail(`run ${runId}: sealed journal does not match its seal: ${sealed.errors.join("; ")}`);
    return outcome;
  }
  const before = verifyJournalSync(path);
  const r = await run(bin, ["journal", "record", runId, "crash_check", "--data", '{"after": "kill"}', "--sdd-dir", sdd, "--as-json"]);
  if (r.code !== 0) fail(`run ${runId}: resume (journal record) exited ${r.code}: ${(r.stdout + r.stderr).slice(0, 300)}`);
  const after = verifyJournalSync(path);
  if (!after.ok || after.count !== before.count + 1) fail(`run ${runId}: after resume: ok=${after.ok} count ${after.count} (expected ${before.count + 1})`);
  const last = readFileSync(path, "utf8").trimEnd().split("\n").pop()!;
  if (!last.includes(`"prev_hash": "${before.head}"`)) fail(`run ${runId}: the resumed row does not link to the surviving head ${before.head}`);
  return outcome;
}

/** The step-journal invariant: verifies or only its last line is bad; reopening recovers. */
async function checkStepJournal(sdd: string, agent: string): Promise<"intact" | "torn-tail-repaired"> {
  const bucket = join(sdd, "runtime", "journal", agent, "000000.jsonl");
  const v = await verifyStepJournal(bucket);
  let outcome: "intact" | "torn-tail-repaired" = "intact";
  if (!v.ok) {
    const lines = readFileSync(bucket, "utf8").split(/\r\n|\r|\n/);
    const total = lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
    const bad = v.errors.map((e) => Number(/^line (\d+):/.exec(e)?.[1] ?? -1));
    if (bad.some((n) => n !== total)) fail(`agent ${agent}: errors before the last line (${total}): ${v.errors.slice(0, 3).join("; ")}`);
    outcome = "torn-tail-repaired";
  }
  let j: StepJournal;
  try {
    j = StepJournal.open(sdd, agent);
  } catch (err) {
    if (err instanceof InputError || err instanceof RefusalError) fail(`agent ${agent}: recovery refused: ${err.message}`);
    throw err;
  }
  const steps = j.nextSeq();
  if (steps !== v.steps - (v.ok ? 0 : v.errors.length ? 1 : 0) && steps !== v.steps) fail(`agent ${agent}: recovered ${steps} steps, verify walked ${v.steps}`);
  j.append({ input_hash: "after-kill", model: "m", prompt: "resume" });
  j.close();
  const after = await verifyStepJournal(bucket);
  if (!after.ok || after.steps !== steps + 1) fail(`agent ${agent}: after recovery: ok=${after.ok} steps ${after.steps} (expected ${steps + 1}): ${after.errors[0] ?? ""}`);
  return outcome;
}

function checkSession(sdd: string): void {
  const p = sessionPath(sdd);
  if (!existsSync(p)) return;
  const s = loadSession(sdd, { staleAfterMinutes: 1e9 });
  if (s.status === "corrupt") fail(`session.json does not parse: ${JSON.stringify(s).slice(0, 200)}`);
  const mode = statSync(p).mode & 0o777;
  if (mode !== 0o600) fail(`session.json mode ${mode.toString(8)}, expected 600`);
}

const EVENT_LINE = (i: number, rng: Rng) => JSON.stringify({ event: rng.pick(["tick", "task_claimed", "agent_spawned"]), i, note: "x".repeat(rng.int(300)), u: "é🚀" }) + "\n";

/** Agent journal fixture for the export trials: many steps, so an export takes a while. */
function prepareExportSource(root: string, steps: number): string {
  const sdd = join(root, "export-src");
  if (existsSync(join(sdd, "runtime", "journal", "big-agent", "000000.jsonl"))) return sdd;
  const j = StepJournal.open(sdd, "big-agent");
  const rng = new Rng(7);
  for (let i = 0; i < steps; i++) j.append({ input_hash: `h${i}`, model: "m1", prompt: "p".repeat(rng.int(300)), tool_result: { out: "SECRET_TOKEN_DO_NOT_LEAK", i } });
  j.close();
  return sdd;
}

const ORCH_AGENT = `#!/bin/sh
cat > /dev/null
sleep 0.05
echo "{\\"result_summary\\": \\"did $BERNSTEIN_TASK_ID\\", \\"cost_usd\\": 0.01}"
`;

function orchestratorProject(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "agent.sh"), ORCH_AGENT, { mode: 0o755 });
  writeFileSync(join(dir, "bernstein.yaml"), ["agent:", "  adapter: script", "  script: agent.sh", "  timeout_s: 30", "max_agents: 3", "session:", "  resume: true", ""].join("\n"));
  const tasks: string[] = [];
  for (let i = 1; i <= 10; i++) tasks.push(`- id: T${i}\n  title: "task ${i}"${i > 3 ? `\n  depends_on: ["T${i - 3}"]` : ""}`);
  writeFileSync(join(dir, "plan.yaml"), tasks.join("\n") + "\n");
}

export async function runTrial(kind: TrialKind, trial: number, opts: CrashOptions, root: string): Promise<TrialResult> {
  const rng = new Rng((opts.seed * 7919 + trial * 104729 + TRIAL_KINDS.indexOf(kind)) >>> 0);
  const work = mkdtempSync(join(root, `${kind}-`));
  let delayMs = 0;
  let leftoverTemps = 0;
  const result = (outcome: TrialOutcome, detail: string, extra: Partial<TrialResult> = {}): TrialResult => ({ kind, trial, delayMs, outcome, detail, leftoverTemps, ...extra });
  try {
    switch (kind) {
      case "concurrent-writers": {
        // Run journals two trials in three, step journals the third.
        const step = trial % 3 === 2;
        const n = rng.range(4, 8);
        const c = step ? await concurrentStepWriters(work, rng, n) : await concurrentRunWriters(opts.bin, work, rng, n);
        return result("intact", `${step ? "step" : "run"} journal: ${c.winners} of ${c.writers} writers recorded, ${c.refused} refused`, { concurrency: c });
      }
      case "power-loss": {
        const r = await powerLossTrial(opts.bin, work, rng, (sdd, runId) => checkRunJournal(opts.bin, sdd, runId));
        if (r === null) return result("finished", "skipped: strace cannot trace here");
        delayMs = r.delayMs;
        return result(r.finished ? "finished" : r.lost > 0 ? "torn-tail-repaired" : "intact", `${r.acknowledged} acknowledged events kept; power loss dropped ${r.lost} unsynced bytes`);
      }
      case "hostile-tails":
        return result("intact", "", { cases: await hostileTailChecks(opts.bin, work, rng) });
      case "forbidden-exports":
        return result("intact", "", { cases: await forbiddenExportChecks(opts.bin, work) });
      case "journal-record": {
        const sdd = join(work, "sdd");
        // Sometimes start from an existing journal, so kills also land on resumed chains.
        if (rng.chance(0.5)) {
          const pre = Array.from({ length: rng.range(1, 500) }, (_, i) => EVENT_LINE(i, rng)).join("");
          const p = Bun.spawn([opts.bin, "journal", "record", "crash-run", "--sdd-dir", sdd], { stdin: new Blob([pre]), stdout: "ignore", stderr: "ignore" });
          await p.exited;
        }
        const n = rng.range(2000, 20000);
        const input = new TextEncoder().encode(Array.from({ length: n }, (_, i) => EVENT_LINE(i, rng)).join(""));
        delayMs = rng.range(5, 450);
        const k = await spawnAndKill([opts.bin, "journal", "record", "crash-run", "--sdd-dir", sdd], { stdin: input, delayMs });
        if (k.finished && k.code !== 0) return result("FAILED", `journal record exited ${k.code}: ${k.stderr.slice(0, 200)}`);
        const jpath = join(sdd, "runs", "crash-run", "journal.jsonl");
        if (!existsSync(jpath)) return result(k.finished ? "FAILED" : "intact", "killed before the journal existed");
        if (!k.finished && rng.chance(0.4)) tear(jpath, rng);
        const o = await checkRunJournal(opts.bin, sdd, "crash-run");
        leftoverTemps = countTemps(sdd);
        return result(k.finished ? "finished" : o, "");
      }
      case "step-writer": {
        const sdd = join(work, "sdd");
        if (rng.chance(0.3)) {
          const j = StepJournal.open(sdd, "crash-agent");
          for (let i = 0; i < rng.range(1, 50); i++) j.append({ input_hash: `pre${i}`, prompt: "pre" });
          j.close();
        }
        delayMs = rng.range(30, 400);
        const k = await spawnAndKill([process.execPath, join(import.meta.dir, "drivers", "step-writer.ts"), sdd, "crash-agent", String(rng.u32())], { delayMs });
        if (k.finished) return result("FAILED", `the step writer stopped by itself (exit ${k.code}): ${k.stderr.slice(0, 200)}`);
        const bucket = join(sdd, "runtime", "journal", "crash-agent", "000000.jsonl");
        if (!existsSync(bucket)) return result("intact", "killed before the first append");
        if (rng.chance(0.4)) tear(bucket, rng);
        const o = await checkStepJournal(sdd, "crash-agent");
        return result(o, "");
      }
      case "receipt-export": {
        const steps = opts.exportSteps ?? 40_000;
        const src = prepareExportSource(root, steps);
        const outDir = join(work, "out");
        const publish = rng.chance(0.4);
        const out = join(outDir, publish ? "agent.published.tar" : "agent.tar");
        // An export of 40,000 steps takes ~1.5 s: kill anywhere in it, or after.
        delayMs = rng.range(5, Math.round(50 + (2200 * steps) / 40_000));
        const args = publish ? ["replay", "publish", "big-agent", out, "--yes-i-want-to-publish", "--sdd-dir", src] : ["replay", "export", "big-agent", out, "--sdd-dir", src];
        const k = await spawnAndKill([opts.bin, ...args], { delayMs });
        if (k.finished && k.code !== 0) return result("FAILED", `${args[1]} exited ${k.code}: ${k.stderr.slice(0, 200)}`);
        leftoverTemps = countTemps(outDir);
        if (!existsSync(out)) return result(k.finished ? "FAILED" : "intact", "no receipt under the final name");
        const v = await verifyReceipt(out);
        if (!v.ok || v.steps !== steps) return result("FAILED", `receipt under its final name does not verify whole: ok=${v.ok} steps=${v.steps} ${v.errors[0] ?? ""}`);
        if (publish && readFileSync(out).includes("SECRET_TOKEN_DO_NOT_LEAK")) return result("FAILED", "published receipt contains the canary");
        return result(k.finished ? "finished" : "intact", "");
      }
      case "orchestrator": {
        const proj = join(work, "proj");
        if (opts.workDir) cpSync(opts.workDir, proj, { recursive: true });
        else orchestratorProject(proj);
        const sdd = join(proj, ".sdd");
        delayMs = rng.range(30, 900);
        const k = await spawnAndKill([opts.bin, "run", "plan.yaml", "--port", "0"], { cwd: proj, delayMs });
        if (k.finished && k.code !== 0) return result("FAILED", `bernstein run exited ${k.code}: ${k.stderr.slice(0, 300)}`);
        if (looksLikeStackTrace(k.stderr)) return result("FAILED", `bernstein run printed a stack trace: ${k.stderr.slice(0, 200)}`);
        checkSession(sdd);
        // Power loss on top of the kill: tear one run journal's tail.
        if (!k.finished && rng.chance(0.3) && existsSync(join(sdd, "runs"))) {
          const rs = readdirSync(join(sdd, "runs"));
          const r = rs.length ? rng.pick(rs) : null;
          // A sealed journal was fsynced before its seal was written: nothing of it can be lost.
          if (r && !existsSync(join(sdd, "runs", r, "seal.json"))) tear(join(sdd, "runs", r, "journal.jsonl"), rng, 2048);
        }
        let repaired = false;
        const runs = existsSync(join(sdd, "runs")) ? readdirSync(join(sdd, "runs")).filter((r) => existsSync(join(sdd, "runs", r, "journal.jsonl"))) : [];
        for (const r of runs) if ((await checkRunJournal(opts.bin, sdd, r)) === "torn-tail-repaired") repaired = true;
        const agents = existsSync(join(sdd, "runtime", "journal")) ? readdirSync(join(sdd, "runtime", "journal")) : [];
        for (const a of agents) if ((await checkStepJournal(sdd, a)) === "torn-tail-repaired") repaired = true;
        leftoverTemps = countTemps(sdd);
        // The run can be started again on the same state (resume or fresh) and finishes.
        const again = await run(opts.bin, ["run", "plan.yaml", "--port", "0"], proj);
        if (again.code !== 0 && again.code !== 1) return result("FAILED", `re-run after the kill exited ${again.code}: ${(again.stderr || again.stdout).slice(0, 300)}`);
        checkSession(sdd);
        return result(k.finished ? "finished" : repaired ? "torn-tail-repaired" : "intact", `${runs.length} run journal(s), ${agents.length} step journal(s)`);
      }
    }
  } catch (err) {
    if (err instanceof TrialFailure || err instanceof WriterFailure) return result("FAILED", err.message);
    return result("FAILED", `harness error: ${(err as Error).stack ?? err}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface CrashReport {
  seed: number;
  trials: number;
  by_kind: Record<string, Record<TrialOutcome, number>>;
  outcomes: Record<TrialOutcome, number>;
  leftover_temp_files: number;
  failures: TrialResult[];
  elapsed_s: number;
  /** concurrent-writers totals: trials, forks (always counted as failures), writers, winners, refused. */
  concurrency: { trials: number; forks: number; writers: number; winners: number; refused: number };
  /** Cases checked by the deterministic batteries (hostile tails, forbidden exports). */
  battery_cases: number;
}

/** Run `trials` trials, round-robin over `kinds`. */
export async function runCrashTrials(opts: CrashOptions & { trials: number; kinds?: readonly TrialKind[]; onTrial?: (r: TrialResult) => void }): Promise<CrashReport> {
  const kinds = opts.kinds ?? TRIAL_KINDS;
  const root = mkdtempSync(join(tmpdir(), "bernstein-crash-"));
  const started = performance.now();
  const empty = (): Record<TrialOutcome, number> => ({ finished: 0, intact: 0, "torn-tail-repaired": 0, FAILED: 0 });
  const byKind: Record<string, Record<TrialOutcome, number>> = {};
  const outcomes = empty();
  const failures: TrialResult[] = [];
  let temps = 0;
  const concurrency = { trials: 0, forks: 0, writers: 0, winners: 0, refused: 0 };
  let batteryCases = 0;
  try {
    for (let t = 0; t < opts.trials; t++) {
      const kind = kinds[t % kinds.length]!;
      const r = await runTrial(kind, t, opts, root);
      (byKind[kind] ??= empty())[r.outcome]++;
      outcomes[r.outcome]++;
      temps += r.leftoverTemps;
      batteryCases += r.cases ?? 0;
      if (kind === "concurrent-writers") {
        concurrency.trials++;
        if (r.outcome === "FAILED") concurrency.forks++;
        concurrency.writers += r.concurrency?.writers ?? 0;
        concurrency.winners += r.concurrency?.winners ?? 0;
        concurrency.refused += r.concurrency?.refused ?? 0;
      }
      if (r.outcome === "FAILED") failures.push(r);
      opts.onTrial?.(r);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return { seed: opts.seed, trials: opts.trials, by_kind: byKind, outcomes, leftover_temp_files: temps, failures, elapsed_s: Math.round((performance.now() - started) / 100) / 10, concurrency, battery_cases: batteryCases };
}
