/**
 * `npm run fuzz` — mutation fuzzers seeded from the shared vectors.
 *
 *   bun scripts/fuzz.ts --target parser|journal|receipt|server|replay-diff|display|tar|row-index|all --seed N --seconds S [--cases N]
 *                       [--bin PATH | --no-binary] [--binary-sample F] [--no-python] [--no-extremes] [--json] [--out FILE] [--no-save]
 *
 * The binary defaults to BERNSTEIN_BIN, else a fresh build of the tree into
 * bench/out/harness-bin/.
 *
 * Prints cases run and distinct crashes (deduplicated by error signature)
 * per target; the first input of each crash is saved under
 * bench/out/fuzz-crashes/ (git-ignored; --no-save: nowhere, as the test suite runs it). Exit 0 when no target crashed,
 * 1 otherwise, 2 on bad flags. With --seconds and target "all" the budget
 * is split evenly across the targets.
 */
import { join, resolve } from "node:path";
import { makeTarget, runFuzz, TARGET_NAMES, type FuzzReport, type TargetName } from "../tools/fuzz/index.ts";
import { harnessBinary } from "../tools/fuzz/build.ts";
import { pythonAvailable } from "../tools/fuzz/python.ts";

const root = resolve(import.meta.dir, "..");

interface Flags {
  target: string;
  seed: number;
  seconds?: number;
  cases?: number;
  bin: string | null;
  binarySample: number;
  python: boolean;
  json: boolean;
  out: string | null;
  skipExtremes: boolean;
  noBinary: boolean;
  noSave: boolean;
}

function usage(msg: string): never {
  process.stderr.write(`fuzz: ${msg}\nusage: bun scripts/fuzz.ts --target parser|journal|receipt|server|replay-diff|display|tar|row-index|all --seed N --seconds S [--cases N] [--bin PATH | --no-binary] [--binary-sample F] [--no-python] [--no-extremes] [--json] [--out FILE] [--no-save]\n`);
  process.exit(2);
}

function parseFlags(argv: string[]): Flags {
  const f: Flags = { target: "all", seed: 1, bin: null, binarySample: 0.01, python: true, json: false, out: null, skipExtremes: false, noBinary: false, noSave: false };
  const num = (name: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < 0) usage(`--${name} needs a non-negative number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case "--target": f.target = argv[++i] ?? usage("--target needs a value"); break;
      case "--seed": f.seed = Math.floor(num("seed", argv[++i])); break;
      case "--seconds": f.seconds = num("seconds", argv[++i]); break;
      case "--cases": f.cases = Math.floor(num("cases", argv[++i])); break;
      case "--bin": f.bin = resolve(argv[++i] ?? usage("--bin needs a path")); break;
      case "--binary-sample": f.binarySample = num("binary-sample", argv[++i]); break;
      case "--no-python": f.python = false; break;
      case "--no-binary": f.noBinary = true; break;
      case "--no-extremes": f.skipExtremes = true; break;
      case "--json": f.json = true; break;
      case "--no-save": f.noSave = true; break;
      case "--out": f.out = resolve(argv[++i] ?? usage("--out needs a path")); break;
      case "-h": case "--help": usage("help");
      default: usage(`unknown flag ${a}`);
    }
  }
  if (f.target !== "all" && !(TARGET_NAMES as readonly string[]).includes(f.target)) usage(`unknown target ${f.target}`);
  if (f.seconds === undefined && f.cases === undefined) f.seconds = 60;
  if (!f.noBinary) {
    try {
      f.bin = harnessBinary(f.bin);
    } catch (err) {
      usage((err as Error).message);
    }
  }
  return f;
}

const flags = parseFlags(process.argv.slice(2));
const names: TargetName[] = flags.target === "all" ? [...TARGET_NAMES] : [flags.target as TargetName];
const python = flags.python && pythonAvailable();
if (flags.python && !python) process.stderr.write("fuzz: python3 not found: the Python cross-checks are skipped\n");
const perTargetSeconds = flags.seconds !== undefined ? flags.seconds / names.length : undefined;

const reports: FuzzReport[] = [];
for (const name of names) {
  const target = makeTarget(name, { bin: flags.bin, python });
  const report = await runFuzz(target, {
    seed: flags.seed,
    seconds: perTargetSeconds,
    cases: flags.cases,
    binarySample: flags.bin ? flags.binarySample : 0,
    crashDir: flags.noSave ? null : join(root, "bench", "out", "fuzz-crashes"),
    skipExtremes: flags.skipExtremes,
    onProgress: flags.json ? undefined : (p) => process.stderr.write(`\r${p.target}: ${p.cases} cases, ${p.crashes} distinct crash(es), ${(p.elapsedMs / 1000).toFixed(0)} s   `),
  });
  reports.push(report);
  if (!flags.json) {
    process.stderr.write("\r\x1b[K");
    process.stdout.write(
      `${report.target}: ${report.cases} cases (${report.binaryCases} through the binary) in ${(report.elapsedMs / 1000).toFixed(1)} s, ${report.casesPerSecond}/s; distinct crashes: ${report.distinctCrashes}\n`,
    );
    if (Object.keys(report.stats).length) process.stdout.write(`  ${Object.entries(report.stats).map(([k, v]) => `${k}=${v}`).join(" ")}\n`);
    for (const x of report.extremes) process.stdout.write(`  extreme ${x.ok ? "ok  " : "FAIL"} ${x.name} (${x.ms} ms)${x.ok ? "" : `: ${x.detail}`}\n`);
    for (const c of report.crashes) process.stdout.write(`  CRASH x${c.count} ${c.signature}\n    ${c.message}\n    ${c.savedAs ? `input: ${c.savedAs}` : "(no single input)"}\n`);
  }
}
const summary = {
  seed: flags.seed,
  seconds: flags.seconds ?? null,
  python,
  binary: flags.bin !== null,
  total_cases: reports.reduce((a, r) => a + r.cases, 0),
  distinct_crashes: reports.reduce((a, r) => a + r.distinctCrashes, 0),
  targets: reports,
};
if (flags.json) process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
else process.stdout.write(`total: ${summary.total_cases} cases, ${summary.distinct_crashes} distinct crash(es)\n`);
if (flags.out) await Bun.write(flags.out, JSON.stringify(summary, null, 2) + "\n");
process.exitCode = summary.distinct_crashes === 0 ? 0 : 1;
