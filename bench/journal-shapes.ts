/**
 * Event streams of the bench's other journal shapes (bench/journal-gen.ts
 * writes them with the project's writer), so no verb can be tuned to the
 * one `bench` shape:
 *
 *   - `mixed`: every event kind of spec run-journal §9 (and the ones seen in
 *     receipts), in the orchestrator's key order, with nested payloads
 *     (objects in lists in objects), non-ASCII text (accents, CJK, emoji,
 *     control characters, quotes and backslashes), floats whose Python repr
 *     is easy to get wrong (0.1, 1e-07, 1e+22, 123456789.125, 5e-324, -0.0
 *     ...), multi-KB tool output and failed_signals lists;
 *   - `large-rows`: rows of about 1 MB each (escaped and non-ASCII text,
 *     nested lists).
 *
 * Each stream is endless and deterministic from its seed.
 */
import type { RecordItem } from "../src/journal/writer.ts";
import { pyFloat, pyInt } from "../src/pyjson/types.ts";
import { mulberry32 } from "../tools/fuzz/rng.ts";

/** Floats whose Python repr a writer or verifier may spell wrong. */
export const HARD_FLOATS = [
  0.1, 1e-7, 1e22, 123456789.125, 0.30000000000000004, 1e16, 1e-5, 5e-324, 1.7976931348623157e308, -0.0, 2.5, 1e21, 2 ** 53,
  0.0001, 123.456, 1 / 3, 100.0, 4.35,
] as const;

const WORDS = [
  "retry", "back-off", "Résumé", "naïve", "façade", "Größe", "задача", "проверка", "修复", "并发", "日志", "テスト", "실패",
  "🚀", "✓", "👩‍💻", "🧪", "\"quoted\"", "back\\slash", "tab\there", "line\nbreak", "nul\u0000byte", "bell\u0007", "del\u007f",
  "ümlaut", "€", "½", "Ω", "\u2028sep", "zero\u200bwidth", "path/to/file.py", "<html>&amp;</html>",
];

export const MODELS = ["claude-sonnet-4-5", "claude-opus-4-1", "gpt-5-codex", "gemini-2.5-pro", "qwen3-coder-480b"];
export const PROVIDERS = ["anthropic", "openai", "google", "openrouter"];
export const ROLES = ["backend", "frontend", "qa", "security", "docs", "architect"];
export const TOOLS = ["read_file", "edit_file", "run_tests", "grep", "git_diff", "bash"];
const SIGNALS = ["tests", "lint", "typecheck", "security_scan", "coverage", "review"];
const FILES = [
  "src/core/orchestrator.py",
  "src/core/replay/journal.py",
  "tests/unit/test_event_journal.py",
  "docs/ARCHITECTURE.md",
  "web/src/components/RunTable.tsx",
  "src/i18n/messages_zh.po",
  "src/adapters/claude.py",
];

/** Paths a run keys maps by, some non-ASCII. */
const KEYED_PATHS = ["docs/Résumé.md", "src/日志/handler.py", "assets/🚀.svg", "src/z_last.py", "tests/test_naïve.py"];

export function hex(rand: () => number, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += "0123456789abcdef"[Math.floor(rand() * 16)];
  return s;
}

export function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function words(rand: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(rand, WORDS));
  return out.join(" ");
}

/** Multi-line tool output of about `bytes` characters: test logs with unicode, tabs, quotes, ANSI colour codes. */
export function toolOutput(rand: () => number, bytes: number): string {
  const lines: string[] = [];
  let n = 0;
  let i = 0;
  while (n < bytes) {
    const line =
      rand() < 0.15
        ? `\u001b[31mFAILED\u001b[0m tests/unit/test_${pick(rand, ["journal", "replay", "diff"])}.py::test_${i} - AssertionError: ${words(rand, 4)}`
        : `${String(i).padStart(5, " ")}\t${pick(rand, FILES)}:${Math.floor(rand() * 900)}\t${words(rand, 1 + Math.floor(rand() * 6))}`;
    lines.push(line);
    n += line.length + 1;
    i++;
  }
  return lines.join("\n");
}

