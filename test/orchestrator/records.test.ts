import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendAgentStep, toolCallStep, type AttemptRecord } from "../../src/orchestrator/records.ts";
import type { ToolCall } from "../../src/orchestrator/result.ts";
import { StepJournal } from "../../src/steps/writer.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const CALLS: ToolCall[] = [
  { name: "Read", input: '{"p":"a"}', status: "ok", output: "text" },
  { name: "Bash", input: '{"c":"rm"}', status: "denied", output: "no", refused: "permission_denied" },
  { name: "Write", input: '{"p":"b"}', status: null, output: null },
];

/** A step journal with `live` already appended (as live-stream.ts does), then the reaper's append. */
function reap(live: ToolCall[]): { names: string[]; statuses: unknown[] } {
  const sdd = mkdtempSync(join(tmpdir(), "bern-records-"));
  dirs.push(sdd);
  const j = StepJournal.open(sdd, "agent-1");
  const liveSteps = live.map((c) => toolCallStep(c, "T1", "m", null));
  for (const s of liveSteps) j.append(s);
  j.close();
  const record = {
    sddDir: sdd,
    agentId: "agent-1",
    adapter: "claude",
    recordedArgv: ["claude"],
    workdir: sdd,
    task: { id: "T1" },
    model: "m",
    effort: null,
    prompt: "do it",
    summary: null,
    toolCallsJournaled: liveSteps,
    result: { toolCalls: CALLS, tokens: null, exitCode: 0, outcome: "success", costUsd: 0, costSource: "unknown", sessionId: null, failedSignals: [], startedAt: 0, endedAt: 0 },
  } as unknown as AttemptRecord;
  appendAgentStep(record);
  const rows = readFileSync(join(sdd, "runtime", "journal", "agent-1", "000000.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  return { names: rows.map((r) => r.tool_call.name), statuses: rows.map((r) => ("status" in r.tool_result ? r.tool_result.status : r.tool_result.outcome)) };
}

describe("appendAgentStep after live rows", () => {
  test("the calls journaled live are not written again: the journal is what a reap-only run writes", () => {
    expect(reap(CALLS.slice(0, 2))).toEqual({ names: ["Read", "Bash", "Write", "claude"], statuses: ["ok", "denied", null, "success"] });
    expect(reap([])).toEqual({ names: ["Read", "Bash", "Write", "claude"], statuses: ["ok", "denied", null, "success"] });
  });

  test("a call whose final word differs from its live row (a denial reported only in the result) is written again", () => {
    const live = [CALLS[0]!, { ...CALLS[1]!, status: "error", refused: undefined }];
    expect(reap(live)).toEqual({ names: ["Read", "Bash", "Bash", "Write", "claude"], statuses: ["ok", "error", "denied", null, "success"] });
  });
});
