/**
 * The CLI adapters against stand-in executables on PATH that record their
 * argv and answer the way the real CLIs do (claude's JSON result, aider's
 * Cost: line, plain text for codex/gemini).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupProjects, journalEvents, makeProject, runIds, runToEnd, storedTasks } from "./fixture.ts";
import { parse } from "../../../src/pyjson/parse.ts";

afterAll(cleanupProjects);

/** Stand-ins print what the real CLIs print in the adapters' output modes (see test/e2e/agents for the real ones). */
const FAKES: Record<string, string> = {
  claude: `printf '%s\\n' '{"type":"system","subtype":"init","session_id":"s1"}' '{"type":"result","subtype":"success","is_error":false,"result":"claude did it","total_cost_usd":0.0375}'`,
  codex: `printf '%s\\n' '{"type":"thread.started","thread_id":"t1"}' '{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"thinking...\\nRESULT: codex did it"}}' '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}'`,
  gemini: `printf '%s\\n' '{"type":"init","session_id":"g1","model":"mdl-1"}' '{"type":"message","role":"assistant","content":"gemini did it","delta":true}' '{"type":"result","status":"success","stats":{"input_tokens":10,"output_tokens":5,"cached":0}}'`,
  aider: `echo "Applied edit to x.py"\necho "Tokens: 1.2k sent, 300 received. Cost: \\$0.0100 message, \\$0.0200 session."\necho "aider did it"`,
};

