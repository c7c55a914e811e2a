import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StepJournal } from "../../../src/steps/writer.ts";
import { bernstein } from "../../helpers/cli.ts";

/** A state tree whose outputs are far larger than a pipe's 64 KiB buffer. */
export interface BigTree {
  cwd: string;
  sdd: string;
  cleanup(): void;
}

/** JSON Lines for `journal record`: `n` events with ~250-byte payloads (2,000 → ~1.3 MB journal). */
export function eventLines(n: number, variant = ""): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const event = i % 3 === 0 ? "task_completed" : "agent_spawned";
    const summary = `${variant}${"step ".repeat(50)}${i}`;
    lines.push(JSON.stringify({ event, task_id: `T-${i}`, agent_id: `backend-${String(i).padStart(6, "0")}`, summary, cost_usd: 0.5 }));
  }
  return lines.join("\n") + "\n";
}

/**
 * Runs `r-big` and `r-big2` (2,000 events each, differing from step 1,500
 * on) recorded through the binary, run `r-huge` (16,000 events: its
 * `--as-json` document passes the 8 MiB from which a pipe is widened), and
 * agent `agent-big` (2,000 steps).
 */
export async function makeBigTree(): Promise<BigTree> {
  const cwd = mkdtempSync(join(tmpdir(), "bernstein-pipes-"));
  const sdd = join(cwd, ".sdd");
  mkdirSync(join(sdd, "runs"), { recursive: true });
  const a = eventLines(2000);
  const b = a.split("\n").slice(0, 1500).join("\n") + "\n" + eventLines(2000, "other ").split("\n").slice(1500).join("\n");
  // r-huge first: r-big2, recorded last, stays the latest run
  for (const [run, stdin] of [["r-huge", eventLines(16000, "huge ")], ["r-big", a], ["r-big2", b]] as const) {
    const r = await bernstein(["journal", "record", run], { cwd, stdin });
    if (r.code !== 0) throw new Error(`journal record ${run} failed: ${r.stderr}`);
  }
  const j = StepJournal.open(sdd, "agent-big");
  for (let i = 0; i < 2000; i++) j.append({ input_hash: `in-${i}`, model: "m1", prompt: `prompt ${"words ".repeat(30)}${i}` });
  j.close();
  return { cwd, sdd, cleanup: () => rmSync(cwd, { recursive: true, force: true }) };
}
