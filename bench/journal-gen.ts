/**
 * Deterministic, realistic run journals for the benchmark and the big-file
 * tests, written by the project's own writer (`EventJournal`), and agent
 * step journals (`StepJournal`) for the receipt benchmarks.
 *
 * The event mix and payload shapes follow a real orchestrator run (spec §9):
 * ticks, agent spawns with endpoint details, claimed/completed tasks with
 * run-cumulative costs, tool calls with nested token counts and file lists,
 * unicode summaries, provider-state captures. Same seed + same size = same
 * bytes (the clock is simulated too), so benchmark runs are comparable.
 * That is the `bench` shape; the others (`mixed`, `large-rows`: see
 * journal-shapes.ts; `python`: rows python3 writes, journal_py.py; `windows`:
 * the same rows, each line ended by CR LF as Python's text mode writes them
 * on Windows; `compact`: the same rows as `jq -c` rewrites a journal, no
 * whitespace and raw UTF-8) keep the verbs from being tuned to it.
 */
import { EventJournal, type JournalClock, type RecordItem } from "../src/journal/writer.ts";
import { pyFloat, type PyLike } from "../src/pyjson/types.ts";
import { join } from "node:path";
import { journalPath } from "../src/journal/paths.ts";
import { StepJournal } from "../src/steps/writer.ts";
import { mulberry32 } from "../tools/fuzz/rng.ts";
import { hex, largeRowEvents, mixedEvents, MODELS, pick, PROVIDERS, ROLES, runCompleted, TOOLS } from "./journal-shapes.ts";

/** The seeded float generator shared with the fuzzers (mulberry32). */
export const prng = mulberry32;

const FILES = [
  "src/core/orchestrator.py",
  "src/core/replay/journal.py",
  "src/cli/replay_cmd.py",
  "tests/unit/test_event_journal.py",
  "docs/ARCHITECTURE.md",
  "src/adapters/claude.py",
  "src/tasks/batch_api.py",
  "web/src/components/RunTable.tsx",
];
const SUMMARIES = [
  "Implemented retry with exponential back-off",
  "Résumé: fixed the naïve cache invalidation — tests green ✓",
  "修复了并发写入导致的日志损坏问题",
  "Добавлена проверка подписи квитанций",
  "Refactored the planner; 3 files changed 🚀",
  "Added \"strict\" mode to the parser (no trailing commas)",
  "Tabs\tand\nnewlines survive the journal",
];



/** An endless stream of realistic events (one run: started, ticks, agents, tasks). */
export function* realisticEvents(seed: number, runId: string): Generator<RecordItem> {
  const rand = prng(seed);
  let spent = 0;
  let tick = 0;
  let agentSeq = 0;
  let taskSeq = 0;
  yield {
    event: "run_started",
    payload: {
      run_id: runId,
      max_agents: 6,
      budget_usd: pyFloat(25.0),
      git_sha: hex(rand, 40),
      git_branch: "feature/journal-verify",
      config_hash: hex(rand, 64),
    },
  };
  for (;;) {
    tick++;
    yield { event: "tick_start", payload: { tick } };
    if (tick % 25 === 1) {
      yield { event: "plan.graph", payload: { digest: hex(rand, 64), rev: Math.floor(tick / 25) + 1, task_count: 40 + (tick % 17) } };
    }
    const agentId = `agent-${(++agentSeq).toString(16).padStart(8, "0")}`;
    const model = pick(rand, MODELS);
    const taskIds = [`T-${++taskSeq}`, ...(rand() < 0.4 ? [`T-${++taskSeq}`] : [])];
    yield {
      event: "agent_spawned",
      payload: {
        agent_id: agentId,
        role: pick(rand, ROLES),
        model,
        provider: pick(rand, PROVIDERS),
        task_ids: taskIds,
        agent_source: "pool",
        endpoint_adapter_name: "claude_code",
        endpoint_model: model,
        endpoint_base_url: "https://api.example.com/v1",
        endpoint_profile_name: "default",
      },
    };
    yield {
      event: "context.files_attached",
      payload: {
        agent_id: agentId,
        task_ids: taskIds,
        entries: [pick(rand, FILES), pick(rand, FILES)].map((path) => ({ path, sha256: hex(rand, 16), bytes: Math.floor(rand() * 90000) })),
      },
    };
    for (const taskId of taskIds) {
      yield { event: "task_claimed", payload: { task_id: taskId, agent_id: agentId, model } };
      const calls = 1 + Math.floor(rand() * 5);
      for (let c = 0; c < calls; c++) {
        const input = Math.floor(rand() * 40000);
        yield {
          event: "tool_call",
          payload: {
            agent_id: agentId,
            task_id: taskId,
            tool: pick(rand, TOOLS),
            args: { path: pick(rand, FILES), line: Math.floor(rand() * 900) },
            tokens: { input, output: Math.floor(input / 7), cache: { read: Math.floor(input / 2), write: 0 } },
            duration_s: pyFloat(Math.round(rand() * 90000) / 1000),
            ok: rand() < 0.93,
          },
        };
      }
      spent += rand() * 0.35;
      if (rand() < 0.08) {
        yield { event: "task_verification_failed", payload: { task_id: taskId, failed_signals: ["tests", "lint"].slice(0, 1 + Math.floor(rand() * 2)) } };
        yield { event: "task_retried", payload: { task_id: taskId } };
      }
      yield {
        event: "task_completed",
        payload: {
          task_id: taskId,
          agent_id: agentId,
          cost_usd: pyFloat(Math.round(spent * 10000) / 10000),
          summary: pick(rand, SUMMARIES),
          files_changed: [pick(rand, FILES), pick(rand, FILES)],
        },
      };
    }
    if (rand() < 0.2) {
      yield {
        event: "provider_state_mutation",
        payload: {
          mutation_kind: "context_compaction",
          before_digest: hex(rand, 64),
          after_digest: hex(rand, 64),
          step_index: tick,
          content_address: hex(rand, 64),
          flagged: false,
          agent_id: agentId,
        },
      };
    }
    yield { event: "agent_reaped", payload: { agent_id: agentId } };
  }
}