for (const [name, body] of Object.entries(FAKES)) {
  test(`${name} adapter: argv shape, model flag, prompt on stdin (aider: in a file), result and cost parsing`, async () => {
    const p = makeProject({ tasks: [{ id: "X1", model: "mdl-1" }] });
    const bin = join(p.dir, "bin");
    mkdirSync(bin);
    const argvFile = join(p.dir, "argv.txt");
    const promptCopy = join(p.dir, "prompt-seen.txt");
    // The prompt: stdin, or aider's --message-file (the last argument).
    const readPrompt = name === "aider" ? `for last in "$@"; do :; done; cat "$last" > "${promptCopy}"` : `cat > "${promptCopy}"`;
    writeFileSync(join(bin, name), `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a"; done > "${argvFile}"\n${readPrompt}\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
    writeFileSync(join(p.dir, "bernstein.yaml"), `agent:\n  adapter: ${name}\n  args: ["--extra"]\nmodels:\n  prices:\n    mdl-1: {input_usd_per_mtok: 1000, output_usd_per_mtok: 2000}\n`);
    const r = await runToEnd(p, [], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(0);
    const argv = readFileSync(argvFile, "utf8").split("\0").slice(0, -1);
    const prompt = readFileSync(promptCopy, "utf8");
    expect(prompt).toStartWith("You are a auto agent");
    expect(prompt).toContain("Task X1: task X1");
    const promptFile = name === "aider" ? argv.at(-1)! : "(no prompt file in argv)";
    const expected: Record<string, string[]> = {
      claude: ["-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--model", "mdl-1", "--extra"],
      codex: ["exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "--model", "mdl-1", "--extra", "-"],
      gemini: ["--model", "mdl-1", "--skip-trust", "--approval-mode", "auto_edit", "--output-format", "stream-json", "--extra"],
      aider: ["--yes-always", "--no-pretty", "--no-stream", "--model", "mdl-1", "--extra", "--message-file", promptFile],
    };
    expect(argv).toEqual(expected[name]!);
    // the prompt file lived in the attempt's private directory, removed once the attempt was reaped
    if (name === "aider") expect(existsSync(promptFile)).toBe(false);
    const t = storedTasks(p)[0]!;
    expect(t.status).toBe("done");
    expect(t.result_summary).toBe(`${name} did it`);
    // claude and aider report a cost; codex and gemini report tokens, priced from models.prices (10 x $1000 + 5 x $2000 per Mtok)
    const cost = { claude: 0.0375, codex: 0.02, gemini: 0.02, aider: 0.02 }[name]!;
    const rows = journalEvents(p, runIds(p)[0]!);
    const completed = rows.find((x) => x.get("event") === "task_completed")!;
    expect(completed.get("cost_usd").toNumber()).toBeCloseTo(cost, 10);
    const usage = rows.find((x) => x.get("event") === "agent_usage")!;
    expect(usage.get("cost_source")).toBe(name === "claude" || name === "aider" ? "cli" : "price_table");
    // the step journal records the invocation (no prompt in it)
    const agentId = completed.get("agent_id");
    const step = parse(readFileSync(join(p.sddDir, "runtime", "journal", agentId, "000000.jsonl"), "utf8").trim()) as Map<string, any>;
    const call = step.get("tool_call") as Map<string, any>;
    expect(call.get("adapter")).toBe(name);
    expect(call.get("argv")).toEqual([name, ...expected[name]!.map((a) => (a === promptFile ? "{prompt_file}" : a))]);
    expect(step.get("prompt")).toBe(prompt);
    expect(step.get("input_hash")).toBe(new Bun.CryptoHasher("sha256").update(prompt).digest("hex"));
  });
}

describe("adapter errors", () => {
  test("a script adapter without its script is refused naming agent.script", async () => {
    const p = makeProject();
    writeFileSync(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: script\n  script: nope.sh\n");
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(3); // a missing script is missing input
    expect(JSON.parse(r.stdout)).toMatchObject({ error: "agent_script_missing", config_key: "agent.script" });
  });

  test("an agent that times out is a failed attempt with signal 'timeout'", async () => {
    const p = makeProject({ tasks: [{ id: "SLOW" }], agentEnv: { AGENT_SLEEP: "20" }, config: "max_retries: 0" });
    writeFileSync(join(p.dir, "bernstein.yaml"), readFileSync(join(p.dir, "bernstein.yaml"), "utf8").replace("timeout_s: 30", "timeout_s: 0.3"));
    const r = await runToEnd(p);
    expect(r.code).toBe(1);
    const vf = journalEvents(p, runIds(p)[0]!).find((x) => x.get("event") === "task_verification_failed")!;
    expect(vf.get("failed_signals")).toEqual(["timeout"]);
  });
});

describe("an attempt whose output says it did nothing is not a success", () => {
  const DENIED =
    '{"type":"result","subtype":"success","is_error":false,"result":"I need permission to use Write.","total_cost_usd":0.01,"permission_denials":[{"tool_name":"Write","tool_use_id":"t1","tool_input":{"file_path":"x"}}]}';
  for (const [what, line, signal] of [
    ["denied every write (permission_denials)", DENIED, "permission_denied"],
    ["an error result (is_error)", '{"type":"result","subtype":"error_during_execution","is_error":true,"total_cost_usd":0.01}', "agent_error"],
    ["no result at all", '{"type":"system","subtype":"init"}', "no_result"],
  ] as const) {
    test(`claude exits 0 but ${what}: the task fails (${signal}), exit 1`, async () => {
      const p = makeProject({ tasks: [{ id: "W1" }] });
      const bin = join(p.dir, "bin");
      mkdirSync(bin);
      writeFileSync(join(bin, "claude"), `#!/bin/sh\nprintf '%s\\n' '${line}'\nexit 0\n`);
      chmodSync(join(bin, "claude"), 0o755);
      writeFileSync(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: claude\nmax_retries: 0\n");
      const r = await runToEnd(p, ["--as-json"], { PATH: `${bin}:${process.env.PATH}` });
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "tasks_failed", tasks: { done: 0, failed: 1 } });
      expect(storedTasks(p)[0]).toMatchObject({ status: "failed" });
      expect(storedTasks(p)[0]!.fail_reason).toContain(signal);
      const vf = journalEvents(p, runIds(p)[0]!).find((x) => x.get("event") === "task_verification_failed")!;
      expect(vf.get("failed_signals")).toEqual([signal]);
      expect(journalEvents(p, runIds(p)[0]!).some((x) => x.get("event") === "task_completed")).toBe(false);
    });
  }

  for (const cost of ["1e400", "-1000"]) {
    test(`an agent reporting cost_usd ${cost} fails with invalid_cost; the budget is never read as 0`, async () => {
      const p = makeProject({ tasks: [{ id: "C1" }, { id: "C2" }], agentEnv: { AGENT_COST: cost }, config: "max_retries: 0" });
      const r = await runToEnd(p, ["--as-json", "--budget", "5"]);
      expect(r.code).toBe(1);
      const s = JSON.parse(r.stdout);
      expect(s).toMatchObject({ ok: false, error: "tasks_failed", tasks: { done: 0, failed: 2 }, cost_usd: 0 });
      const byId = storedTasks(p);
      for (const t of byId) {
        expect(t.status).toBe("failed");
        expect(t.fail_reason).toContain("invalid_cost");
        expect(t.fail_reason).toContain("cost_usd");
      }
    });
  }
});

test("step journals record cwd and argv relative to the workdir (the workdir as '.', our binary as 'bernstein')", async () => {
  const p = makeProject({ tasks: [{ id: "P1" }] });
  writeFileSync(join(p.dir, "agent.ts"), 'await Bun.stdin.text();\nconsole.log(JSON.stringify({ result_summary: "ts agent", cost_usd: 0 }));\n');
  writeFileSync(join(p.dir, "bernstein.yaml"), `agent:\n  adapter: script\n  script: agent.ts\n  args: ["${join(p.dir, "sub", "x.txt")}", "/etc/hostname"]\n`);
  const r = await runToEnd(p);
  expect(r.code).toBe(0);
  const completed = journalEvents(p, runIds(p)[0]!).find((x) => x.get("event") === "task_completed")!;
  const text = readFileSync(join(p.sddDir, "runtime", "journal", completed.get("agent_id"), "000000.jsonl"), "utf8");
  const call = (parse(text.trim()) as Map<string, any>).get("tool_call") as Map<string, any>;
  expect(call.get("cwd")).toBe(".");
  expect(call.get("argv")).toEqual(["bernstein", "agent.ts", "sub/x.txt", "/etc/hostname"]);
  // (the prompt names the working directory for the agent; publish redacts prompts)
  expect(JSON.stringify(Object.fromEntries(call))).not.toContain(p.dir);
});

