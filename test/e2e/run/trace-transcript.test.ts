/**
 * Task traces hold the attempt (issue 31): the files the work tree shows
 * changed (not the agent's word), tokens, cost, model, duration, and the
 * tool calls the CLI reported with their inputs and outcomes. Through the
 * compiled binary, with a script agent and a stand-in claude CLI on PATH.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "../../../src/pyjson/parse.ts";
import { toPlain } from "../../../src/session/files.ts";
import { cleanupProjects, makeProject, runToEnd, type Project } from "./fixture.ts";

afterAll(cleanupProjects);

/** Our per-task trace of `task` (the finalised copy), as plain JSON. */
function ownTrace(p: Project, task: string): any {
  const dir = join(p.sddDir, "traces");
  const own = readdirSync(dir).filter((n) => n.startsWith(`${task}-`) && n.endsWith(".json"));
  expect(own).toHaveLength(1);
  return toPlain(parse(readFileSync(join(dir, own[0]!), "utf8")));
}

const git = (cwd: string, ...args: string[]) => {
  const r = Bun.spawnSync(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
  expect(r.exitCode).toBe(0);
};

/** A script agent that writes out/<task>.txt and edits notes.txt, then claims something else. */
const WRITER = `#!/bin/sh
cat > /dev/null
mkdir -p out
echo "made by $BERNSTEIN_TASK_ID" > "out/$BERNSTEIN_TASK_ID.txt"
echo "edited" >> notes.txt
echo '{"result_summary": "wrote docs/claimed.md", "cost_usd": 0.25}'
`;

function writerProject(): Project {
  const p = makeProject({ tasks: [{ id: "T1" }] });
  writeFileSync(join(p.dir, "agent.sh"), WRITER);
  chmodSync(join(p.dir, "agent.sh"), 0o755);
  writeFileSync(join(p.dir, "notes.txt"), "notes\n");
  writeFileSync(join(p.dir, "untouched.txt"), "same\n");
  return p;
}

describe("task trace: files, tokens, cost, model", () => {
  test("in a git work tree: the files the agent wrote and edited (not the ones it claimed), its cost, duration and the final step's files", async () => {
    const p = writerProject();
    git(p.dir, "init", "-q");
    git(p.dir, "add", "-A");
    git(p.dir, "commit", "-qm", "base");
    // Dirty before the run and left alone by the agent: not the attempt's change.
    writeFileSync(join(p.dir, "untouched.txt"), "dirty before\n");
    const r = await runToEnd(p);
    expect(r.code).toBe(0);
    const t = ownTrace(p, "T1");
    expect(t.outcome).toBe("success");
    expect(t.files_changed).toEqual(["notes.txt", "out/T1.txt"]);
    expect(t.cost_usd).toBe(0.25);
    expect(t.cost_source).toBe("cli");
    expect(t.adapter).toBe("script");
    expect(t.duration_ms).toBeGreaterThan(0);
    const last = t.steps.at(-1);
    expect(last.type).toBe("complete");
    expect(last.files).toEqual(["notes.txt", "out/T1.txt"]);
    // No model configured and none reported: named as the CLI's default, never "None/None".
    expect(t.steps[0].detail).toBe("Spawned auto agent (CLI default/default) via script for tasks: T1");
  });

  test("outside git: a before/after snapshot of the workdir, .sdd excluded", async () => {
    const p = writerProject();
    const r = await runToEnd(p);
    expect(r.code).toBe(0);
    const t = ownTrace(p, "T1");
    expect(t.files_changed).toEqual(["notes.txt", "out/T1.txt"]);
    expect(t.files_changed.some((f: string) => f.startsWith(".sdd"))).toBe(false);
  });
});

/** A stand-in claude: a stream with system/init, a Write tool_use + its result, a failed Bash, and the final result. */
function standInClaude(p: Project): string {
  const bin = join(p.dir, "bin");
  mkdirSync(bin, { recursive: true });
  const lines = [
    { type: "system", subtype: "init", session_id: "sess-1", model: "claude-stand-in-1" },
    { type: "assistant", message: { id: "m1", model: "claude-stand-in-1", content: [{ type: "text", text: "I will write hello.txt." }, { type: "tool_use", id: "tu1", name: "Write", input: { file_path: "hello.txt", content: "hi\n" } }], usage: { input_tokens: 10, output_tokens: 5 } } },
    { type: "user", message: { content: [{ type: "tool_result", tool_use_id: "tu1", content: "File created successfully at: hello.txt" }] } },
    { type: "assistant", message: { id: "m2", model: "claude-stand-in-1", content: [{ type: "tool_use", id: "tu2", name: "Bash", input: { command: "false" } }], usage: { input_tokens: 20, output_tokens: 6 } } },
    { type: "user", message: { content: [{ type: "tool_result", tool_use_id: "tu2", is_error: true, content: "Exit code 1" }] } },
    { type: "assistant", message: { id: "m3", model: "claude-stand-in-1", content: [{ type: "text", text: "Wrote hello.txt; the check failed." }], usage: { input_tokens: 1, output_tokens: 1 } } },
    { type: "result", subtype: "success", is_error: false, result: "RESULT: wrote hello.txt", session_id: "sess-1", total_cost_usd: 0.0123, usage: { input_tokens: 30, cache_read_input_tokens: 4, output_tokens: 11 }, modelUsage: { "claude-stand-in-1": {} } },
  ];
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  writeFileSync(join(bin, "claude"), ["#!/bin/sh", "cat > /dev/null", "printf 'hi\\n' > hello.txt", `printf '%s\\n' ${lines.map((l) => q(JSON.stringify(l))).join(" ")}`, ""].join("\n"));
  chmodSync(join(bin, "claude"), 0o755);
  return bin;
}

describe("task trace: tool calls (stand-in claude)", () => {
  test("the transcript: the assistant's messages and each tool call (input, outcome) as steps in order; tokens, cost and the CLI's model", async () => {
    const p = makeProject({ tasks: [{ id: "T1" }] });
    const bin = standInClaude(p);
    writeFileSync(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: claude\n  timeout_s: 30\n");
    const r = await runToEnd(p, [], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(0);
    const t = ownTrace(p, "T1");
    expect(t.outcome).toBe("success");
    expect(t.model).toBe("claude-stand-in-1");
    expect(t.reported_model).toBe("claude-stand-in-1");
    expect(t.steps[0].detail).toBe("Spawned auto agent (claude-stand-in-1/default) via claude for tasks: T1");
    const turns = t.steps.filter((s: any) => s.turn_number > 0);
    expect(turns.map((s: any) => [s.type, s.turn_number, s.detail])).toEqual([
      ["plan", 1, "I will write hello.txt."],
      ["edit", 2, "Write: ok"],
      ["edit", 3, "Bash: error"],
      ["plan", 4, "Wrote hello.txt; the check failed."],
    ]);
    const tools = t.steps.filter((s: any) => s.tool_call);
    expect(tools.map((s: any) => s.tool_call.name)).toEqual(["Write", "Bash"]);
    expect(JSON.parse(tools[0].tool_call.input)).toEqual({ file_path: "hello.txt", content: "hi\n" });
    expect(tools[0].tool_call.output).toBe("File created successfully at: hello.txt");
    expect(JSON.parse(tools[1].tool_call.input)).toEqual({ command: "false" });
    expect(tools[1].tool_call).toMatchObject({ status: "error", output: "Exit code 1" });
    expect(t.turn_count).toBe(4);
    expect(t.tokens).toEqual({ input: 34, cached_input: 4, output: 11 });
    expect(t.total_consumed).toBe(45);
    expect(t.steps.at(-1).tokens).toBe(45);
    expect(t.cost_usd).toBe(0.0123);
    expect(t.files_changed).toEqual(["hello.txt"]);
    // Upstream's fields keep their types; the Python-layout copy carries the same steps.
    for (const s of t.steps) for (const k of ["files", "tokens", "duration_ms", "turn_number", "compaction_reason"]) expect(s).toHaveProperty(k);
    const jsonl = readFileSync(join(p.sddDir, "traces", "T1.jsonl"), "utf8").trim().split("\n");
    expect(jsonl).toHaveLength(2);
    expect(jsonl[1]).toContain('"tool_call": {"name": "Write"');
  });
});
