/**
 * SIGINT/SIGTERM end a command within 2 s even when its stdout is a pipe
 * whose reader stopped reading. A write(2) to a full pipe made from the
 * command's own thread blocks it, and the kernel restarts the write after
 * the signal instead of letting the handler in: the old binary stayed
 * alive until the reader read again. stdout is now written by the
 * runtime's thread pool (src/cli/ordered-output.ts).
 *
 * The helper fills the pipe by never reading it, signals the command once
 * it waits on the pipe, and times the exit. 2 s is the CLI's promise, not
 * a speed figure: the guarded commands end in milliseconds, `--follow`
 * gives stdout one second after the signal (src/cli/output.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { bernstein, binPath } from "../../helpers/cli.ts";
import { makeBigTree, type BigTree } from "./fixture.ts";

const HELPER = join(import.meta.dir, "stalled-reader.py");

interface Stalled {
  code: number | null;
  ms: number | null;
  full: boolean;
  stderr: string;
}

async function stalled(t: BigTree, sig: "SIGINT" | "SIGTERM", args: string[], stderrFull = false, env: Record<string, string> = {}): Promise<Stalled> {
  const proc = Bun.spawn(["python3", HELPER, sig, "0.2", "8", binPath(), ...args], {
    cwd: t.cwd,
    env: { ...process.env, NO_COLOR: "1", ...(stderrFull ? { STDERR_FULL: "1" } : {}), ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const report = JSON.parse(await new Response(proc.stdout).text()) as Stalled;
  await proc.exited;
  // the command must have been waiting on its reader when signalled, or the test proves nothing
  expect(report.full).toBe(true);
  return report;
}

describe.skipIf(process.platform !== "linux")("a signal ends a command whose stdout's reader stopped reading (compiled binary)", () => {
  let t: BigTree;
  beforeAll(async () => {
    t = await makeBigTree();
    // two runs with one row of ~9.7 MB (json.dumps escapes the string), differing at its end: a row
    // rendered in pieces from this thread, more than the 1 MiB held in memory before it spills to a file
    const text = 'wide "row" é😀 line\nbreak '.repeat(220_000);
    for (const [run, tail] of [["r-wide", ""], ["r-wide2", "!"]] as const) {
      const rows = [{ event: "run_started", run_id: run, goal: "wide" }, { event: "tool_result", task_id: "t1", agent_id: "a1", output: text + tail }, { event: "run_completed" }];
      const r = await bernstein(["journal", "record", run], { cwd: t.cwd, stdin: rows.map((e) => JSON.stringify(e)).join("\n") + "\n" });
      expect(r.code).toBe(0);
    }
  }, 120_000);
  afterAll(() => t.cleanup());

  const guarded: [string, string[]][] = [
    ["the run table", ["replay", "r-huge"]],
    ["a run's --as-json", ["replay", "r-huge", "--as-json"]],
    ["an agent's --as-json", ["replay", "agent-big", "--as-json"]],
    ["a run of a 9.7 MB row, --as-json", ["replay", "r-wide", "--as-json"]],
    ["replay diff of two 9.7 MB rows, --as-json", ["replay", "diff", "r-wide", "r-wide2", "--as-json"]],
  ];
  for (const [name, args] of guarded) {
    test(`SIGTERM, ${name}: exit 143 within 2 s, one interrupted line`, async () => {
      const r = await stalled(t, "SIGTERM", args);
      expect(r.code).toBe(143);
      expect(r.ms!).toBeLessThan(2000);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/ERROR {2}replay( diff)? was interrupted by SIGTERM/);
    }, 60_000);
  }

  test("SIGINT, the run table: exit 130 within 2 s", async () => {
    const r = await stalled(t, "SIGINT", ["replay", "r-huge"]);
    expect(r.code).toBe(130);
    expect(r.ms!).toBeLessThan(2000);
    expect(r.stderr).toContain("replay was interrupted by SIGINT");
  }, 60_000);

  // the interrupted line goes to stderr from the handler: a stderr pipe that is full and never read
  // gets half a second (src/cli/output.ts), then the line is dropped and the process ends
  test("SIGTERM with stderr a full pipe nobody reads too: exit 143 within 2 s", async () => {
    const r = await stalled(t, "SIGTERM", ["replay", "r-huge", "--as-json"], true);
    expect(r.code).toBe(143);
    expect(r.ms!).toBeLessThan(2000);
  }, 60_000);

  // a diagnostic written before any signal, to a stderr pipe nobody reads: made from the command's thread, its
  // write(2) blocked that thread and no handler ran (the process outlived the signal); it is now held, and
  // the command waits for its reader at the end, where a signal still ends it
  test("SIGTERM while a diagnostic waits on a full stderr nobody reads: exit 143 within 2 s", async () => {
    const r = await stalled(t, "SIGTERM", ["replay", "r-huge", "--verify"], true, { SIGNAL_AFTER: "3", BERNSTEIN_VERIFY_STATS: "1" });
    expect(r.code).toBe(143);
    expect(r.ms!).toBeLessThan(2000);
  }, 60_000);

  // --follow answers a signal itself with the verdict so far; a reader who takes nothing more
  // makes that an output failure (exit 70), never an exit 0 whose verdict nobody got
  for (const form of [[], ["--as-json"]]) {
    test(`SIGTERM, replay --follow ${form.join(" ")}: stdout given up after 1 s, exit 70 within 2 s`, async () => {
      const r = await stalled(t, "SIGTERM", ["replay", "r-huge", "--follow", ...form]);
      expect(r.code).toBe(70);
      expect(r.ms!).toBeGreaterThanOrEqual(900);
      expect(r.ms!).toBeLessThan(2000);
      expect(r.stderr).toContain("stdout's reader took nothing more in the 1 s after the signal; the output is incomplete");
    }, 60_000);
  }
});
