import { describe, expect, test } from "bun:test";
import { parseClaudeOutput } from "../../src/orchestrator/adapters/claude.ts";
import { parseCodexOutput } from "../../src/orchestrator/adapters/codex.ts";
import { LiveAgent, LiveStream, type LiveProgress } from "../../src/orchestrator/live-stream.ts";
import type { AgentResult, ToolCall } from "../../src/orchestrator/result.ts";

const line = (o: unknown): string => JSON.stringify(o) + "\n";

/** claude: two parallel calls whose results arrive in the opposite order, a third later, then the result. */
const CLAUDE =
  line({ type: "system", subtype: "init", session_id: "s1", model: "m" }) +
  line({ type: "assistant", message: { id: "a1", model: "m", usage: { input_tokens: 10, output_tokens: 2 }, content: [{ type: "tool_use", id: "t1", name: "Read", input: { p: "ä.txt" } }, { type: "tool_use", id: "t2", name: "Grep", input: { q: "x" } }] } }) +
  line({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t2", content: "found" }] } }) +
  line({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "text", is_error: true }] } }) +
  line({ type: "assistant", message: { id: "a2", model: "m", usage: { input_tokens: 20, output_tokens: 3 }, content: [{ type: "tool_use", id: "t3", name: "Write", input: { p: "out" } }] } }) +
  line({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t3", content: "ok" }] } }) +
  line({ type: "result", result: "RESULT: done", is_error: false, total_cost_usd: 0.5, usage: { input_tokens: 30, output_tokens: 5 }, session_id: "s1" });

function feed(text: string, cut: (bytes: Uint8Array) => Uint8Array[], parse: (s: string) => AgentResult) {
  const batches: ToolCall[][] = [];
  const progress: LiveProgress[] = [];
  const s = new LiveStream({ parse, model: null, prices: {}, minIntervalMs: 0, onToolCalls: (c) => batches.push(c.map((x) => ({ ...x }))), onProgress: (p) => progress.push(p) });
  for (const chunk of cut(new TextEncoder().encode(text))) s.push(chunk);
  return { batches, progress, finished: s.toolCallsFinished };
}

const byteByByte = (b: Uint8Array) => [...b].map((x) => Uint8Array.of(x));
const wholeLines = (b: Uint8Array) => [b];

describe("LiveStream: the adapter's parser driven line by line", () => {
  for (const [name, cut] of [["byte by byte (lines and UTF-8 split anywhere)", byteByByte], ["in one piece", wholeLines]] as const) {
    test(`claude, ${name}: every finished call reported once, in call order, as the final parse has it`, () => {
      const { batches, progress, finished } = feed(CLAUDE, cut, parseClaudeOutput);
      const final = parseClaudeOutput(CLAUDE);
      expect(batches.flat()).toEqual(final.toolCalls);
      expect(finished).toBe(3);
      // t2's result came first, but t1 goes first: rows follow the calls' order
      if (cut === byteByByte) expect(batches.map((b) => b.map((c) => c.name))).toEqual([["Read", "Grep"], ["Write"]]);
      const last = progress.at(-1)!;
      expect(last).toMatchObject({ tool_calls: 3, last_tool: { name: "Write", status: "ok" }, cost_usd: 0.5, cost_source: "cli", session_id: "s1" });
    });
  }

  test("progress before the result: tokens summed from the messages so far, cost unknown until claude reports it", () => {
    const partial = CLAUDE.split("\n").slice(0, 3).join("\n") + "\n";
    const { progress } = feed(partial, byteByByte, parseClaudeOutput);
    expect(progress.at(-1)).toMatchObject({ tool_calls: 2, last_tool: { name: "Grep", status: "ok" }, tokens: { input: 10, output: 2 }, cost_usd: null, cost_source: "unknown" });
  });

  test("a line without its line break is not read until the break arrives", () => {
    const { batches } = feed(CLAUDE.slice(0, CLAUDE.indexOf('"t2", content') + 5), wholeLines, parseClaudeOutput);
    expect(batches).toEqual([]);
  });

  test("codex: a command is reported when its item completes, priced from models.prices", () => {
    const text =
      line({ type: "thread.started", thread_id: "th" }) +
      line({ type: "item.started", item: { id: "i1", type: "command_execution", command: "ls" } }) +
      line({ type: "item.completed", item: { id: "i1", type: "command_execution", command: "ls", exit_code: 0, aggregated_output: "a" } }) +
      line({ type: "turn.completed", usage: { input_tokens: 1_000_000, cached_input_tokens: 0, output_tokens: 0 } });
    const batches: ToolCall[][] = [];
    const progress: LiveProgress[] = [];
    const s = new LiveStream({ parse: parseCodexOutput, minIntervalMs: 0, model: "g", prices: { g: { input_usd_per_mtok: 2, output_usd_per_mtok: 8 } }, onToolCalls: (c) => batches.push(c), onProgress: (p) => progress.push(p) });
    const lines = text.split("\n").filter(Boolean);
    s.push(new TextEncoder().encode(lines[0] + "\n" + lines[1] + "\n"));
    expect(batches).toEqual([]);
    expect(progress.at(-1)).toMatchObject({ tool_calls: 1, last_tool: { name: "shell", status: null } });
    s.push(new TextEncoder().encode(lines[2] + "\n" + lines[3] + "\n"));
    expect(batches.flat().map((c) => [c.name, c.status])).toEqual([["shell", "ok"]]);
    expect(progress.at(-1)).toMatchObject({ cost_usd: 2, cost_source: "price_table", session_id: "th" });
  });

  test("throttled (the default): a line that arrives right after a parse is read by a timer, not lost; after close nothing is reported", async () => {
    const lines = CLAUDE.split("\n").filter(Boolean);
    const names: string[] = [];
    let release: () => void = () => {};
    const third = new Promise<void>((r) => (release = r));
    const s = new LiveStream({
      parse: parseClaudeOutput,
      model: null,
      prices: {},
      onToolCalls: (c) => {
        names.push(...c.map((x) => x.name));
        if (names.includes("Write")) release();
      },
      onProgress: () => {},
    });
    s.push(new TextEncoder().encode(lines.slice(0, 4).join("\n") + "\n"));
    expect(names).toEqual(["Read", "Grep"]);
    s.push(new TextEncoder().encode(lines.slice(4, 6).join("\n") + "\n"));
    await third;
    expect(names).toEqual(["Read", "Grep", "Write"]);
    expect(s.toolCallsFinished).toBe(3);
    // closed: a later stretch is not read
    const closed = new LiveStream({ parse: parseClaudeOutput, model: null, prices: {}, onToolCalls: (c) => names.push(...c.map((x) => x.name)), onProgress: () => {} });
    closed.close();
    closed.push(new TextEncoder().encode(CLAUDE));
    expect(closed.toolCallsFinished).toBe(0);
  });
});

/**
 * agent-1's attempt at t1 in a fresh sdd, its three tool calls journaled
 * live in one batch (every line but the result); `during` ends the
 * attempt. After it the step journal opens for the next writer with the
 * three rows. Returns the attempt's warnings.
 */
async function threeCallsLive(during: (live: LiveAgent, sdd: string) => void): Promise<string[]> {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { StepJournal } = await import("../../src/steps/writer.ts");
  const sdd = mkdtempSync(join(tmpdir(), "bern-live-agent-"));
  try {
    const warnings: string[] = [];
    const live = new LiveAgent({
      sddDir: sdd,
      runId: "r1",
      agentId: "agent-1",
      taskId: "t1",
      taskTitle: "a task",
      role: "backend",
      model: "m",
      effort: null,
      adapter: "claude",
      parse: parseClaudeOutput,
      prices: {},
      warn: (l) => warnings.push(l),
    });
    live.onStdout(new TextEncoder().encode(CLAUDE.slice(0, CLAUDE.lastIndexOf('{"type":"result"'))));
    expect(live.toolCallsJournaled).toHaveLength(3);
    during(live, sdd);
    const j = StepJournal.open(sdd, "agent-1");
    try {
      expect(j.nextSeq()).toBe(3);
    } finally {
      j.close();
    }
    return warnings;
  } finally {
    rmSync(sdd, { recursive: true, force: true });
  }
}

describe("LiveAgent: an attempt's tool calls in its step journal as they finish", () => {
  test("the journal is opened once and held (its writer's lock) from the first batch until close, then let go with every row in it", async () => {
    const { StepJournal } = await import("../../src/steps/writer.ts");
    const warnings = await threeCallsLive((live, sdd) => {
      // held: another writer is refused while the attempt runs
      expect(() => StepJournal.open(sdd, "agent-1")).toThrow(/open in another writer/);
      live.close();
    });
    expect(warnings).toEqual([]);
  });

  test("a step journal whose close fails is warned of, not thrown into the reaper, and let go with its rows", async () => {
    const { closeSync } = await import("node:fs");
    const warnings = await threeCallsLive((live) => {
      // the descriptor goes away under the journal (as an EIO on close would fail it)
      closeSync((live as unknown as { steps: { fd: number } }).steps.fd);
      expect(() => live.close()).not.toThrow();
    });
    // let go all the same (above: the next writer opened it, with the rows each batch synced), and said so
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("could not close agent-1's step journal");
  });
});