/** A simulated clock: start at a fixed instant, advance a little per reading. */
export function steppingClock(seed: number, start = 1727000000.1234567): JournalClock {
  const rand = prng(seed ^ 0x9e3779b9);
  let t = start;
  return {
    now: () => {
      t += rand() * 0.05;
      return t;
    },
  };
}

/** The journal shapes the bench measures every verb on; `bench` is the original (and default) one. */
export const SHAPES = ["bench", "mixed", "large-rows", "python", "windows", "compact"] as const;
export type JournalShape = (typeof SHAPES)[number];

export function isShape(s: string): s is JournalShape {
  return (SHAPES as readonly string[]).includes(s);
}

/** Rows per `recordMany` call between size checks: about 2 MB of rows for each shape. */
const BATCH_ROWS: Record<Exclude<JournalShape, PythonShape>, number> = { bench: 4096, mixed: 512, "large-rows": 1 };

/** The shapes python3 writes (bench/journal_py.py). */
type PythonShape = "python" | "windows" | "compact";

export function isPythonShape(shape: JournalShape): shape is PythonShape {
  return shape === "python" || shape === "windows" || shape === "compact";
}

const PYTHON_WRITER = join(import.meta.dir, "journal_py.py");

/**
 * Write a journal of about `targetBytes` (at least one batch of rows) of
 * shape `shape` under `<sddDir>/runs/<runId>/` (any existing one is
 * replaced). Returns the path and the row count. Same shape, seed and size,
 * same bytes. `python`, `windows` and `compact` rows are written by python3 (bench/journal_py.py).
 */
export function generateJournal(
  sddDir: string,
  runId: string,
  targetBytes: number,
  seed = 8,
  shape: JournalShape = "bench",
): { path: string; rows: number; bytes: number } {
  if (isPythonShape(shape)) return generatePythonJournal(sddDir, runId, targetBytes, seed, shape);
  const journal = EventJournal.create(runId, { sddDir, overwrite: true, clock: steppingClock(seed), env: {} });
  let rows = 0;
  let ticks = 0;
  try {
    const events = shape === "mixed" ? mixedEvents(seed, runId) : shape === "large-rows" ? largeRowEvents(seed, runId) : realisticEvents(seed, runId);
    const batch: RecordItem[] = [];
    for (;;) {
      batch.length = 0;
      for (let i = 0; i < BATCH_ROWS[shape]; i++) {
        const item = events.next().value as RecordItem;
        if (item.event === "tick_start") ticks++;
        batch.push(item);
      }
      journal.recordMany(batch);
      rows += batch.length;
      if (journal.mark().size >= targetBytes) break;
    }
    if (shape === "mixed") {
      const last = runCompleted(runId, ticks, journal.head());
      journal.record(last.event, last.payload);
      rows++;
    }
    return { path: journal.path, rows, bytes: journal.mark().size };
  } finally {
    journal.close();
  }
}

