/**
 * The verb table of issue 19: every journal verb timed interleaved with its
 * baseline in one run (A B C ... rotated per repetition, medians), as a ratio
 * to that baseline, with each process's own peak RSS and the issue's targets.
 *
 *   run journal (two identical runs a and b): baseline `journal verify --threads 1`
 *   agent step journal and its receipt:       baseline `replay verify agent.tar`
 *
 * Issue 28: the run-journal verbs run on every journal shape asked for
 * (bench/journal-gen.ts SHAPES), each against its baseline on the same
 * shape; `verbTable` is the first shape's table (the default `bench` shape:
 * the figures of before), `shapeTable` the verb × shape table.
 */
import { copyFileSync, existsSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { ensureDamagedRun, ensureForeignRowAgent, ensureJournal, ensureLateMismatchAgent, ensureReceipt, ensureTwoRuns, setTornTail } from "./inputs.ts";
import type { JournalShape } from "./journal-gen.ts";
import { type Contender, median, run, type Sample, interleaved, table } from "./measure.ts";

/** The issue's peak RSS bound, for every verb at any journal size. */
export const RSS_TARGET_MB = 64;

export interface VerbOptions {
  bin: string;
  /** Scratch directory (inputs, outputs). */
  out: string;
  mb: number;
  /** The run-journal shapes, in order; the first is the single-shape table's. */
  shapes: JournalShape[];
  receiptSteps: number;
  reps: number;
  /** Verb keys to measure (the baselines always run); null = all. */
  pick: Set<string> | null;
}

interface Verb {
  key: string;
  label: string;
  /** Ratio the issue sets against the group's baseline; null = this is the baseline. */
  target: number | null;
  contender: Contender;
}

export interface VerbRow {
  key: string;
  verb: string;
  baseline: string;
  wall_s: number;
  cpu_s: number;
  ratio: number;
  target_ratio: number | null;
  ratio_met: boolean | null;
  rss_mb: number;
  rss_met: boolean;
  stdout_bytes: number;
}

export interface ShapeResults {
  shape: JournalShape;
  bytes: number;
  rows: number;
  from_step: number;
  /** The run-journal verbs on this shape, the baseline first. */
  verbs: VerbRow[];
}

export interface VerbResults {
  params: { mb: number; reps: number; receipt_steps: number; picked: string[] | null; shapes: JournalShape[] };
  /** The first shape's journal (the single-shape table's). */
  run_journal: { shape: JournalShape; bytes: number; rows: number; from_step: number } | null;
  receipt: { steps: number; tar_bytes: number } | null;
  /** The single-shape table: the first shape's run-journal verbs, then the agent verbs. */
  rows: VerbRow[];
  /** Every shape's run-journal verbs. */
  shapes: ShapeResults[];
  /** Every target met in the single-shape table. */
  all_met: boolean;
  /** Every target met on every shape and by the agent verbs. */
  all_shapes_met: boolean;
}

export const RUN_VERBS = ["list", "diff", "show-json", "show-prose", "from-step", "from-step-prose", "verify-run", "repair", "html", "follow", "follow-json", "verify-torn", "repair-torn", "record-one", "receipt-run", "receipt-check"] as const;
export const AGENT_VERBS = ["export", "publish", "diff-journal", "agent-view", "agent-prose", "debug", "debug-foreign", "debug-late"] as const;
export const VERB_KEYS: readonly string[] = [...RUN_VERBS, ...AGENT_VERBS];

function exitedZero(s: Sample): void {
  if (s.code !== 0) throw new Error(`exit ${s.code}: ${s.stdout.slice(0, 500)}`);
}

/** Exit 0 and one JSON document on stdout that `ok` says is right. */
function jsonSays(what: string, ok: (doc: Record<string, unknown>) => boolean): (s: Sample) => void {
  return (s) => {
    exitedZero(s);
    const doc = JSON.parse(s.stdout) as Record<string, unknown>;
    if (!ok(doc)) throw new Error(`expected ${what}: ${s.stdout.slice(0, 500)}`);
  };
}

/** Exit `code` and one JSON document whose `error` is `error` (and of which `ok` holds). */
function jsonError(code: number, error: string, ok: (doc: Record<string, unknown>) => boolean = () => true): (s: Sample) => void {
  return (s) => {
    if (s.code !== code) throw new Error(`exit ${s.code} (expected ${code}): ${s.stdout.slice(0, 500)}`);
    const doc = JSON.parse(s.stdout) as Record<string, unknown>;
    if (doc.error !== error || !ok(doc)) throw new Error(`expected error ${error}: ${s.stdout.slice(0, 500)}`);
  };
}

/** `replay --verify`'s verdict on a whole chain: intact (exit 0), or every row read and the gate's findings (exit 1). */
function gated(s: Sample): void {
  const doc = JSON.parse(s.stdout) as Record<string, unknown>;
  const whole = doc.chain_consistent === true && doc.coverage === "complete";
  if (!whole || (s.code === 0 ? doc.ok !== true : s.code !== 1 || doc.error !== "provider_state_mutation")) throw new Error(`exit ${s.code}: ${s.stdout.slice(0, 500)}`);
}

/**
 * Exit 0 and an output that begins as it should: a display too large to keep
 * is only counted, but a verb that printed nothing must not look fast.
 */
function begins(head: RegExp): (s: Sample) => void {
  return (s) => {
    exitedZero(s);
    if (!head.test(s.stdout.slice(0, 4096))) throw new Error(`expected output beginning ${head}, got ${JSON.stringify(s.stdout.slice(0, 200))}`);
  };
}

/** Exit 0 and an output that ends as it should (a verdict printed after everything else). */
function ends(tail: RegExp): (s: Sample) => void {
  return (s) => {
    exitedZero(s);
    if (!tail.test(s.stdoutTail)) throw new Error(`expected output ending ${tail}, got ${JSON.stringify(s.stdoutTail.slice(-200))}`);
  };
}

/** A verb that failed or printed the wrong thing: the bench stops, naming it, with no figures. */
export class VerbFailed extends Error {}

function named(name: string, check: (s: Sample) => void): (s: Sample) => void {
  return (s) => {
    try {
      check(s);
    } catch (err) {
      throw new VerbFailed(`${name}: ${(err as Error).message}`);
    }
  };
}

function verb(key: string, label: string, target: number | null, cmd: string[], check: (s: Sample) => void, before?: () => void): Verb {
  return { key, label, target, contender: { name: key, cmd, before, check: named(label, check) } };
}

/** The end of `replay a --follow`'s prose: the verdict of a run that completed or whose process is gone. */
const FOLLOWED = /chain intact for a \(\d+ events; (the run completed|the run's process is gone)\)\nhead=[0-9a-f]{64}\n$/;

/** A journal last written long ago: --follow ends once caught up, whenever the journal was generated. */
function settle(journal: string): void {
  const long = new Date("2026-01-01T00:00:00Z");
  utimesSync(journal, long, long);
}

/** `N` near the end of the journal: the last 20,000 rows (the last 5% of a small one). */
export function fromStepOf(rows: number): number {
  return rows - Math.min(20_000, Math.ceil(rows / 20));
}

function runJournalVerbs(o: VerbOptions, sdd: string, journalA: string, rows: number, damaged: { sdd: string; t: string }): Verb[] {
  const bin = o.bin;
  const at = ["--sdd-dir", sdd];
  const cache = join(sdd, "runs", ".replay-list-cache.json");
  const receipt = runReceipt(o, sdd);
  // a receipt of another shape's run a is not this one's
  rmSync(receipt.out, { force: true });
  const bothListed = (s: Sample) => {
    exitedZero(s);
    if (!/^a\s/m.test(s.stdout) || !/^b\s/m.test(s.stdout)) throw new Error(`runs a and b not both listed: ${s.stdout.slice(0, 500)}`);
  };
  return [
    verb("verify", "`journal verify --threads 1`", null, [bin, "journal", "verify", journalA, "--threads", "1"], exitedZero),
    verb("list", "`replay list` (cold cache; runs a, b)", 1, [bin, "replay", "list", ...at], bothListed, () => rmSync(cache, { force: true })),
    verb("diff", "`replay diff a b` (identical)", 2.5, [bin, "replay", "diff", "a", "b", "--as-json", ...at], jsonSays("no divergence", (d) => d.diverged === false)),
    verb("show-json", "`replay a --as-json`", 2, [bin, "replay", "a", "--as-json", ...at], begins(/^\{[^]*"run_id": "a"/)),
    verb("show-prose", "`replay a` (prose, to a pipe)", 3, [bin, "replay", "a", ...at], begins(/^Deterministic Replay\nRun: a /)),
    verb("from-step", `\`replay a --from-step ${fromStepOf(rows)} --as-json\``, 2, [bin, "replay", "a", "--from-step", String(fromStepOf(rows)), "--as-json", ...at], begins(/^\{[^]*"events": \[/)),
    verb("from-step-prose", `\`replay a --from-step ${fromStepOf(rows)}\` (prose)`, 3, [bin, "replay", "a", "--from-step", String(fromStepOf(rows)), ...at], begins(/^Rebuilt state for a through step \d+\nhead: [0-9a-f]{64}\nevents: /)),
    // the chain and the provider-state gate in one pass (the bench journal's generated mutation rows carry
    // random content addresses: the gate finds every one, exit 1)
    verb("verify-run", "`replay a --verify` (the chain and the provider-state gate)", 2, [bin, "replay", "a", "--verify", "--as-json", ...at], gated),
    verb("repair", "`replay repair a` (clean, no-op)", 1, [bin, "replay", "repair", "a", "--as-json", ...at], jsonSays("repaired: false", (d) => d.repaired === false)),
    verb("html", "`replay a --html -` (the timeline page, to a pipe)", 3, [bin, "replay", "a", "--html", "-", ...at], begins(/^<!doctype html>/i)),
    // A run that ended (its process gone, its journal still since long before): every event, then the verdict.
    verb("follow", "`replay a --follow` (a finished run, to a pipe)", 3, [bin, "replay", "a", "--follow", ...at], ends(FOLLOWED), () => settle(journalA)),
    verb("follow-json", "`replay a --follow --as-json`", 2, [bin, "replay", "a", "--follow", "--as-json", ...at], ends(/"ended": "(run_completed|run_gone)"[^\n]*\}\n$/), () => settle(journalA)),
    // The same journal as a killed writer leaves it (a torn last line), and a writer resuming it: a damaged journal
    // is read at the speed of a whole one.
    verb("verify-torn", "`journal verify --threads 1` of a torn journal", 1.2, [bin, "journal", "verify", damaged.t, "--threads", "1", "--as-json"], jsonError(1, "torn_tail"), () => setTornTail(damaged.t, true)),
    verb("repair-torn", "`replay repair t` (cuts the torn tail)", 1, [bin, "replay", "repair", "t", "--as-json", "--sdd-dir", damaged.sdd], jsonSays("repaired: true", (d) => d.repaired === true), () => setTornTail(damaged.t, true)),
    verb("record-one", "`journal record t EVENT` (resumes the chain, appends one event)", 1.2, [bin, "journal", "record", "t", "tick_start", "--data", '{"tick": 1}', "--as-json", "--sdd-dir", damaged.sdd], jsonSays("ok", (d) => d.ok === true), () => setTornTail(damaged.t, false)),
    // The signed run receipt of the whole journal, and reading it back.
    verb("receipt-run", "`verify run a` (the signed run receipt, to a file)", 3, [bin, "verify", "run", "a", "--signing-key-path", receipt.key, "-o", receipt.out, "--as-json", ...at], jsonSays(`${rows} rows embedded`, (d) => d.ok === true && d.journal_events === rows)),
    verb("receipt-check", "`verify receipt` of that receipt", 3, [bin, "verify", "receipt", receipt.out, "--public-key", receipt.pub, "--as-json"], jsonSays("ok", (d) => d.ok === true), () => receipt.ensure()),
  ];
}

/** A signing key under the scratch directory, and where the run receipt of run `a` is written (made once, for `receipt-check`). */
function runReceipt(o: VerbOptions, sdd: string): { key: string; pub: string; out: string; ensure(): void } {
  const dir = join(o.out, "receipt-keys");
  const key = join(dir, "bench.key");
  const out = join(o.out, "verbs-run-receipt.json");
  if (!existsSync(key)) {
    const r = Bun.spawnSync([o.bin, "keys", "generate", "--out-dir", dir, "--name", "bench"], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`keys generate: ${r.stderr.toString()}`);
  }
  return {
    key,
    pub: join(dir, "bench.pub"),
    out,
    ensure: () => {
      if (existsSync(out)) return;
      const r = Bun.spawnSync([o.bin, "verify", "run", "a", "--signing-key-path", key, "-o", out, "--sdd-dir", sdd], { stdout: "pipe", stderr: "pipe" });
      if (r.exitCode !== 0) throw new Error(`verify run: ${r.stderr.toString()}`);
    },
  };
}

function agentVerbs(o: VerbOptions, r: { sdd: string; agentId: string; tar: string }, twin: string, foreign: string, late: { id: string; seq: number }): Verb[] {
  const bin = o.bin;
  const at = ["--sdd-dir", r.sdd];
  return [
    verb("receipt-verify", "`replay verify agent.tar`", null, [bin, "replay", "verify", r.tar], exitedZero),
    verb("export", "`replay export`", 2, [bin, "replay", "export", r.agentId, join(o.out, "verbs-export.tar"), "--force", ...at], exitedZero),
    verb("publish", "`replay publish`", 2, [bin, "replay", "publish", r.agentId, join(o.out, "verbs-publish.tar"), "--yes-i-want-to-publish", "--force", ...at], exitedZero),
    verb("diff-journal", "`replay diff-journal e.tar agent.tar` (identical)", 2.5, [bin, "replay", "diff-journal", twin, r.tar, "--as-json"], jsonSays("diverged: false", (d) => d.diverged === false)),
    verb("agent-view", "`replay <AGENT_ID> --as-json`", 2, [bin, "replay", r.agentId, "--as-json", ...at], begins(/^\{[^]*"agent_id": "agent-bench"[^]*"entries": \[/)),
    verb("agent-prose", "`replay <AGENT_ID>` (prose, to a pipe)", 3, [bin, "replay", r.agentId, ...at], begins(/agent-bench/)),
    verb("debug", "`replay debug <AGENT_ID>`", 3, [bin, "replay", "debug", r.agentId, ...at], exitedZero),
    // The same journal with a row another tool wrote after line 10 (no step_hash): not verified, at walking speed.
    verb("debug-foreign", "`replay debug <AGENT_ID>` (a row without step_hash after line 10)", 3, [bin, "replay", "debug", foreign, "--as-json", ...at], jsonError(1, "chain_broken")),
    // And a step edited 70% of the way in: found after a second walk, past 70% of the lines.
    verb("debug-late", "`replay debug <AGENT_ID>` (that row, and a step edited at 70%)", 3, [bin, "replay", "debug", late.id, "--as-json", ...at], jsonError(1, "chain_broken", (d) => d.seq === late.seq)),
  ];
}

/** Time one group interleaved and turn it into rows: ratios to the group's first verb (its baseline). */
async function measureGroup(verbs: Verb[], reps: number): Promise<VerbRow[]> {
  const samples = await interleaved(verbs.map((v) => v.contender), reps);
  const base = verbs[0]!;
  const baseWall = median(samples.get(base.key)!.map((s) => s.wallS));
  return verbs.map((v) => {
    const ss = samples.get(v.key)!;
    const wall = median(ss.map((s) => s.wallS));
    const rss = Math.max(...ss.map((s) => s.rssMB));
    const ratio = wall / baseWall;
    return {
      key: v.key,
      verb: v.label,
      baseline: base.label,
      wall_s: wall,
      cpu_s: median(ss.map((s) => s.cpuS)),
      ratio,
      target_ratio: v.target,
      ratio_met: v.target === null ? null : ratio <= v.target,
      rss_mb: rss,
      rss_met: rss <= RSS_TARGET_MB,
      stdout_bytes: Math.max(...ss.map((s) => s.stdoutBytes)),
    };
  });
}

export async function benchVerbs(o: VerbOptions): Promise<VerbResults> {
  const wanted = (v: Verb) => v.target === null || o.pick === null || o.pick.has(v.key);
  const shapes: ShapeResults[] = [];
  const agentRows: VerbRow[] = [];
  let receipt: VerbResults["receipt"] = null;
  if (o.pick === null || RUN_VERBS.some((k) => o.pick!.has(k))) {
    for (const shape of o.shapes) {
      const source = ensureJournal(o.out, o.mb, shape);
      const runs = ensureTwoRuns(o.out, source, o.mb);
      const damaged = ensureDamagedRun(runs.sdd, source);
      // warm the page cache once: every contender reads from memory
      for (const p of [runs.a, runs.b, damaged.t]) await run(["cat", p]);
      console.error(`verbs on a ${shape} run journal: ${(source.bytes / 1e6).toFixed(1)} MB, ${source.rows} rows, ${o.reps} interleaved repetitions`);
      const verbs = await measureGroup(runJournalVerbs(o, runs.sdd, runs.a, source.rows, damaged).filter(wanted), o.reps);
      shapes.push({ shape, bytes: source.bytes, rows: source.rows, from_step: fromStepOf(source.rows), verbs });
    }
  }
  if (o.pick === null || AGENT_VERBS.some((k) => o.pick!.has(k))) {
    const r = await ensureReceipt(o.out, o.bin, o.receiptSteps);
    // e.tar: the same receipt again under another name, so diff-journal reads two files
    const twin = join(o.out, `agent-${o.receiptSteps}.e.tar`);
    // (the same bytes: a receipt made again is as long as the last but for its times, which would make the two differ)
    if (!existsSync(twin) || !readFileSync(twin).equals(readFileSync(r.tar))) copyFileSync(r.tar, twin);
    receipt = { steps: o.receiptSteps, tar_bytes: statSync(r.tar).size };
    console.error(`verbs on a ${o.receiptSteps}-step agent journal: ${o.reps} interleaved repetitions`);
    const foreign = ensureForeignRowAgent(r.sdd, r.agentId);
    const late = ensureLateMismatchAgent(r.sdd, r.agentId);
    agentRows.push(...(await measureGroup(agentVerbs(o, r, twin, foreign, late).filter(wanted), o.reps)));
  }
  const first = shapes[0];
  const rows = [...(first?.verbs ?? []), ...agentRows];
  const met = (r: VerbRow) => r.ratio_met !== false && r.rss_met;
  return {
    params: { mb: o.mb, reps: o.reps, receipt_steps: o.receiptSteps, picked: o.pick ? [...o.pick] : null, shapes: o.shapes },
    run_journal: first ? { shape: first.shape, bytes: first.bytes, rows: first.rows, from_step: first.from_step } : null,
    receipt,
    rows,
    shapes,
    all_met: rows.every(met),
    all_shapes_met: shapes.every((s) => s.verbs.every(met)) && agentRows.every(met),
  };
}

const yesNo = (b: boolean | null): string => (b === null ? "-" : b ? "yes" : "**no**");

/** The table as the README shows it. */
export function verbTable(r: VerbResults): string {
  const rows = r.rows.map((v) => [
    v.verb,
    v.wall_s.toFixed(3),
    v.target_ratio === null ? "1 (baseline)" : v.ratio.toFixed(2) + "×",
    v.target_ratio === null ? "-" : `≤ ${v.target_ratio}×`,
    yesNo(v.ratio_met),
    v.rss_mb.toFixed(1),
    yesNo(v.rss_met),
  ]);
  return table(["verb", "wall s", "× baseline", "target", "met", "peak RSS MB", `RSS ≤ ${RSS_TARGET_MB} MB`], rows);
}

/** The heading line above the table: what was measured. */
export function verbCaption(r: VerbResults): string {
  const parts: string[] = [];
  if (r.run_journal) parts.push(`${r.run_journal.shape === "bench" ? "" : `${r.run_journal.shape} `}run journal ${(r.run_journal.bytes / 1e6).toFixed(1)} MB, ${r.run_journal.rows.toLocaleString("en-US")} rows (baseline \`journal verify --threads 1\`)`);
  if (r.receipt) parts.push(`agent journal ${r.receipt.steps.toLocaleString("en-US")} steps, receipt ${(r.receipt.tar_bytes / 1e6).toFixed(1)} MB (baseline \`replay verify\`)`);
  return `Verbs: ${parts.join("; ")}; median of ${r.params.reps}, interleaved`;
}

/** A verb's name in the verb × shape table (from-step's N differs per shape). */
export function shapeLabel(v: VerbRow): string {
  if (v.key === "from-step") return "`replay a --from-step N --as-json` (last 5%, at most 20,000 rows)";
  return v.key === "from-step-prose" ? "`replay a --from-step N` (prose)" : v.verb;
}

/** A figure past its target, in bold. */
export const over = (text: string, met: boolean | null): string => (met === false ? `**${text}**` : text);

/**
 * Every verb on every shape: wall s, × baseline (`journal verify --threads
 * 1` on the same shape; agent verbs: `replay verify` on the agent journal),
 * peak RSS MB; a figure past its target in bold. Null when fewer than two
 * shapes were measured (the single-shape table says it all).
 */
export function shapeTable(r: VerbResults): string | null {
  if (r.shapes.length < 2) return null;
  const agent = r.rows.filter((v) => !(RUN_VERBS as readonly string[]).includes(v.key) && v.key !== "verify");
  const groups: { name: string; rows: VerbRow[] }[] = [...r.shapes.map((s) => ({ name: s.shape, rows: s.verbs })), ...(agent.length > 0 ? [{ name: "agent", rows: agent }] : [])];
  const verbs: VerbRow[] = [];
  for (const g of groups) for (const v of g.rows) if (!verbs.some((x) => x.key === v.key)) verbs.push(v);
  const headers = ["verb", ...groups.flatMap((g) => [`${g.name} s`, `${g.name} ×`, `${g.name} MB`])];
  const rows = verbs.map((v) => [
    shapeLabel(v),
    ...groups.flatMap((g) => {
      const x = g.rows.find((y) => y.key === v.key);
      if (!x) return ["-", "-", "-"];
      return [x.wall_s.toFixed(3), x.target_ratio === null ? "1" : over(x.ratio.toFixed(2) + "×", x.ratio_met), over(x.rss_mb.toFixed(1), x.rss_met)];
    }),
  ]);
  return table(headers, rows);
}

/** The heading line above the verb × shape table. */
export function shapeCaption(r: VerbResults): string {
  const parts = r.shapes.map((s) => `${s.shape} ${(s.bytes / 1e6).toFixed(1)} MB, ${s.rows.toLocaleString("en-US")} rows`);
  if (r.receipt) parts.push(`agent ${r.receipt.steps.toLocaleString("en-US")} steps`);
  return `Verbs × shapes (× = ratio to \`journal verify --threads 1\` on the same shape; agent: to \`replay verify\`): ${parts.join("; ")}; median of ${r.params.reps}, interleaved`;
}
