/**
 * Agent failures by class, through the compiled binary, with stand-ins for
 * the CLIs on PATH that answer the way the real ones do on a provider error
 * (test/e2e/agents/real-clis.test.ts runs the real CLIs against a fake API):
 * a 401 or a 400 fails the task at once, a 429 or a 5xx is retried after a
 * back-off of at least the provider's Retry-After, and a stop during that
 * wait puts the task back in the queue at once.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupProjects, journalEvents, makeProject, runIds, runToEnd, spawnRun, storedTasks, waitFor, type Project } from "./fixture.ts";

afterAll(cleanupProjects);

/** A stand-in CLI: logs each call (and the retry variables it got) to calls.txt, then prints `first` on its first call and `later` after. */
function standIn(p: Project, name: string, first: { out: string; code: number }, later: { out: string; code: number } = first): string {
  const bin = join(p.dir, "bin");
  mkdirSync(bin, { recursive: true });
  const calls = join(p.dir, "calls.txt");
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  writeFileSync(
    join(bin, name),
    [
      "#!/bin/sh",
      "cat > /dev/null",
      `echo "call max_retries=\${CLAUDE_CODE_MAX_RETRIES-unset}" >> ${q(calls)}`,
      `n=$(wc -l < ${q(calls)})`,
      `if [ "$n" -le 1 ]; then printf '%s\\n' ${q(first.out)}; exit ${first.code}; fi`,
      `printf '%s\\n' ${q(later.out)}; exit ${later.code}`,
      "",
    ].join("\n"),
  );
  chmodSync(join(bin, name), 0o755);
  return bin;
}

const calls = (p: Project): string[] => (existsSync(join(p.dir, "calls.txt")) ? readFileSync(join(p.dir, "calls.txt"), "utf8").trim().split("\n") : []);

const CLAUDE_401 = JSON.stringify({ type: "result", subtype: "success", is_error: true, api_error_status: 401, api_error_type: "authentication_error", result: "Invalid API key · Fix external API key", total_cost_usd: 0 });
const CLAUDE_OK = JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "RESULT: done after the wait", total_cost_usd: 0.01 });
const CODEX_400 = JSON.stringify({ type: "turn.failed", error: { message: '{"error":{"message":"max_tokens is too large","type":"invalid_request_error","param":null,"code":null}}' } });
const GEMINI_429 = JSON.stringify({ type: "result", status: "error", error: { type: "unknown", message: "[API Error: rate limit reached. Please retry in 3s.\nSuggested retry after 3s.]" } });
const GEMINI_500 = JSON.stringify({ type: "result", status: "error", error: { type: "unknown", message: '[API Error: {"error":{"code":500,"message":"boom","status":"INTERNAL"}}]' } });
const GEMINI_OK = [JSON.stringify({ type: "message", role: "assistant", content: "RESULT: gemini answered", delta: true }), JSON.stringify({ type: "result", status: "success", stats: { input_tokens: 1, output_tokens: 1, cached: 0 } })].join("\n");

function configure(p: Project, adapter: string, extra = ""): void {
  writeFileSync(join(p.dir, "bernstein.yaml"), `agent:\n  adapter: ${adapter}\n  timeout_s: 30\n${extra}`);
}

