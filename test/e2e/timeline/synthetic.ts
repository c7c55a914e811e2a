/**
 * Run journals written directly (chain computed here, no writer lock, no
 * fsync per row), in the orchestrator's vocabulary: `run_started`, ticks,
 * `agent_spawned` / `task_claimed` / outcome / `agent_reaped` per attempt,
 * `run_completed`. Big journals in seconds, and hostile ones with any text
 * in any field.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { eventHash, payloadHash } from "../../../src/journal/hash.ts";
import { dumps } from "../../../src/pyjson/encode.ts";
import { pyFloat, type PyLike } from "../../../src/pyjson/types.ts";

export type Row = [event: string, payload: Record<string, PyLike>];

export class JournalFile {
  private readonly fd: number;
  private prev = "";
  private index = 0;
  private buf = "";
  readonly path: string;

  constructor(sddDir: string, runId: string, private ts = 1764590000.0) {
    const dir = join(sddDir, "runs", runId);
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, "journal.jsonl");
    this.fd = openSync(this.path, "w");
  }

  /** Append a row `dt` seconds after the previous one. */
  add(event: string, payload: Record<string, PyLike>, dt = 0.05): void {
    this.ts += dt;
    const ph = payloadHash(event, payload);
    const eh = eventHash(this.prev, event, ph, this.index);
    const row = { ts: pyFloat(Math.round(this.ts * 1000) / 1000), elapsed_s: pyFloat(0.0), index: this.index, event, prev_hash: this.prev, payload_hash: ph, event_hash: eh, ...payload };
    this.buf += dumps(row) + "\n";
    this.prev = eh;
    this.index++;
    if (this.buf.length > 1 << 20) this.flush();
  }

  get count(): number {
    return this.index;
  }

  get head(): string {
    return this.prev;
  }

  private flush(): void {
    writeSync(this.fd, this.buf);
    this.buf = "";
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

const MODELS = ["opus", "sonnet", "haiku"];
const ROLES = ["backend", "qa", "docs", "architect"];

/**
 * A run of about `events` events: attempts on four agents' worth of
 * concurrency, every seventh failing its gate and retried, every 50th
 * requeued. Deterministic.
 */
export function writeBigRun(sddDir: string, runId: string, events: number): { path: string; count: number; attempts: number } {
  const j = new JournalFile(sddDir, runId);
  j.add("run_started", { run_id: runId, max_agents: 4, budget_usd: null, git_sha: "0123456789abcdef0123456789abcdef01234567", git_branch: "main", config_hash: "" }, 0);
  let attempts = 0;
  let cost = 0;
  let tick = 0;
  while (j.count < events - 8) {
    const n = attempts++;
    const role = ROLES[n % ROLES.length]!;
    const agent = `${role}-${(0x10000000 + n).toString(16)}`;
    const task = `T-${Math.floor(n / 1.2)}`;
    const model = MODELS[n % MODELS.length]!;
    j.add("tick_start", { tick: ++tick }, 0.2);
    j.add("agent_spawned", { agent_id: agent, role, model, provider: "script", task_ids: [task], agent_source: "adapter" }, 0.001);
    j.add("task_claimed", { task_id: task, agent_id: agent, model }, 0.001);
    if (n % 7 === 3) {
      j.add("task_verification_failed", { task_id: task, failed_signals: ["gate:tests"] }, 1.5);
      j.add("task_retried", { task_id: task }, 0.001);
    } else if (n % 50 === 49) {
      j.add("task_requeued", { task_id: task, agent_id: agent, reason: "stopped" }, 0.8);
    } else {
      cost += 0.0042;
      j.add("task_completed", { task_id: task, agent_id: agent, cost_usd: pyFloat(Math.round(cost * 10000) / 10000) }, 1.2);
    }
    j.add("agent_reaped", { agent_id: agent }, 0.001);
  }
  j.add("run_completed", { run_id: runId, ticks: tick, fingerprint: j.head, outcome: "completed" }, 0.01);
  j.close();
  return { path: j.path, count: j.count, attempts };
}

/** Text that would run, break out of the page's markup or reorder what is shown, if it reached the DOM as markup. */
export const HOSTILE =
  '<script>window.__pwned=1</script></script><script>window.__pwned=2</script>' +
  '</svg><img src=x onerror="window.__pwned=3"><svg onload="window.__pwned=4">' +
  '"><a href="javascript:window.__pwned=5">x</a> javascript:alert(6) <!-- ]]> &lt;b&gt; ' +
  "\u202Eevil\u202C \u2066iso\u2069 \u200Fx\u200E \u061C";

/** A valid run whose every field (ids, models, roles, signals, reasons, git facts, an event name, a payload key) is hostile. */
export function writeHostileRun(sddDir: string, runId: string): { path: string; agent: string; task: string } {
  const j = new JournalFile(sddDir, runId);
  const agent = `${HOSTILE}agent`;
  const task = `${HOSTILE}task`;
  j.add("run_started", { run_id: HOSTILE, max_agents: 1, budget_usd: null, git_sha: HOSTILE, git_branch: HOSTILE, config_hash: HOSTILE }, 0);
  j.add("tick_start", { tick: 1 });
  j.add("agent_spawned", { agent_id: agent, role: HOSTILE, model: HOSTILE, provider: HOSTILE, task_ids: [task], agent_source: HOSTILE });
  j.add("task_claimed", { task_id: task, agent_id: agent, model: HOSTILE });
  j.add("task_verification_failed", { task_id: task, failed_signals: [HOSTILE, "javascript:alert(7)"] }, 1);
  j.add("task_failed", { task_id: task, agent_id: agent, reason: HOSTILE });
  j.add("agent_reaped", { agent_id: agent });
  j.add(HOSTILE, { [HOSTILE]: HOSTILE, url: "javascript:alert(8)", task_id: task, agent_id: agent, cost_usd: HOSTILE });
  j.add("run_completed", { run_id: HOSTILE, ticks: 1, fingerprint: j.head, outcome: HOSTILE });
  j.close();
  return { path: j.path, agent, task };
}