/** A journal python3 writes (and its metadata.json) with its own json and hashlib: `windows` with CR LF line ends, `compact` rewritten compact. */
function generatePythonJournal(sddDir: string, runId: string, targetBytes: number, seed: number, shape: PythonShape): { path: string; rows: number; bytes: number } {
  const newline = shape === "windows" ? "crlf" : "lf";
  const spacing = shape === "compact" ? "compact" : "writer";
  // the same run-id rule and containment as the project's writer, before python3 touches the disk
  const path = journalPath(sddDir, runId);
  const p = Bun.spawnSync(["python3", PYTHON_WRITER, "--sdd", sddDir, "--run", runId, "--bytes", String(targetBytes), "--seed", String(seed), "--newline", newline, "--spacing", spacing], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (p.exitCode !== 0) throw new Error(`python3 ${PYTHON_WRITER} failed (exit ${p.exitCode}): ${p.stderr.toString().slice(0, 500)}`);
  const out = JSON.parse(p.stdout.toString()) as { rows: number; bytes: number };
  return { path, rows: out.rows, bytes: out.bytes };
}

/** Paths an agent's tools touch, some non-ASCII (as dict keys Python's writer escapes them). */
const AGENT_PATHS = ["src/core/net.py", "src/core/retry.py", "docs/Résumé.md", "src/日志/handler.py", "tests/test_naïve.py", "assets/🚀.svg"];

/** One step's tool call and result: mostly an edit, now and then a search or a shell command with nested, unicode output. */
function agentStep(rand: () => number): { tool_call: PyLike; tool_result: PyLike } {
  const path = AGENT_PATHS[Math.floor(rand() * AGENT_PATHS.length)]!;
  const kind = rand();
  if (kind < 0.7) {
    return {
      tool_call: { name: "edit_file", args: { path, line: Math.floor(rand() * 900) } },
      tool_result: { ok: true, output: `applied 1 edit (${Math.floor(rand() * 40)} lines changed) ✓` },
    };
  }
  if (kind < 0.85) {
    const hits: Record<string, PyLike> = {};
    for (let h = Math.floor(rand() * 4); h >= 0; h--) hits[AGENT_PATHS[Math.floor(rand() * AGENT_PATHS.length)]!] = [Math.floor(rand() * 500), pyFloat(Math.round(rand() * 1000) / 1000)];
    return { tool_call: { name: "grep", args: { pattern: "retry\\(", paths: [path, "tests/"] } }, tool_result: { ok: true, hits } };
  }
  return {
    tool_call: { name: "bash", args: { argv: ["pytest", "-q", path], env: { LANG: "ja_JP.UTF-8" } } },
    tool_result: { ok: rand() < 0.8, exit_code: rand() < 0.8 ? 0 : 1, output: `===== ${Math.floor(rand() * 90)} passed in 1.2s =====\n"テスト" ok\ttab`, durations: { setup: pyFloat(0.01), call: pyFloat(Math.round(rand() * 1e4) / 1e3) } },
  };
}

/**
 * Append `steps` steps of a coding agent to the step journal of `agentId`
 * under `<sddDir>/runtime/journal/` (created if absent). Same seed = same
 * steps and step hashes; the writer stamps each row's `ts` with the real
 * clock (it is outside the hash), so the bytes differ in `ts` only.
 */
export function generateStepJournal(sddDir: string, agentId: string, steps: number, seed = 5): { path: string; steps: number; bytes: number; head: string } {
  const journal = StepJournal.open(sddDir, agentId);
  const rand = prng(seed);
  try {
    for (let i = 0; i < steps; i++) {
      journal.append({
        input_hash: Bun.SHA256.hash(`input-${i}`, "hex") as string,
        model: "claude-sonnet-4-5",
        prompt: `Step ${i}: refactor the retry loop in src/core/net.py; keep behaviour identical. Context ${Math.floor(rand() * 1e9)}`,
        ...agentStep(rand),
      });
    }
    return { path: journal.path, steps, bytes: Bun.file(journal.path).size, head: journal.head() };
  } finally {
    journal.close();
  }
}

if (import.meta.main) {
  const { main } = await import("./journal-gen-cli.ts");
  process.exitCode = main(process.argv.slice(2));
}