describe("provider failures by class (stand-in CLIs)", () => {
  test("claude 401: failed at once as auth with the CLI's message, one call although max_retries is 2; the CLI is told not to retry itself", async () => {
    const p = makeProject({ tasks: [{ id: "A1" }] });
    const bin = standIn(p, "claude", { out: CLAUDE_401, code: 1 });
    configure(p, "claude", "max_retries: 2\n");
    const r = await runToEnd(p, ["--as-json"], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ ok: false, error: "tasks_failed", tasks: { failed: 1 }, failures: [{ task_id: "A1", signals: ["auth"] }] });
    expect(j.detail).toBe("some tasks failed for good: A1 (auth)");
    expect(calls(p)).toEqual(["call max_retries=0"]);
    const t = storedTasks(p)[0]!;
    expect(t).toMatchObject({ status: "failed", attempts: 1 });
    expect(t.fail_reason).toStartWith("auth: claude reported an error (HTTP 401): Invalid API key");
    const rows = journalEvents(p, runIds(p)[0]!);
    expect(rows.find((x) => x.get("event") === "agent_failed")!.get("failure_class")).toBe("auth");
    expect(rows.find((x) => x.get("event") === "task_failed")!.get("reason")).toStartWith("auth: ");
    expect(rows.find((x) => x.get("event") === "task_verification_failed")!.get("failed_signals")).toEqual(["auth"]);
    expect(rows.some((x) => x.get("event") === "task_retried")).toBe(false);
    expect(r.stdout + r.stderr).toContain("(auth: not retried)");
  });

  test("codex 400 (the raw body as its message): failed at once as invalid_request", async () => {
    const p = makeProject({ tasks: [{ id: "B1" }] });
    const bin = standIn(p, "codex", { out: CODEX_400, code: 1 });
    configure(p, "codex", "max_retries: 2\n");
    const r = await runToEnd(p, [], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(1);
    expect(calls(p).length).toBe(1);
    const t = storedTasks(p)[0]!;
    expect(t).toMatchObject({ status: "failed", attempts: 1 });
    expect(t.fail_reason).toStartWith("invalid_request: codex: max_tokens is too large");
  });

  test("gemini 429 with 'retry in 3s': retried after at least 3 s, then done; a 500 after a back-off", async () => {
    const p = makeProject({ tasks: [{ id: "C1" }] });
    const bin = standIn(p, "gemini", { out: GEMINI_429, code: 1 }, { out: GEMINI_OK, code: 0 });
    configure(p, "gemini");
    const started = Date.now();
    const r = await runToEnd(p, [], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(calls(p).length).toBe(2);
    expect(storedTasks(p)[0]).toMatchObject({ status: "done", attempts: 2, result_summary: "gemini answered" });
    const retried = journalEvents(p, runIds(p)[0]!).find((x) => x.get("event") === "task_retried")!;
    expect(retried.get("failure_class")).toBe("rate_limited");
    expect(retried.get("delay_s").toNumber()).toBeGreaterThanOrEqual(3);
    expect(r.stdout + r.stderr).toContain("(the provider asked for 3s)");

    const q = makeProject({ tasks: [{ id: "C2" }] });
    const bin2 = standIn(q, "gemini", { out: GEMINI_500, code: 1 }, { out: GEMINI_OK, code: 0 });
    configure(q, "gemini");
    const r2 = await runToEnd(q, [], { PATH: `${bin2}:${process.env.PATH}` });
    expect(r2.code).toBe(0);
    expect(storedTasks(q)[0]).toMatchObject({ status: "done", attempts: 2 });
    const retried2 = journalEvents(q, runIds(q)[0]!).find((x) => x.get("event") === "task_retried")!;
    expect(retried2.get("failure_class")).toBe("server_error");
    expect(retried2.get("delay_s").toNumber()).toBeGreaterThanOrEqual(1);
  });

  test("a transient failure with max_retries 0 fails the task (the class is the reason)", async () => {
    const p = makeProject({ tasks: [{ id: "D1" }] });
    const bin = standIn(p, "gemini", { out: GEMINI_500, code: 1 });
    configure(p, "gemini", "max_retries: 0\n");
    const r = await runToEnd(p, [], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(1);
    expect(storedTasks(p)[0]!.fail_reason).toStartWith("server_error: gemini: boom");
  });

  test("agent.env CLAUDE_CODE_MAX_RETRIES is the user's choice and is kept", async () => {
    const p = makeProject({ tasks: [{ id: "E1" }] });
    const bin = standIn(p, "claude", { out: CLAUDE_OK, code: 0 });
    configure(p, "claude", '  env:\n    CLAUDE_CODE_MAX_RETRIES: "3"\n');
    const r = await runToEnd(p, [], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(0);
    expect(calls(p)).toEqual(["call max_retries=3"]);
  });

  test("SIGINT while a task waits out a long Retry-After: the run ends at once and the task is back in the queue", async () => {
    const p = makeProject({ tasks: [{ id: "F1" }] });
    const bin = standIn(p, "gemini", { out: GEMINI_429.replaceAll("3s", "120s"), code: 1 }, { out: GEMINI_OK, code: 0 });
    configure(p, "gemini");
    const proc = spawnRun(p, [], { PATH: `${bin}:${process.env.PATH}` });
    await waitFor(() => runIds(p).length > 0 && journalEvents(p, runIds(p)[0]!).some((x) => x.get("event") === "task_retried"), 30000, "the retry to be scheduled");
    const signalled = Date.now();
    proc.kill("SIGINT");
    const code = await proc.exited;
    expect(Date.now() - signalled).toBeLessThan(10_000); // not the 120 s wait
    expect(code).toBe(130);
    expect(calls(p).length).toBe(1);
    expect(storedTasks(p)[0]).toMatchObject({ status: "open", attempts: 1 });
    const rows = journalEvents(p, runIds(p)[0]!);
    expect(rows.find((x) => x.get("event") === "task_requeued")!.get("reason")).toBe("stopped");
  });
});
