/**
 * The bench's inputs under its scratch directory (bench/out/ by default),
 * generated deterministically and reused while their parameters match.
 */
import { appendFileSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { generateJournal, generateStepJournal, isPythonShape, type JournalShape } from "./journal-gen.ts";
import { run } from "./measure.ts";

export interface BenchJournal {
  shape: JournalShape;
  path: string;
  bytes: number;
  rows: number;
  /** What the journal was made by and of (the generator's sources, seed, shape, size): copies of another stamp are made again. */
  stamp: string;
}

const RUN_SEED = 8;

/** The generator's sources, hashed: a journal an older generator made is made again, so a changed shape is measured. */
function generatorDigest(): string {
  const h = new Bun.CryptoHasher("sha256");
  for (const f of ["journal-gen.ts", "journal-shapes.ts", "journal_py.py"]) h.update(readFileSync(join(import.meta.dir, f)));
  return h.digest("hex").slice(0, 16);
}

/**
 * The benchmark run journal of `shape`, `<out>/sdd/runs/bench-<mb>mb` (the
 * default shape, as before) or `<out>/sdd/runs/<shape>-<mb>mb`, regenerated
 * only when its parameters changed.
 */
export function ensureJournal(out: string, mb: number, shape: JournalShape = "bench"): BenchJournal {
  const sdd = join(out, "sdd");
  const runId = `${shape}-${mb}mb`;
  const metaPath = join(out, `${runId}.meta.json`);
  const path = join(sdd, "runs", runId, "journal.jsonl");
  const generator = generatorDigest();
  const stampOf = (bytes: number) => `${generator} ${RUN_SEED} ${shape} ${bytes}`;
  if (existsSync(metaPath) && existsSync(path)) {
    const meta = JSON.parse(readFileSync(metaPath, "utf8")) as { bytes: number; rows: number; seed: number; shape?: string; generator?: string };
    if (meta.seed === RUN_SEED && (meta.shape ?? "bench") === shape && meta.generator === generator && statSync(path).size === meta.bytes) {
      return { shape, path, bytes: meta.bytes, rows: meta.rows, stamp: stampOf(meta.bytes) };
    }
  }
  console.error(`generating a ${mb} MB journal of shape ${shape} ${isPythonShape(shape) ? "with python3" : "with the project's writer"} ...`);
  const t = performance.now();
  const g = generateJournal(sdd, runId, mb * 1e6, RUN_SEED, shape);
  console.error(`  ${g.rows} rows, ${(g.bytes / 1e6).toFixed(1)} MB in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  writeFileSync(metaPath, JSON.stringify({ bytes: g.bytes, rows: g.rows, seed: RUN_SEED, shape, generator }));
  return { shape, path: g.path, bytes: g.bytes, rows: g.rows, stamp: stampOf(g.bytes) };
}

/**
 * Two runs `a` and `b` with the same journal, alone in `<out>/verbs-sdd-<mb>`
 * (`verbs-sdd-<shape>-<mb>` for the shapes other than `bench`)
 * (so `replay list` lists exactly them). Copies, not hard links: `replay
 * repair` refuses a journal with more than one link.
 */
export function ensureTwoRuns(out: string, source: BenchJournal, mb: number): { sdd: string; a: string; b: string } {
  const sdd = join(out, source.shape === "bench" ? `verbs-sdd-${mb}` : `verbs-sdd-${source.shape}-${mb}`);
  const paths = { a: join(sdd, "runs", "a", "journal.jsonl"), b: join(sdd, "runs", "b", "journal.jsonl") };
  const fresh = !sameSource(sdd, source.stamp);
  for (const path of [paths.a, paths.b]) {
    if (!fresh && existsSync(path) && statSync(path).size === source.bytes) continue;
    mkdirSync(dirname(path), { recursive: true });
    copyFileSync(source.path, path);
    copyFileSync(join(dirname(source.path), "metadata.json"), join(dirname(path), "metadata.json"));
  }
  writeFileSync(join(sdd, SOURCE_STAMP), source.stamp);
  return { sdd, ...paths };
}

/** Beside a journal's copies: the stamp of the journal they copy. */
const SOURCE_STAMP = ".bench-source";

/** What is under `sdd` was made from the source `stamp` names. */
function sameSource(sdd: string, stamp: string): boolean {
  try {
    return readFileSync(join(sdd, SOURCE_STAMP), "utf8") === stamp;
  } catch {
    return false;
  }
}

/**
 * Run `t`, a copy of the journal alone in `<sdd>-damaged`, for the verbs
 * that meet a torn tail (a killed writer's last line) or append to it;
 * `setTornTail` gives it the tail each wants before it runs.
 */
export function ensureDamagedRun(runsSdd: string, source: BenchJournal): { sdd: string; t: string } {
  const sdd = `${runsSdd}-damaged`;
  const t = join(sdd, "runs", "t", "journal.jsonl");
  // a copy that still holds the journal: recorded rows and a torn tail (under 4 KiB) are all that differ
  if (!sameSource(sdd, source.stamp) || !existsSync(t) || statSync(t).size < source.bytes || statSync(t).size > source.bytes + (1 << 20)) {
    mkdirSync(dirname(t), { recursive: true });
    copyFileSync(source.path, t);
    copyFileSync(join(dirname(source.path), "metadata.json"), join(dirname(t), "metadata.json"));
    writeFileSync(join(sdd, SOURCE_STAMP), source.stamp);
  }
  return { sdd, t };
}

/** The start of a row, cut mid-write: what a writer killed in an append leaves. */
const TORN_FRAGMENT = '{"ts": 1727000999.25, "elapsed_s": 999.1, "index": 4';

/** Make `path` end in a torn tail (`torn`) or in a complete line, and remove the fragments repair saved beside it. */
export function setTornTail(path: string, torn: boolean): void {
  const dir = dirname(path);
  for (const f of readdirSync(dir)) if (f.startsWith("journal.jsonl.torn-")) rmSync(join(dir, f));
  const size = statSync(path).size;
  const tail = new Uint8Array(Math.min(size, 4096));
  const fd = openSync(path, "r");
  try {
    readSync(fd, tail, 0, tail.length, size - tail.length);
  } finally {
    closeSync(fd);
  }
  const whole = tail[tail.length - 1] === 0x0a;
  if (torn && whole) appendFileSync(path, TORN_FRAGMENT);
  if (!torn && !whole) truncateSync(path, size - tail.length + tail.lastIndexOf(0x0a) + 1);
}

export interface BenchReceipt {
  /** The sdd directory holding the step journal of agent `agentId`. */
  sdd: string;
  agentId: string;
  tar: string;
}

/** The row another tool left in a step journal: an object with no step_hash (the tolerant reader passes over it). */
const FOREIGN_STEP_ROW = '{"note": "written by another tool", "seq": 10}';
/** The line the foreign row follows. */
const FOREIGN_AFTER_LINE = 10;

/**
 * Agent `<agentId>-foreign` beside `agentId` in `sdd`: its step journal with
 * FOREIGN_STEP_ROW after line 10, so the verifying walk's head leaves the
 * tolerant reader's from there on (`replay debug` must find the first
 * mismatch again without parsing every row). Made anew when the journal is newer.
 */
export function ensureForeignRowAgent(sdd: string, agentId: string): string {
  return ensureAgentVariant(sdd, agentId, "foreign", (bytes) => {
    const at = lineStart(bytes, FOREIGN_AFTER_LINE);
    return Buffer.concat([bytes.subarray(0, at), Buffer.from(`${FOREIGN_STEP_ROW}\n`), bytes.subarray(at)]);
  });
}

/**
 * Agent `<agentId>-late` beside `agentId`: the `-foreign` agent's journal
 * with one more change, a character of the prompt of the step on line
 * 70% of the way in, so its step_hash no longer checks out. `replay debug`
 * must walk twice, then pass over 70% of the lines to that row, and report
 * it. Returns the agent and the edited step's seq.
 */
export function ensureLateMismatchAgent(sdd: string, agentId: string): { id: string; seq: number } {
  const foreign = ensureForeignRowAgent(sdd, agentId);
  // the step edited, found in the journal it is made from (the edit keeps every line where it is)
  const bytes = readFileSync(join(sdd, "runtime", "journal", foreign, "000000.jsonl"));
  const line = Math.floor(lineCount(bytes) * 0.7);
  const s = lineStart(bytes, line);
  const e = bytes.indexOf(0x0a, s);
  const row = bytes.subarray(s, e).toString("utf8");
  const edited = row.replace(/("prompt": ?")Step/, "$1step");
  if (edited === row) throw new Error(`line ${line + 1} has no prompt to edit: ${row.slice(0, 200)}`);
  const id = ensureAgentVariant(sdd, foreign, "late", (src) => Buffer.concat([src.subarray(0, s), Buffer.from(edited), src.subarray(e)]));
  return { id, seq: (JSON.parse(row) as { seq: number }).seq };
}

/** The line feeds in `bytes`. */
function lineCount(bytes: Buffer): number {
  let n = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) n++;
  return n;
}

/** The offset line `n` (0-based) of `bytes` starts at. */
function lineStart(bytes: Buffer, n: number): number {
  let at = 0;
  for (let k = 0; k < n; k++) {
    at = bytes.indexOf(0x0a, at) + 1;
    if (at === 0) throw new Error(`fewer than ${n} lines`);
  }
  return at;
}

/** Agent `<agentId>-<suffix>` beside `agentId`: its step journal changed by `change`, made anew when the source is newer. */
function ensureAgentVariant(sdd: string, agentId: string, suffix: string, change: (bytes: Buffer) => Buffer): string {
  const id = `${agentId}-${suffix}`;
  const src = join(sdd, "runtime", "journal", agentId, "000000.jsonl");
  const dst = join(sdd, "runtime", "journal", id, "000000.jsonl");
  if (existsSync(dst) && statSync(dst).mtimeMs >= statSync(src).mtimeMs) return id;
  mkdirSync(dirname(dst), { recursive: true, mode: 0o700 });
  writeFileSync(dst, change(readFileSync(src)), { mode: 0o600 });
  return id;
}

/** A `steps`-step agent journal (the project's step writer) and its receipt, exported by the binary under test. */
export async function ensureReceipt(out: string, bin: string, steps: number): Promise<BenchReceipt> {
  const sdd = join(out, `agent-sdd-${steps}`);
  const tar = join(out, `agent-${steps}.tar`);
  const agentId = "agent-bench";
  const stamp = `${generatorDigest()} ${steps}`;
  if (existsSync(tar) && existsSync(join(sdd, "runtime", "journal", agentId)) && sameSource(sdd, stamp)) return { sdd, agentId, tar };
  rmSync(sdd, { recursive: true, force: true });
  console.error(`writing a ${steps}-step agent journal ...`);
  generateStepJournal(sdd, agentId, steps);
  const r = await run([bin, "replay", "export", agentId, tar, "--force", "--sdd-dir", sdd]);
  if (r.code !== 0) throw new Error(`receipt export failed (exit ${r.code}): ${r.stdout}`);
  writeFileSync(join(sdd, SOURCE_STAMP), stamp);
  return { sdd, agentId, tar };
}
