/**
 * Crash-consistency harness: SIGKILL writers at random instants and check
 * what they leave behind (see tools/fuzz/crash.ts for the invariants).
 *
 *   bun scripts/crash.ts --trials N --seed S [--kind KIND]... [--bin PATH] [--json] [--out FILE]
 *
 * KIND: journal-record, step-writer, receipt-export, orchestrator,
 * concurrent-writers, power-loss, hostile-tails, forbidden-exports
 * (e.g. `--kind concurrent-writers --trials 500` for the fork figure).
 *
 * Trials rotate over the writer kinds. Exit 0 when no trial failed, 1
 * otherwise, 2 on bad flags.
 */
import { resolve } from "node:path";
import { harnessBinary } from "../tools/fuzz/build.ts";
import { runCrashTrials, TRIAL_KINDS, type TrialKind } from "../tools/fuzz/crash.ts";

function usage(msg: string): never {
  process.stderr.write(`crash: ${msg}\nusage: bun scripts/crash.ts --trials N --seed S [--kind ${TRIAL_KINDS.join("|")}] [--bin PATH] [--json] [--out FILE]\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let trials = 40;
let seed = 1;
let bin: string | null = null;
let json = false;
let out: string | null = null;
const kinds: TrialKind[] = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  const num = () => {
    const n = Number(argv[++i]);
    if (!Number.isInteger(n) || n < 0) usage(`${a} needs a non-negative integer`);
    return n;
  };
  if (a === "--trials") trials = num();
  else if (a === "--seed") seed = num();
  else if (a === "--kind") {
    const k = argv[++i] as TrialKind;
    if (!TRIAL_KINDS.includes(k)) usage(`unknown kind ${k}`);
    kinds.push(k);
  } else if (a === "--bin") bin = argv[++i] ?? usage("--bin needs a path");
  else if (a === "--json") json = true;
  else if (a === "--out") out = resolve(argv[++i] ?? usage("--out needs a path"));
  else usage(`unknown flag ${a}`);
}

const report = await runCrashTrials({
  bin: harnessBinary(bin),
  seed,
  trials,
  kinds: kinds.length ? kinds : undefined,
  onTrial: json ? undefined : (r) => process.stderr.write(`\rtrial ${r.trial + 1}/${trials} ${r.kind}: ${r.outcome}${r.outcome === "FAILED" ? ` — ${r.detail}\n` : "        "}`),
});
if (json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
else {
  process.stderr.write("\r\x1b[K");
  const o = report.outcomes;
  process.stdout.write(`crash: ${report.trials} trials (seed ${seed}) in ${report.elapsed_s} s: finished ${o.finished}, intact ${o.intact}, torn tail repaired ${o["torn-tail-repaired"]}, FAILED ${o.FAILED}; leftover temp files ${report.leftover_temp_files}\n`);
  const c = report.concurrency;
  if (c.trials > 0) process.stdout.write(`  concurrent writers: ${c.trials} trials, ${c.writers} writers started, ${c.winners} recorded, ${c.refused} refused (journal_locked), forks ${c.forks}\n`);
  if (report.battery_cases > 0) process.stdout.write(`  hostile-tail / forbidden-export cases checked: ${report.battery_cases}\n`);
  for (const [k, v] of Object.entries(report.by_kind)) process.stdout.write(`  ${k}: finished ${v.finished}, intact ${v.intact}, torn tail repaired ${v["torn-tail-repaired"]}, FAILED ${v.FAILED}\n`);
  for (const f of report.failures) process.stdout.write(`  FAILED trial ${f.trial} ${f.kind} (kill after ${f.delayMs} ms): ${f.detail}\n`);
}
if (out) await Bun.write(out, JSON.stringify(report, null, 2) + "\n");
process.exitCode = report.outcomes.FAILED === 0 ? 0 : 1;
