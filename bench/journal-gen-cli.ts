/**
 * `bun bench/journal-gen.ts ...`: write a benchmark journal from the command
 * line (the generator module itself is what the bench and the big-file tests
 * import). One JSON line on stdout says what was written; a bad argument is
 * a one-line message on stderr and exit 2; an existing journal is kept
 * unless --force; a journal that cannot be written is exit 3.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BernsteinError } from "../src/errors/index.ts";
import { journalPath } from "../src/journal/paths.ts";
import { agentJournalDir, BUCKET_NAME } from "../src/steps/paths.ts";
import { generateJournal, generateStepJournal, isShape, type JournalShape, SHAPES } from "./journal-gen.ts";

export const USAGE = `usage: bun bench/journal-gen.ts --sdd DIR --run ID --bytes N [--shape S] [--seed N] [--force]
       bun bench/journal-gen.ts --sdd DIR --agent ID --steps N [--seed N] [--force]

  --run ID --bytes N   a run journal of at least N bytes (221e6 = the bench's 221 MB) at DIR/runs/ID/journal.jsonl,
                       written in batches of 4,096 rows (~2.1 MB), so at least one batch
  --shape S            bench (default: the bench's realistic run), mixed (every event kind, nested payloads,
                       unicode, hard floats, multi-KB tool output; ends with run_completed), large-rows
                       (~1 MB rows, one per batch), python (rows written by python3, bench/journal_py.py),
                       windows (those rows with CR LF line ends) or compact (those rows as jq -c rewrites them)
  --agent ID --steps N an agent step journal of N steps at DIR/runtime/journal/ID/000000.jsonl
  --seed N             0..4294967295 (default 8 for run journals, 5 for step journals);
                       same seed and size = same run journal bytes (step journals: same steps
                       and step hashes; the writer stamps ts with the real clock)
  --force              replace an existing journal
  -h, --help           this text`;

const VALUE_FLAGS = new Set(["--sdd", "--run", "--bytes", "--agent", "--steps", "--seed", "--shape"]);

class ArgError extends Error {}
/** Arguments that parse but name a journal that already exists: exit 2 without the usage text. */
class ExistsError extends ArgError {}

interface Parsed {
  sdd: string;
  seed: number | undefined;
  force: boolean;
  target: { kind: "run"; runId: string; bytes: number; shape: JournalShape } | { kind: "agent"; agentId: string; steps: number };
}

function parse(argv: string[]): Parsed | "help" {
  const values = new Map<string, string>();
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "-h" || a === "--help") return "help";
    if (a === "--force") force = true;
    else if (VALUE_FLAGS.has(a)) {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new ArgError(`${a} needs a value`);
      if (values.has(a)) throw new ArgError(`${a} given twice`);
      values.set(a, v);
    } else throw new ArgError(`unknown argument: ${JSON.stringify(a)}`);
  }
  const sdd = values.get("--sdd");
  if (sdd === undefined) throw new ArgError("--sdd DIR is required");
  const seedRaw = values.get("--seed");
  const seed = seedRaw === undefined ? undefined : integer("--seed", seedRaw, 0, 0xffffffff);
  const run = values.get("--run");
  const agent = values.get("--agent");
  if ((run === undefined) === (agent === undefined)) throw new ArgError("give exactly one of --run ID (with --bytes) and --agent ID (with --steps)");
  if (run !== undefined) {
    if (values.has("--steps")) throw new ArgError("--steps goes with --agent, not --run");
    const bytes = values.get("--bytes");
    if (bytes === undefined) throw new ArgError("--run needs --bytes N");
    const shape = values.get("--shape") ?? "bench";
    if (!isShape(shape)) throw new ArgError(`--shape takes one of ${SHAPES.join(", ")}, got ${JSON.stringify(shape)}`);
    return { sdd, seed, force, target: { kind: "run", runId: run, bytes: positive("--bytes", bytes), shape } };
  }
  if (values.has("--bytes")) throw new ArgError("--bytes goes with --run, not --agent");
  if (values.has("--shape")) throw new ArgError("--shape goes with --run, not --agent");
  const steps = values.get("--steps");
  if (steps === undefined) throw new ArgError("--agent needs --steps N");
  return { sdd, seed, force, target: { kind: "agent", agentId: agent!, steps: integer("--steps", steps, 1, Number.MAX_SAFE_INTEGER) } };
}

/** A positive number in any spelling Number() reads (221e6, 1000000). */
function positive(flag: string, raw: string): number {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n <= 0) throw new ArgError(`${flag} needs a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!/^\d+(e\d+)?$/i.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new ArgError(`${flag} needs an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function generate(p: Parsed): Record<string, unknown> {
  const t = p.target;
  if (t.kind === "run") {
    const path = journalPath(p.sdd, t.runId);
    if (existsSync(path) && !p.force) throw new ExistsError(`${path} exists (--force replaces it)`);
    const seed = p.seed ?? 8;
    return { kind: "run", shape: t.shape, ...generateJournal(p.sdd, t.runId, t.bytes, seed, t.shape), seed };
  }
  const dir = agentJournalDir(p.sdd, t.agentId);
  if (existsSync(join(dir, BUCKET_NAME))) {
    if (!p.force) throw new ExistsError(`${join(dir, BUCKET_NAME)} exists (--force replaces it)`);
    rmSync(dir, { recursive: true, force: true });
  }
  const seed = p.seed ?? 5;
  return { kind: "agent", ...generateStepJournal(p.sdd, t.agentId, t.steps, seed), seed };
}

/** Returns the exit code: 0 written, 2 bad arguments or an existing journal, else the writer's (3: cannot write). */
export function main(argv: string[]): number {
  try {
    const parsed = parse(argv);
    if (parsed === "help") {
      console.log(USAGE);
      return 0;
    }
    console.log(JSON.stringify(generate(parsed)));
    return 0;
  } catch (err) {
    if (err instanceof ArgError) {
      console.error(err instanceof ExistsError ? `journal-gen: ${err.message}` : `journal-gen: ${err.message}\n${USAGE.split("\n\n")[0]}`);
      return 2;
    }
    if (err instanceof BernsteinError) {
      console.error(`journal-gen: ${err.message}`);
      return err.exitCode;
    }
    const e = err as NodeJS.ErrnoException;
    if (typeof e?.code === "string") {
      console.error(`journal-gen: ${e.message}`);
      return 3;
    }
    throw err;
  }
}