/** An endless, realistic mix of every orchestration event kind (spec §9), keys in the orchestrator's order. */
export function* mixedEvents(seed: number, runId: string): Generator<RecordItem> {
  const rand = mulberry32(seed);
  const hard = () => pyFloat(pick(rand, HARD_FLOATS));
  let spent = 0;
  let tick = 0;
  let agentSeq = 0;
  let taskSeq = 0;
  const workflowHash = hex(rand, 64);
  yield {
    event: "run_started",
    payload: {
      run_id: runId,
      max_agents: 8,
      budget_usd: pyFloat(12.5),
      git_sha: hex(rand, 40),
      git_branch: "feature/ünïcode-分支",
      config_hash: hex(rand, 64),
      workflow_name: "governed — 审查 ✓",
      workflow_hash: workflowHash,
    },
  };
  yield { event: "loaded_extension_set", payload: { extensions: [{ name: "bernstein-attest", version: "0.4.1", hooks: ["pre_spawn", "post_tick"] }, { name: "cost-guard", version: "1.0.0", hooks: [] }] } };
  yield { event: "provider_state_capability", payload: { adapter: "claude_code", capability: "observed" } };
  yield { event: "provider_state_capability", payload: { adapter: "codex", capability: "declared-blind" } };
  yield {
    event: "wal_recovery",
    payload: {
      uncommitted_count: 2,
      orphaned_count: 0,
      retried_count: 1,
      crashed_spawn_count: 0,
      crashed_recovered: true,
      preserved_worktrees: [".sdd/worktrees/agent-0001", ".sdd/worktrees/agent-0002"],
      run_ids: [runId, "run-prev-ü"],
      closed_run_ids: [],
    },
  };
  let phase = 0;
  const PHASES = ["plan", "implement", "verify", "release"];
  for (;;) {
    tick++;
    yield { event: "tick_start", payload: { tick } };
    if (tick % 40 === 1) {
      const nodes = [];
      const count = 3 + Math.floor(rand() * 6);
      for (let n = 0; n < count; n++) {
        nodes.push({
          id: `T-${taskSeq + n + 1}`,
          role: pick(rand, ROLES),
          title: words(rand, 3 + Math.floor(rand() * 5)),
          depends_on: n === 0 ? [] : [`T-${taskSeq + n}`],
        });
      }
      yield { event: "plan.graph.full", payload: { goal: `Ship ${words(rand, 4)}`, nodes, digest: hex(rand, 64), rev: Math.floor(tick / 40) + 1, task_count: count } };
    } else if (tick % 10 === 1) {
      yield { event: "plan.graph", payload: { digest: hex(rand, 64), rev: Math.floor(tick / 10) + 1, task_count: 40 + (tick % 17) } };
    }
    const agentId = `agent-${(++agentSeq).toString(16).padStart(8, "0")}`;
    const model = pick(rand, MODELS);
    const provider = pick(rand, PROVIDERS);
    const taskIds = [`T-${++taskSeq}`, ...(rand() < 0.35 ? [`T-${++taskSeq}`] : [])];
    yield {
      event: "agent_spawned",
      payload: {
        agent_id: agentId,
        role: pick(rand, ROLES),
        model,
        provider,
        task_ids: taskIds,
        agent_source: pick(rand, ["pool", "fresh", "resumed"]),
        endpoint_adapter_name: pick(rand, ["claude_code", "codex", "gemini_cli"]),
        endpoint_model: model,
        endpoint_base_url: "https://api.example.com/v1",
        endpoint_profile_name: pick(rand, ["default", "cheap", "ünicode-profile"]),
      },
    };
    yield {
      event: "skills.injected",
      payload: { agent_id: agentId, task_ids: taskIds, entries: [{ name: "tdd", sha256: hex(rand, 64), tags: ["testing", "🧪"] }] },
    };
    if (rand() < 0.6) {
      yield {
        event: "context.files_attached",
        payload: {
          agent_id: agentId,
          task_ids: taskIds,
          entries: [pick(rand, FILES), pick(rand, FILES)].map((path) => ({ path, sha256: hex(rand, 16), bytes: Math.floor(rand() * 90000), lines: { first: 1, last: Math.floor(rand() * 2000) } })),
        },
      };
    }
    for (const taskId of taskIds) {
      if (rand() < 0.15) {
        yield {
          event: "dispatch_knob_selection",
          payload: {
            task_id: taskId,
            knob_run_id: hex(rand, 12),
            selection_hash: hex(rand, 64),
            effort: pick(rand, ["low", "medium", "high"]),
            lane: pick(rand, ["fast", "standard"]),
            cache_strategy: pick(rand, ["none", "prefix", "full"]),
            rate_multiplier: pyFloat(Math.round(rand() * 3e6) / 1e6),
            resolved: rand() < 0.9,
            reason: words(rand, 5),
          },
        };
      }
      if (rand() < 0.1) yield { event: "intent.capsule_bound", payload: { task_id: taskId, capsule_digest: hex(rand, 64), scope: { files: [pick(rand, FILES)], deny: ["secrets/**"] } } };
      yield { event: "task_claimed", payload: { task_id: taskId, agent_id: agentId, model } };
      const calls = 1 + Math.floor(rand() * 5);
      for (let c = 0; c < calls; c++) {
        const input = Math.floor(rand() * 40000);
        const big = rand() < 0.12;
        yield {
          event: "tool_call",
          payload: {
            agent_id: agentId,
            task_id: taskId,
            tool: pick(rand, TOOLS),
            args: { path: pick(rand, FILES), line: Math.floor(rand() * 900), flags: ["-n", "--color=never"], env: { LANG: "zh_CN.UTF-8", PYTHONHASHSEED: "0" } },
            result: {
              ok: rand() < 0.9,
              exit_code: rand() < 0.9 ? 0 : pick(rand, [1, 2, 124, -9]),
              output: big ? toolOutput(rand, 2000 + Math.floor(rand() * 14000)) : words(rand, 3 + Math.floor(rand() * 10)),
              hunks: [{ start: Math.floor(rand() * 400), lines: [{ op: "+", text: words(rand, 3) }, { op: "-", text: words(rand, 2) }] }],
            },
            tokens: { input, output: Math.floor(input / 7), cache: { read: Math.floor(input / 2), write: 0 } },
            duration_s: rand() < 0.2 ? hard() : pyFloat(Math.round(rand() * 90000) / 1000),
          },
        };
      }
      spent += rand() * 0.35;
      const outcome = rand();
      if (outcome < 0.1) {
        yield { event: "task_verification_failed", payload: { task_id: taskId, failed_signals: SIGNALS.filter(() => rand() < 0.4).concat(["tests"]) } };
        yield { event: "task_retried", payload: { task_id: taskId } };
      } else if (outcome < 0.14) {
        const batchId = `batch_${hex(rand, 24)}`;
        const sessionId = `sess-${hex(rand, 8)}`;
        yield { event: "batch_job_submitted", payload: { task_id: taskId, batch_id: batchId, session_id: sessionId, provider, model } };
        if (rand() < 0.7) yield { event: "batch_job_applied", payload: { task_id: taskId, batch_id: batchId, provider, model, cost_usd: hard() } };
        else yield { event: "batch_job_failed", payload: { task_id: taskId, session_id: sessionId, provider, reason: `HTTP 529 — ${words(rand, 3)}` } };
      }
      if (rand() < 0.05) yield { event: "artifact_posted", payload: { task_id: taskId, kind: "patch", uri: `file:///tmp/${hex(rand, 8)}.diff`, bytes: pyInt(BigInt(Math.floor(rand() * 1e6))) } };
      yield {
        event: "task_completed",
        payload: {
          task_id: taskId,
          agent_id: agentId,
          cost_usd: pyFloat(Math.round(spent * 10000) / 10000),
          summary: words(rand, 4 + Math.floor(rand() * 8)),
          files_changed: [pick(rand, FILES), pick(rand, FILES)],
          // a map keyed by path: keys Python's writer escapes (they sort by code points, not bytes)
          lines_by_file: Object.fromEntries([pick(rand, FILES), pick(rand, KEYED_PATHS)].map((f) => [f, Math.floor(rand() * 400)])),
          metrics: { duration_s: hard(), tokens_per_s: pyFloat(rand() * 400), ratios: [hard(), hard(), pyFloat(0.1)] },
        },
      };
    }
    if (rand() < 0.2) {
      yield {
        event: "provider_state_mutation",
        payload: {
          mutation_kind: pick(rand, ["compact_boundary", "context_compaction", "unknown"]),
          before_digest: hex(rand, 64),
          after_digest: hex(rand, 64),
          step_index: Math.floor(rand() * 30),
          content_address: hex(rand, 64),
          flagged: false,
          agent_id: agentId,
        },
      };
    }
    if (rand() < 0.03) yield { event: "provider_state_capture_failed", payload: { agent_id: agentId, reason: `transcript unreadable: ${words(rand, 3)}` } };
    yield { event: "agent_reaped", payload: { agent_id: agentId } };
    if (tick % 97 === 0) {
      yield { event: "workflow_approval_granted", payload: { phase: PHASES[phase % 4]!, reason: `approved by 审查员 ✓ (${words(rand, 2)})` } };
      yield {
        event: "workflow_phase_advanced",
        payload: { workflow_hash: workflowHash, from_phase: PHASES[phase % 4]!, to_phase: PHASES[(phase + 1) % 4]!, reason: words(rand, 4), tasks_completed: taskSeq },
      };
      phase++;
    }
  }
}

