/**
 * Refused tool calls as each real CLI reports them (lines copied from the
 * pinned CLIs' output under a read-only permission mode, trimmed): the call
 * reaches the tool-call list with status `denied` and why.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseClaudeOutput } from "../../../src/orchestrator/adapters/claude.ts";
import { codexRolloutRefusals, findCodexRollout, parseCodexOutput, sandboxRefused, withRolloutRefusals } from "../../../src/orchestrator/adapters/codex.ts";
import { geminiRefusal, parseGeminiOutput } from "../../../src/orchestrator/adapters/gemini.ts";

const lines = (...xs: unknown[]): string => xs.map((x) => JSON.stringify(x)).join("\n") + "\n";
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("claude: permission denials", () => {
  const write = { type: "assistant", message: { id: "m1", model: "m", content: [{ type: "tool_use", id: "tu1", name: "Write", input: { file_path: "w.txt", content: "hi\n" } }] } };
  const denial = { type: "system", subtype: "permission_denied", tool_name: "Write", tool_use_id: "tu1", message: "Claude requested permissions to write to /w/w.txt, but you haven't granted it yet." };
  const errorResult = {
    type: "user",
    message: { role: "user", content: [{ type: "tool_result", content: "Claude requested permissions to write to /w/w.txt, but you haven't granted it yet.", is_error: true, tool_use_id: "tu1" }] },
    tool_result_meta: [{ id: "tu1", non_execution_kind: "user-rejected", permission_decision: { decision: "reject", source: "config" } }],
  };
  const result = (denials: unknown[]) => ({ type: "result", subtype: "success", is_error: false, result: "I wrote w.txt.\nRESULT: wrote w.txt", total_cost_usd: 0.02, permission_denials: denials });

  test("the system/permission_denied event, then the error result: the call is denied and the attempt fails permission_denied", () => {
    const r = parseClaudeOutput(lines(write, denial, errorResult, result([{ tool_name: "Write", tool_use_id: "tu1", tool_input: {} }])));
    expect(r.toolCalls).toEqual([expect.objectContaining({ name: "Write", status: "denied", refused: "permission_denied", output: expect.stringContaining("haven't granted it") })]);
    expect(r.failure).toBe("permission_denied");
    expect(r.failureDetail).not.toContain("wrote w.txt");
  });

  test("older streams: only the result's permission_denials (or the result's metadata) say it", () => {
    const plain = { ...errorResult, tool_result_meta: undefined };
    const r = parseClaudeOutput(lines(write, plain, result([{ tool_name: "Write", tool_use_id: "tu1", tool_input: {} }])));
    expect(r.toolCalls[0]).toMatchObject({ status: "denied", refused: "permission_denied" });
    const meta = parseClaudeOutput(lines(write, errorResult, result([])));
    expect(meta.toolCalls[0]).toMatchObject({ status: "denied", refused: "permission_denied" });
  });

  test("an ordinary tool error stays an error", () => {
    const bash = { type: "assistant", message: { id: "m2", content: [{ type: "tool_use", id: "tu2", name: "Bash", input: { command: "false" } }] } };
    const failedRun = { type: "user", message: { content: [{ type: "tool_result", tool_use_id: "tu2", is_error: true, content: "Exit code 1" }] } };
    const r = parseClaudeOutput(lines(bash, failedRun, result([])));
    expect(r.toolCalls[0]).toMatchObject({ status: "error" });
    expect(r.toolCalls[0]!.refused).toBeUndefined();
    expect(r.failure).toBeNull();
  });
});

describe("codex: sandbox refusals", () => {
  test("a declined command or one the sandbox refused (EROFS) is denied; another failing command is an error", () => {
    const item = (id: string, extra: object) => ({ type: "item.completed", item: { id, type: "command_execution", command: "/bin/bash -lc x", aggregated_output: "", ...extra } });
    const r = parseCodexOutput(
      lines(
        { type: "thread.started", thread_id: "t1" },
        item("i1", { exit_code: 1, status: "failed", aggregated_output: "/bin/bash: line 1: w.txt: Read-only file system\n" }),
        item("i2", { exit_code: null, status: "declined" }),
        item("i3", { exit_code: 2, status: "failed", aggregated_output: "grep: no match" }),
        { type: "item.completed", item: { id: "i4", type: "agent_message", text: "RESULT: wrote w.txt" } },
        { type: "turn.completed", usage: { input_tokens: 1, output_tokens: 1 } },
      ),
    );
    expect(r.toolCalls.map((c) => [c.status, c.refused ?? null])).toEqual([
      ["denied", "permission_denied"],
      ["denied", "permission_denied"],
      ["error (exit 2)", null],
    ]);
    expect(sandboxRefused("touch: cannot touch 'x': Read-only file system")).toBe(true);
    expect(sandboxRefused("Permission denied (publickey)")).toBe(false);
  });

  // `codex exec --json` under --sandbox read-only prints no item for the refused command; its rollout has it.
  const rollout = lines(
    { type: "session_meta", payload: { id: "t9" } },
    { type: "response_item", payload: { type: "function_call", name: "exec_command", arguments: JSON.stringify({ cmd: "printf '%s' 'hi' > 'w.txt'" }), call_id: "c1" } },
    { type: "response_item", payload: { type: "function_call_output", call_id: "c1", output: "Chunk ID: f2\nWall time: 0.0000 seconds\nProcess exited with code 1\nOutput:\n/bin/bash: line 1: w.txt: Read-only file system\n" } },
    { type: "response_item", payload: { type: "function_call", name: "exec_command", arguments: JSON.stringify({ cmd: "ls" }), call_id: "c2" } },
    { type: "response_item", payload: { type: "function_call_output", call_id: "c2", output: "Process exited with code 0\nOutput:\nw.txt\n" } },
  );

  test("the rollout's refused calls: named shell with the command as input", () => {
    expect(codexRolloutRefusals(rollout)).toEqual([
      expect.objectContaining({ name: "shell", input: "printf '%s' 'hi' > 'w.txt'", status: "denied", refused: "permission_denied" }),
    ]);
  });

  test("withRolloutRefusals finds the thread's rollout under CODEX_HOME and adds what the stream left out", () => {
    const home = mkdtempSync(join(tmpdir(), "bern-codex-home-"));
    dirs.push(home);
    const day = join(home, "sessions", "2026", "12", "02");
    mkdirSync(day, { recursive: true });
    writeFileSync(join(day, "rollout-2026-12-02T01-12-19-t9.jsonl"), rollout);
    writeFileSync(join(day, "rollout-2026-12-02T01-12-19-other.jsonl"), "");
    expect(findCodexRollout(home, "t9")).toBe(join(day, "rollout-2026-12-02T01-12-19-t9.jsonl"));
    expect(findCodexRollout(home, "nope")).toBeNull();
    const stream = parseCodexOutput(
      lines({ type: "thread.started", thread_id: "t9" }, { type: "item.completed", item: { id: "i1", type: "agent_message", text: "RESULT: wrote w.txt" } }, { type: "turn.completed", usage: {} }),
    );
    expect(stream.toolCalls).toEqual([]);
    const done = withRolloutRefusals(stream, { CODEX_HOME: home });
    expect(done.toolCalls.map((c) => [c.name, c.status])).toEqual([["shell", "denied"]]);
    // the final answer stays after the calls in the transcript
    expect(stream.messages).toEqual([{ afterTools: 0, text: "RESULT: wrote w.txt" }]);
    expect(done.messages).toEqual([{ afterTools: 1, text: "RESULT: wrote w.txt" }]);
    // ~/.codex when CODEX_HOME is not set; no rollout, no change
    expect(withRolloutRefusals(stream, { HOME: join(home, "nobody") }).toolCalls).toEqual([]);
  });
});

describe("gemini: tools it does not offer", () => {
  test("an unregistered write tool is no_write_tool; a policy refusal is permission_denied; other errors stay errors", () => {
    const use = (id: string, name: string) => ({ type: "tool_use", tool_name: name, tool_id: id, parameters: { file_path: "w.txt" } });
    const res = (id: string, type: string) => ({ type: "tool_result", tool_id: id, status: "error", output: `x`, error: { type, message: `Tool "${id}" not found.` } });
    const r = parseGeminiOutput(
      lines(
        { type: "init", session_id: "g1", model: "m" },
        use("a", "write_file"),
        res("a", "tool_not_registered"),
        use("b", "read_manyy"),
        res("b", "tool_not_registered"),
        use("c", "read_file"),
        res("c", "file_not_found"),
        { type: "message", role: "assistant", content: "RESULT: wrote w.txt", delta: true },
        { type: "result", status: "success", stats: {} },
      ),
    );
    expect(r.toolCalls.map((c) => [c.name, c.status, c.refused ?? null])).toEqual([
      ["write_file", "denied", "no_write_tool"],
      ["read_manyy", "error", null],
      ["read_file", "error", null],
    ]);
    expect(geminiRefusal("tool_not_registered", "run_shell_command")).toBe("no_write_tool");
    expect(geminiRefusal("execution_denied", "run_shell_command")).toBe("permission_denied");
    expect(geminiRefusal(null, "write_file")).toBeNull();
  });
});
