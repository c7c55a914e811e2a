/**
 * `npm run bench` — the figures issue 8 asks for, measured in ONE run with
 * the contenders interleaved (so machine load affects them alike):
 *
 *   - `journal verify` of a realistic journal (≥ 200 MB by default) with
 *     --threads 1 and --threads N, plus --links-only, against `sha256sum`
 *     of the same file and the Python reference verifier
 *     (test/reference/verify_journal.py): MB/s, rows/s, peak RSS, ratios;
 *   - `journal record` from stdin: events/s and peak RSS;
 *   - receipt verify of a 100,000-step agent journal against the Python
 *     tarfile reference (test/reference/verify_receipt.py);
 *   - `bernstein --version` start-up.
 *
 * Journals are generated deterministically with the project's own writer
 * (bench/journal-gen.ts) under bench/out/ (git-ignored) and reused while
 * their parameters match. The binary is built to bench/out/bernstein (never
 * dist/) unless --bin is given. Results: a table on stdout and
 * bench/results.json.
 *
 *   - thread scaling on a larger journal (--scale-mb, default 1000; 0 skips):
 *     the process's start-up and each extra thread's start (spawning a
 *     worker, its first range in slower tiers) are fixed costs, so the
 *     speed-up grows with the journal; this shows by how much. Beside
 *     them, `openssl dgst -sha256` of the same file (where there is an
 *     openssl): verify's CPU time against hashing the file once.
 *
 *   - the verb table of issue 19 (bench/verbs.ts): every journal verb as a
 *     ratio to `journal verify --threads 1` (receipt verbs: to `replay
 *     verify`), interleaved, with peak RSS and the targets.
 *     `--verbs` measures only that table (`--pick list,diff,...` a subset).
 *     The run-journal verbs run on every journal shape (issue 28: bench,
 *     mixed, large-rows, python, windows, compact; `--shapes a,b` a subset, the first one's
 *     table printed as before), then one verb × shape table.
 *
 *   bun scripts/bench.ts [--mb 220] [--quick] [--reps 3] [--threads N] [--bin PATH] [--skip-python]
 *                        [--record-events 1000000] [--receipt-steps 100000] [--scale-mb 1000]
 *                        [--verbs] [--pick KEY,...] [--shapes S,...] [--size MB] [--work-dir DIR] [--results FILE]
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { ensureJournal as ensureJournalIn, ensureReceipt } from "../bench/inputs.ts";
import { isShape, type JournalShape, prng, SHAPES } from "../bench/journal-gen.ts";
import { type Contender, interleaved, median, run, type Sample, table, useScratchDir } from "../bench/measure.ts";
import { type Figure, OPENSSL, RECORD_EVENTS_PER_S, suiteTables, type SuiteResults, verbTables, VERIFY_CPU_VS_HASH } from "../bench/report.ts";
import { benchVerbs, VerbFailed, VERB_KEYS, type VerbResults } from "../bench/verbs.ts";
import { RESULTS, writePerformanceDocs } from "./gen-performance.ts";
import { dumps } from "../src/pyjson/encode.ts";

const ROOT = join(import.meta.dir, "..");
/** Scratch: inputs, outputs, the built binary (bench/out/, or --work-dir). */
let OUT = join(ROOT, "bench", "out");

interface Args {
  mb: number;
  quick: boolean;
  reps: number;
  threads: number;
  bin: string | null;
  skipPython: boolean;
  recordEvents: number;
  receiptSteps: number;
  scaleMb: number;
  /** Only the verb table. */
  verbsOnly: boolean;
  pick: Set<string> | null;
  /** The run-journal shapes the verb table measures, in order. */
  shapes: JournalShape[];
  workDir: string | null;
  results: string | null;
}

/** A bad command line: one line on stderr and exit 2, no stack trace. */
class BenchUsageError extends Error {}

