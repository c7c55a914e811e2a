/**
 * Live runs with the REAL claude, codex and gemini CLIs (pinned in
 * test/real-clis/package.json) against the fake provider API, offline (see
 * agent-world.ts): the fake holds its answer after the first tool result
 * until the test creates a file (FAKE_HOLD_UNTIL), so the agent is known to
 * be running while the test looks. Before that file exists,
 * `status --watch --as-json` shows the CLI's tool call and the agent's step
 * journal holds it; once released the run completes and the step journal is
 * the tool call followed by the invocation, as a run read at the end leaves it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { available } from "../../helpers/require-service.ts";
import { AgentWorld, realClisInstalled, REAL_CLI_BIN, type RealCli } from "../../helpers/agent-world.ts";
import { parse } from "../../../src/pyjson/parse.ts";

const RUN = available("real-clis", realClisInstalled, `the agent CLIs are not installed in ${REAL_CLI_BIN} (npm ci --prefix test/real-clis)`);

const MODELS: Record<RealCli, string> = { claude: "claude-fake-1", codex: "gpt-fake-1", gemini: "gemini-fake-1" };
const TOOL: Record<RealCli, string> = { claude: "Write", codex: "shell", gemini: "write_file" };

let world: AgentWorld;
const made: string[] = [];
const holds: string[] = [];

beforeAll(async () => {
  if (RUN) world = await new AgentWorld().start();
});
afterAll(async () => {
  // A failed test must not leave the fake holding an answer forever.
  for (const h of holds) if (!existsSync(h)) writeFileSync(h, "");
  for (const d of made) rmSync(d, { recursive: true, force: true });
  if (world) await world.stop();
});

function stepRows(sdd: string, agent: string): Map<string, any>[] {
  const path = join(sdd, "runtime", "journal", agent, "000000.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
}

function runningAgent(sdd: string): string | null {
  try {
    const a = JSON.parse(readFileSync(join(sdd, "runtime", "agents.json"), "utf8")).agents;
    return a.length ? a[0].agent_id : null;
  } catch {
    return null;
  }
}

async function waitFor<T>(fn: () => T | null | undefined | false, what: string, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

for (const cli of ["claude", "codex", "gemini"] as const) {
  describe.skipIf(!RUN)(`${cli} (real CLI): live run`, () => {
    test("status --watch --as-json and the step journal show the first tool call before the agent exits", async () => {
      const root = mkdtempSync(join(tmpdir(), `bern-live-${cli}-`));
      made.push(root);
      const dir = join(root, "work");
      const home = join(root, "home");
      const tmp = join(root, "tmp");
      for (const d of [dir, home, tmp]) mkdirSync(d);
      const hold = join(root, "release");
      holds.push(hold);
      writeFileSync(
        join(dir, "bernstein.yaml"),
        ["agent:", `  adapter: ${cli}`, `  base_url: ${world.url}`, "  api_key_env: FAKE_PROVIDER_KEY", "  timeout_s: 120", "max_retries: 0", "models:", `  default: ${MODELS[cli]}`, ""].join("\n"),
      );
      writeFileSync(join(dir, "plan.yaml"), `- id: W\n  title: "write live.txt"\n  description: "FAKE_SCENARIO=write_file FAKE_FILE=live.txt FAKE_CONTENT=live-${cli} FAKE_HOLD_UNTIL=${hold}"\n`);
      const sdd = join(dir, ".sdd");
      const env = { PATH: `${REAL_CLI_BIN}:${process.env.PATH}`, HOME: home, TMPDIR: tmp, FAKE_PROVIDER_KEY: world.apiKey };
      const run = world.spawn([binPath(), "run", "plan.yaml", "--port", "0"], { cwd: dir, env });
      let runDone = false;
      const runResult = run.finished().then((r) => {
        runDone = true;
        return r;
      });
      const agent = await waitFor(() => runningAgent(sdd), "the agent to be spawned");

      const watch = Bun.spawn([binPath(), "status", "--watch", "--as-json"], { cwd: dir, env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
      const docs: any[] = [];
      const reading = (async () => {
        let buf = "";
        const dec = new TextDecoder();
        for await (const chunk of watch.stdout as ReadableStream<Uint8Array>) {
          buf += dec.decode(chunk, { stream: true });
          let i: number;
          while ((i = buf.indexOf("\n")) >= 0) {
            docs.push(JSON.parse(buf.slice(0, i)));
            buf = buf.slice(i + 1);
          }
        }
      })();
      const seen = await waitFor(() => docs.find((d) => d.agents?.[0]?.last_tool?.name === TOOL[cli]), `status --watch to show ${TOOL[cli]}`);
      expect(seen.agents[0]).toMatchObject({ agent_id: agent, task_id: "W", adapter: cli, tool_calls: 1 });
      expect(seen.agents[0].last_tool.input).toContain("live.txt");
      const rows = await waitFor(() => (stepRows(sdd, agent).length > 0 ? stepRows(sdd, agent) : null), "the live step row");
      expect(rows.map((r) => r.get("tool_call").get("name"))).toEqual([TOOL[cli]]);
      // the fake still holds its answer: the agent has not exited
      expect(existsSync(hold)).toBe(false);
      expect(runDone).toBe(false);

      writeFileSync(hold, "");
      const r = await runResult;
      expect(r.code).toBe(0);
      expect(await watch.exited).toBe(0);
      await reading;
      expect(docs.at(-1)).toMatchObject({ running: false });
      expect(readFileSync(join(dir, "live.txt"), "utf8")).toBe(`live-${cli}\n`);
      expect(stepRows(sdd, agent).map((x) => x.get("tool_call").get("name"))).toEqual([TOOL[cli], cli]);
      expect(world.leftovers()).toEqual([]);
    }, 150_000);
  });
}