/** The closing row of a `mixed` journal: `fingerprint` is the head before it (spec §9). */
export function runCompleted(runId: string, ticks: number, head: string): RecordItem {
  return { event: "run_completed", payload: { run_id: runId, ticks, fingerprint: head, outcome: "completed" } };
}

/** About 1 MB of row from `tool_call` payloads: one long escaped/non-ASCII text and nested lists of chunks. */
export function* largeRowEvents(seed: number, runId: string): Generator<RecordItem> {
  const rand = mulberry32(seed);
  // A pool of multi-KB texts; each row strings together ~80 of them, so
  // rows differ (and hash differently) without rebuilding 1 MB from words.
  const pool: string[] = [];
  for (let i = 0; i < 64; i++) pool.push(toolOutput(rand, 4000));
  yield { event: "run_started", payload: { run_id: runId, max_agents: 1, budget_usd: pyFloat(1.0), git_sha: hex(rand, 40), git_branch: "main", config_hash: hex(rand, 64) } };
  for (let row = 0; ; row++) {
    const parts: string[] = [];
    for (let i = 0; i < 170; i++) parts.push(pool[Math.floor(rand() * pool.length)]!);
    const chunks: { seq: number; lines: string[] }[] = [];
    for (let i = 0; i < 40; i++) chunks.push({ seq: i, lines: pool[Math.floor(rand() * pool.length)]!.split("\n").slice(0, 12) });
    yield {
      event: "tool_call",
      payload: {
        agent_id: `agent-${(row % 7).toString(16).padStart(8, "0")}`,
        task_id: `T-${row}`,
        tool: "run_tests",
        result: { ok: rand() < 0.5, output: parts.join("\n"), chunks },
        duration_s: pyFloat(pick(rand, HARD_FLOATS)),
      },
    };
  }
}