const VALUE_FLAGS = new Set(["--mb", "--size", "--shapes", "--reps", "--threads", "--bin", "--record-events", "--receipt-steps", "--scale-mb", "--pick", "--work-dir", "--results"]);
const BOOLEAN_FLAGS = new Set(["--quick", "--skip-python", "--verbs"]);

const USAGE = `usage: bun scripts/bench.ts [--mb 220] [--quick] [--reps 3] [--threads N] [--bin PATH] [--skip-python]
                            [--record-events 1000000] [--receipt-steps 100000] [--scale-mb 1000]
                            [--verbs] [--pick ${VERB_KEYS.join(",")}] [--shapes ${SHAPES.join(",")}] [--size MB (= --mb)]
                            [--work-dir DIR] [--results FILE]
(see bench/README.md)`;

/** Refuse what the bench would otherwise ignore: a misspelt flag must not measure something else. */
function checkFlags(argv: string[]): void {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (VALUE_FLAGS.has(a)) {
      if (argv[i + 1] === undefined || argv[i + 1]!.startsWith("--")) throw new BenchUsageError(`${a} needs a value`);
      i++;
    } else if (!BOOLEAN_FLAGS.has(a)) throw new BenchUsageError(`unknown argument ${JSON.stringify(a)}\n${USAGE}`);
  }
}

function parseArgs(argv: string[]): Args {
  checkFlags(argv);
  const get = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes("--quick");
  const num = (flag: string, dflt: number): number => {
    const raw = get(flag);
    if (raw === undefined) return dflt;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new BenchUsageError(`${flag} needs a positive number, got ${raw}`);
    return n;
  };
  if (get("--mb") !== undefined && get("--size") !== undefined) throw new BenchUsageError("give --mb or --size (the same journal size), not both");
  return {
    mb: get("--size") !== undefined ? num("--size", 0) : num("--mb", quick ? 20 : 220),
    quick,
    reps: Math.floor(num("--reps", quick ? 1 : 3)),
    threads: Math.floor(num("--threads", availableParallelism())),
    bin: get("--bin") ?? null,
    skipPython: argv.includes("--skip-python"),
    recordEvents: Math.floor(num("--record-events", quick ? 50_000 : 1_000_000)),
    receiptSteps: Math.floor(num("--receipt-steps", quick ? 10_000 : 100_000)),
    scaleMb: get("--scale-mb") === "0" ? 0 : Math.floor(num("--scale-mb", quick ? 0 : 1000)),
    verbsOnly: argv.includes("--verbs"),
    pick: pickOf(get("--pick")),
    shapes: shapesOf(get("--shapes")),
    workDir: get("--work-dir") ?? null,
    results: get("--results") ?? null,
  };
}

function pickOf(raw: string | undefined): Set<string> | null {
  if (raw === undefined) return null;
  const keys = raw.split(",").map((k) => k.trim()).filter((k) => k !== "");
  const bad = keys.filter((k) => !VERB_KEYS.includes(k));
  if (keys.length === 0 || bad.length > 0) throw new BenchUsageError(`--pick takes verbs from ${VERB_KEYS.join(",")}; got ${JSON.stringify(raw)}`);
  return new Set(keys);
}

function shapesOf(raw: string | undefined): JournalShape[] {
  if (raw === undefined) return [...SHAPES];
  const names = raw.split(",").map((k) => k.trim()).filter((k) => k !== "");
  const shapes = names.filter(isShape);
  if (names.length === 0 || shapes.length !== names.length || new Set(shapes).size !== shapes.length) {
    throw new BenchUsageError(`--shapes takes distinct shapes from ${SHAPES.join(",")}; got ${JSON.stringify(raw)}`);
  }
  return shapes;
}

async function ensureBinary(args: Args): Promise<string> {
  if (args.bin) return args.bin;
  const out = join(OUT, "bernstein");
  console.error("building bench/out/bernstein ...");
  const r = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "build.ts"), "--out", out], { cwd: ROOT, stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`build failed: ${r.stderr.toString()}`);
  return out;
}