describe("what an agent is given and what it leaves", () => {
  test("agent.api_key_env naming an unset variable is refused before the run (agent_api_key_missing, exit 2)", async () => {
    const p = makeProject();
    const bin = join(p.dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), "#!/bin/sh\nexit 0\n");
    chmodSync(join(bin, "claude"), 0o755);
    writeFileSync(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: claude\n  api_key_env: BERNSTEIN_TEST_UNSET_KEY\n");
    const r = await runToEnd(p, ["--as-json"], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "agent_api_key_missing", variable: "BERNSTEIN_TEST_UNSET_KEY", config_key: "agent.api_key_env" });
    expect(existsSync(join(p.sddDir, "runs"))).toBe(false);
  });

  test("a crashed agent is an agent failure: exit code, its stderr's last lines and its log path (agent_failed)", async () => {
    const p = makeProject({ tasks: [{ id: "K1" }], config: "max_retries: 0" });
    writeFileSync(join(p.dir, "crash.sh"), "cat > /dev/null\necho 'starting' >&2\necho 'fatal: the disk is on fire' >&2\nexit 3\n");
    writeFileSync(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: script\n  script: crash.sh\nmax_retries: 0\n");
    const r = await runToEnd(p);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain("fatal: the disk is on fire");
    const failedEv = journalEvents(p, runIds(p)[0]!).find((x) => x.get("event") === "agent_failed")!;
    expect(failedEv.get("exit_code").toNumber()).toBe(3);
    expect(failedEv.get("reason")).toBe("fatal: the disk is on fire");
    expect(failedEv.get("stderr_tail")).toBe("starting\nfatal: the disk is on fire");
    expect(existsSync(join(p.dir, failedEv.get("log_path")))).toBe(true);
    expect(storedTasks(p)[0]!.fail_reason).toContain("exit_code:3: fatal: the disk is on fire");
  });

  test("a 297 KB multi-byte description (99,000 characters, under the 100,000 limit) reaches the agent whole (stdin and BERNSTEIN_PROMPT_FILE), never through the environment", async () => {
    const p = makeProject({ tasks: [{ id: "BIG" }] });
    const description = "漢".repeat(99_000);
    writeFileSync(p.planPath, `- id: BIG\n  title: big\n  description: ${JSON.stringify(description)}\n`);
    const agent = [
      "const stdin = await Bun.stdin.text();",
      "const file = await Bun.file(process.env.BERNSTEIN_PROMPT_FILE).text();",
      'const mode = (require("node:fs").statSync(process.env.BERNSTEIN_PROMPT_FILE).mode & 0o777).toString(8);',
      'const same = stdin === file && stdin.includes(process.argv[2]);',
      "console.log(JSON.stringify({ result_summary: `same=${same} mode=${mode} env=${process.env.BERNSTEIN_PROMPT === undefined ? 'unset' : 'set'} bytes=${Buffer.byteLength(stdin)}`, cost_usd: 0 }));",
    ].join("\n");
    writeFileSync(join(p.dir, "agent.ts"), agent);
    writeFileSync(join(p.dir, "bernstein.yaml"), `agent:\n  adapter: script\n  script: agent.ts\n  args: [${JSON.stringify(description.slice(-10))}]\n`);
    const r = await runToEnd(p);
    expect(r.stderr).not.toContain("E2BIG");
    expect(r.code).toBe(0);
    expect(storedTasks(p)[0]!.result_summary).toMatch(/^same=true mode=600 env=unset bytes=\d+$/);
  });

  test("with budget_usd, an agent whose cost is unknown stops the run from claiming more (never counted as 0)", async () => {
    const p = makeProject({ tasks: [{ id: "N1", priority: 0 }, { id: "N2" }, { id: "N3" }] });
    writeFileSync(join(p.dir, "quiet.sh"), "cat > /dev/null\necho 'RESULT: did it'\n");
    writeFileSync(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: script\n  script: quiet.sh\nmax_agents: 1\n");
    const r = await runToEnd(p, ["--budget", "5", "--as-json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "budget_exhausted", tasks: { done: 1, open: 2 } });
    const rows = journalEvents(p, runIds(p)[0]!);
    expect(rows.find((x) => x.get("event") === "budget_exhausted")!.get("cost_unknown")).toBe("N1");
    expect(rows.find((x) => x.get("event") === "agent_usage")!.get("cost_source")).toBe("unknown");
  });
});