/** The benchmark journal under the scratch directory. */
function ensureJournal(mb: number): { path: string; bytes: number; rows: number } {
  return ensureJournalIn(OUT, mb);
}

/** JSON Lines for `journal record`, spelled as a Python producer's json.dumps writes them. */
function ensureRecordInput(events: number): string {
  const path = join(OUT, `record-input-py-${events}.jsonl`);
  if (existsSync(path)) return path;
  const rand = prng(99);
  const lines: string[] = [];
  for (let i = 0; i < events; i++) {
    const kind = i % 4;
    if (kind === 0) lines.push(dumps({ event: "tick_start", tick: i }));
    else if (kind === 1) lines.push(dumps({ event: "task_claimed", task_id: `T-${i}`, agent_id: `agent-${i % 97}`, model: "claude-sonnet-4-5" }));
    else if (kind === 2) {
      lines.push(
        dumps({
          event: "tool_call",
          agent_id: `agent-${i % 97}`,
          task_id: `T-${i - 1}`,
          tool: "edit_file",
          args: { path: "src/core/replay/journal.py", line: Math.floor(rand() * 900) },
          tokens: { input: 1200 + i, output: 300, cache: { read: 600, write: 0 } },
        }),
      );
    } else {
      lines.push(
        dumps({ event: "task_completed", task_id: `T-${i - 2}`, agent_id: `agent-${i % 97}`, cost_usd: Math.round(rand() * 1e4) / 1e4 + 0.5, summary: "Résumé: fixed ✓" }),
      );
    }
  }
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

function figure(name: string, ss: Sample[], bytes: number, rows: number): Figure {
  const wallS = median(ss.map((s) => s.wallS));
  return {
    name,
    wallS,
    mbPerS: bytes / 1e6 / wallS,
    rowsPerS: rows / wallS,
    rssMB: Math.max(...ss.map((s) => s.rssMB)),
    cpuS: median(ss.map((s) => s.cpuS)),
  };
}

/**
 * Checkpoints and proofs on the bench journal: `journal checkpoint` against
 * the verify it is built on (interleaved), and a consistency proof from a
 * checkpoint of the journal's first half.
 */
async function benchSeals(
  bin: string,
  journal: { path: string; rows: number },
  threads: number,
  reps: number,
  check: (s: Sample) => void,
): Promise<{ ratio: number; checkpointS: number; verifyS: number; proveS: number; rssMB: number }> {
  const runsDir = dirname(dirname(journal.path));
  const sdd = dirname(runsDir);
  const runId = basename(dirname(journal.path));
  const key = join(OUT, "bench-log.key");
  if (!existsSync(key)) check(await run([bin, "keys", "generate", "--out-dir", OUT, "--name", "bench-log"]));
  const half = `${runId}-half`;
  const halfJournal = join(runsDir, half, "journal.jsonl");
  if (!existsSync(halfJournal)) {
    const lines = readFileSync(journal.path, "utf8").split("\n");
    mkdirSync(dirname(halfJournal), { recursive: true });
    writeFileSync(halfJournal, lines.slice(0, Math.floor(journal.rows / 2)).join("\n") + "\n");
  }
  const halfCp = join(OUT, "half.checkpoint");
  rmSync(halfCp, { force: true });
  check(await run([bin, "journal", "checkpoint", half, "--sdd-dir", sdd, "--sign", key, "--origin", `bernstein/${runId}`, "--out", halfCp]));
  const cpOut = join(OUT, "bench.checkpoint");
  console.error(`journal checkpoint vs verify: ${reps} interleaved repetitions`);
  const contenders: Contender[] = [
    { name: "verify", cmd: [bin, "journal", "verify", journal.path, "--threads", String(threads)], check },
    { name: "checkpoint", cmd: [bin, "journal", "checkpoint", runId, "--sdd-dir", sdd, "--sign", key, "--out", cpOut], check },
    { name: "prove", cmd: [bin, "journal", "prove-consistency", runId, "--sdd-dir", sdd, "--from", halfCp], check },
  ];
  rmSync(cpOut, { force: true });
  const samples = await interleaved(contenders, reps);
  const wall = (n: string) => median(samples.get(n)!.map((s) => s.wallS));
  const rssMB = Math.max(...samples.get("checkpoint")!.map((s) => s.rssMB));
  return { ratio: wall("checkpoint") / wall("verify"), checkpointS: wall("checkpoint"), verifyS: wall("verify"), proveS: wall("prove"), rssMB };
}

/** The verify, record, receipt, start-up and scaling figures (issue 8); printed, and returned for results.json. */
async function benchSuite(args: Args, bin: string): Promise<SuiteResults> {
  const journal = ensureJournal(args.mb);
  const N = args.threads;
  const expectOk = (s: Sample): void => {
    if (s.code !== 0) throw new Error(`a contender failed (exit ${s.code}): ${s.stdout.slice(0, 500)}`);
  };
  const verifyContender = (path: string, threads: number): Contender => ({
    name: `bernstein verify --threads ${threads}`,
    cmd: [bin, "journal", "verify", path, "--threads", String(threads)],
    check: expectOk,
  });
  // warm the page cache once: every contender reads from memory
  await run(["cat", journal.path]);

  console.error(`journal verify: ${(journal.bytes / 1e6).toFixed(1)} MB, ${journal.rows} rows, ${args.reps} interleaved repetitions`);
  const contenders: Contender[] = [
    verifyContender(journal.path, 1),
    verifyContender(journal.path, N),
    { name: `bernstein verify --links-only`, cmd: [bin, "journal", "verify", journal.path, "--links-only", "--threads", String(N)], check: expectOk },
    { name: "sha256sum", cmd: ["sha256sum", journal.path], check: expectOk },
  ];
  if (!args.skipPython) {
    contenders.push({
      name: "python reference verifier",
      cmd: ["python3", join(ROOT, "test", "reference", "verify_journal.py"), journal.path],
      check: expectOk,
    });
  }
  const verifySamples = await interleaved(contenders, args.reps);
  const figs = contenders.map((c) => figure(c.name, verifySamples.get(c.name)!, journal.bytes, journal.rows));
  const byName = (n: string) => figs.find((f) => f.name === n)!;
  const one = byName("bernstein verify --threads 1");
  const many = byName(`bernstein verify --threads ${N}`);
  const sha = byName("sha256sum");
  const py = args.skipPython ? null : byName("python reference verifier");

  // A small journal: peak RSS must not depend on the journal's size.
  const small = ensureJournal(Math.min(20, args.mb));
  const smallRss = (await run([bin, "journal", "verify", small.path, "--threads", String(N)])).rssMB;

  const seals = await benchSeals(bin, journal, N, args.reps, expectOk);

  console.error(`journal record: ${args.recordEvents} events from stdin`);
  const recordInput = ensureRecordInput(args.recordEvents);
  const recordSamples: Sample[] = [];
  for (let rep = 0; rep < args.reps; rep++) {
    const sdd = join(OUT, "record-sdd");
    rmSync(sdd, { recursive: true, force: true });
    const s = await run([bin, "journal", "record", "bench-record", "--sdd-dir", sdd], { stdin: recordInput });
    expectOk(s);
    recordSamples.push(s);
    console.error(`  journal record               ${s.wallS.toFixed(3)} s  ${s.rssMB.toFixed(1)} MB`);
  }
  const recordWall = median(recordSamples.map((s) => s.wallS));
  const recordRss = median(recordSamples.map((s) => s.rssMB));

  console.error(`receipt verify: ${args.receiptSteps} steps`);
  const { tar } = await ensureReceipt(OUT, bin, args.receiptSteps);
  const receiptContenders: Contender[] = [
    { name: "bernstein replay verify", cmd: [bin, "replay", "verify", tar], check: expectOk },
    { name: "python tarfile reference", cmd: ["python3", join(ROOT, "test", "reference", "verify_receipt.py"), tar], check: expectOk },
  ];
  const receiptSamples = await interleaved(receiptContenders, args.reps);
  const tarBytes = statSync(tar).size;
  const rOurs = figure("bernstein replay verify", receiptSamples.get("bernstein replay verify")!, tarBytes, args.receiptSteps);
  const rPy = figure("python tarfile reference", receiptSamples.get("python tarfile reference")!, tarBytes, args.receiptSteps);

  console.error("start-up: bernstein --version");
  // Interleaved with /bin/true spawned the same way: what the harness's own
  // spawn and pipes cost, printed next to the figure (not subtracted).
  const versions: number[] = [];
  const floors: number[] = [];
  for (let i = 0; i < 31; i++) {
    versions.push((await run([bin, "--version"], { direct: true })).wallS * 1000);
    floors.push((await run(["true"], { direct: true })).wallS * 1000);
  }
  const versionMs = median(versions);
  const spawnFloorMs = median(floors);

  // Thread scaling on a larger journal: the fixed costs (start-up, spawning
  // a worker, each thread's first range in slower tiers) weigh less as the
  // journal grows.
  let scaling: SuiteResults["scaling"] = null;
  if (args.scaleMb > 0) {
    const big = ensureJournal(args.scaleMb);
    await run(["cat", big.path]);
    console.error(`thread scaling: ${(big.bytes / 1e6).toFixed(0)} MB`);
    const sc: Contender[] = [
      verifyContender(big.path, 1),
      verifyContender(big.path, N),
    ];
    // The hash alone of the same file on one core, where the machine has it: verify's CPU time against it
    // (on this larger file, where the kernel's 10 ms CPU-time unit weighs little).
    const openssl = Bun.which("openssl") === null ? null : { name: OPENSSL, cmd: ["openssl", "dgst", "-sha256", big.path], check: expectOk };
    if (openssl) sc.push(openssl);
    const ss = await interleaved(sc, args.reps);
    const one1 = figure(sc[0]!.name, ss.get(sc[0]!.name)!, big.bytes, big.rows);
    const manyN = figure(sc[1]!.name, ss.get(sc[1]!.name)!, big.bytes, big.rows);
    const hashOnly = openssl ? figure(OPENSSL, ss.get(OPENSSL)!, big.bytes, big.rows) : null;
    scaling = { bytes: big.bytes, rows: big.rows, one: one1, many: manyN, speedup: one1.wallS / manyN.wallS, openssl: hashOnly };
  }

  const ratios = {
    verify_vs_sha256sum: many.mbPerS / sha.mbPerS,
    verify_vs_python: py ? many.mbPerS / py.mbPerS : null,
    threads_speedup: one.wallS / many.wallS,
    receipt_vs_python: rPy.wallS / rOurs.wallS,
  };
  const targets = {
    "verify >= 1.5 x sha256sum": ratios.verify_vs_sha256sum >= 1.5,
    "verify >= 25 x python": ratios.verify_vs_python === null ? null : ratios.verify_vs_python >= 25,
    "peak RSS <= 64 MB": Math.max(one.rssMB, many.rssMB) <= 64,
    [`--threads ${N} >= 1.7 x --threads 1`]: ratios.threads_speedup >= 1.7,
    "record >= 300,000 events/s": args.recordEvents / recordWall >= RECORD_EVENTS_PER_S,
    "peak RSS of record <= 64 MB": recordRss <= 64,
    [`verify CPU <= ${VERIFY_CPU_VS_HASH} x openssl`]: scaling?.openssl ? scaling.one.cpuS / scaling.openssl.cpuS <= VERIFY_CPU_VS_HASH : null,
    "receipt verify >= 10 x python": ratios.receipt_vs_python >= 10,
    "--version <= 15 ms": versionMs <= 15,
  };

  const suite: SuiteResults & { targets: Record<string, boolean | null> } = {
    params: { mb: args.mb, reps: args.reps, threads: N, quick: args.quick },
    journal: { bytes: journal.bytes, rows: journal.rows },
    verify: figs,
    small_journal_rss_mb: smallRss,
    small_journal_bytes: small.bytes,
    record: { events: args.recordEvents, wall_s: recordWall, events_per_s: args.recordEvents / recordWall, rss_mb: recordRss },
    receipt: { steps: args.receiptSteps, tar_bytes: tarBytes, ours: rOurs, python: rPy },
    version_ms: versionMs,
    spawn_floor_ms: spawnFloorMs,
    scaling,
    seals,
    ratios,
    targets,
  };
  console.log(`\n${suiteTables(suite)}`);
  console.log(`\nload average during the run: ${loadavg().map((x) => x.toFixed(2)).join(", ")} (wall-clock ratios assume an otherwise idle machine)`);
  return suite;
}

function machine(): Record<string, unknown> {
  return {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? null,
    memory_gb: Math.round(totalmem() / 1e9),
    platform: process.platform,
    arch: process.arch,
    load_average_at_end: loadavg(),
  };
}

/** The verb table of issue 19, printed. */
async function benchVerbTable(args: Args, bin: string): Promise<VerbResults> {
  const r = await benchVerbs({ bin, out: OUT, mb: args.mb, shapes: args.shapes, receiptSteps: args.receiptSteps, reps: args.reps, pick: args.pick });
  console.log(`\n${verbTables(r)}`);
  console.log(`\n${cpus().length} CPUs; load average ${loadavg().map((x) => x.toFixed(2)).join(", ")}`);
  return r;
}

/** The previous results in `file`, kept when only the verb table is measured; nothing if absent or unreadable. */
function previousResults(file: string): Record<string, unknown> {
  try {
    const prev = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return prev !== null && typeof prev === "object" && !Array.isArray(prev) ? (prev as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function main(): Promise<void> {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log(USAGE);
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  if (args.workDir) OUT = resolve(args.workDir);
  mkdirSync(OUT, { recursive: true });
  useScratchDir(OUT);
  const file = args.results ? resolve(args.results) : args.quick ? join(OUT, "results.quick.json") : RESULTS;
  const bin = await ensureBinary(args);
  const stamp = (generatedAt: string) => ({ generated_at: generatedAt, machine: machine() });
  let results: Record<string, unknown>;
  if (args.verbsOnly) {
    // --verbs replaces only the verb table: the other figures of the last full run stay as they were
    const startedAt = new Date().toISOString();
    const verbs = await benchVerbTable(args, bin);
    results = { ...previousResults(file), verbs: { ...stamp(startedAt), ...verbs } };
  } else {
    const startedAt = new Date().toISOString();
    const suite = await benchSuite(args, bin);
    const suiteStamp = stamp(startedAt);
    const verbsAt = new Date().toISOString();
    const verbs = await benchVerbTable(args, bin);
    results = { ...suiteStamp, ...suite, verbs: { ...stamp(verbsAt), ...verbs } };
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(results, null, 2) + "\n");
  console.error(`\nwrote ${file}`);
  // the project's results: the docs' tables are made from them, never copied by hand
  if (file === RESULTS) for (const path of writePerformanceDocs()) console.error(`wrote ${path}`);
}

try {
  await main();
} catch (err) {
  if (!(err instanceof BenchUsageError || err instanceof VerbFailed)) throw err;
  console.error(`bench: ${err.message}`);
  process.exitCode = err instanceof BenchUsageError ? 2 : 1;
}
