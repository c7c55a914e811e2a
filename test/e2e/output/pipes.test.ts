/**
 * Every streaming command writes the same bytes to a slow pipe as to a
 * file: no chunk repeated, none lost (issue 15). The old writer re-sent a
 * partially written chunk from its start once stdout was non-blocking (a
 * stderr diagnostic created the stream that made it so), so a reader that
 * was not instantaneous got the first 64 KiB twice.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { makeBigTree, type BigTree } from "./fixture.ts";

const READER = join(import.meta.dir, "slow-reader.py");

type Mode = "file" | "slow" | "nonblock";

/** The pipe size a large output asks for (src/cli/pipe-buffer.ts): 1 MiB, or less where the system's ceiling is lower. */
const WIDE_PIPE = Math.min(1 << 20, Number(readFileSync("/proc/sys/fs/pipe-max-size", "utf8").trim()));

async function capture(
  t: BigTree,
  mode: Mode,
  args: string[],
  env: Record<string, string>,
  name: string,
): Promise<{ code: number; stderr: string; bytes: Buffer; pipe: number | null; pipe0: number | null }> {
  const out = join(t.cwd, `${name}.${mode}.out`);
  const proc = Bun.spawn(["python3", READER, mode, out, "0.4", binPath(), ...args], {
    cwd: t.cwd,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const report = JSON.parse(await new Response(proc.stdout).text());
  await proc.exited;
  return { code: report.code, stderr: report.stderr, bytes: readFileSync(out), pipe: report.pipe, pipe0: report.pipe0 };
}

interface Case {
  name: string;
  args: string[];
  env?: Record<string, string>;
  /** A diagnostic the command prints on stderr before its stdout. */
  diagnostic?: RegExp;
  /** Output must exceed twice the 64 KiB pipe buffer (the corruption began at 64 KiB). */
  big: boolean;
  /** Exit code (diff of runs that differ: 1). */
  code?: number;
  /** The output is a large document written in large pieces: its pipe is widened (src/cli/pipe-buffer.ts). */
  widens?: boolean;
}

const CASES: Case[] = [
  { name: "run-json", args: ["replay", "r-big", "--as-json"], big: true },
  { name: "huge-json", args: ["replay", "r-huge", "--as-json"], big: true, widens: true },
  { name: "huge-prose", args: ["replay", "r-huge"], big: true },
  { name: "run-prose", args: ["replay", "r-big"], big: true },
  { name: "latest-json", args: ["replay", "latest", "--as-json"], diagnostic: /ℹ Replaying latest run: r-big2/, big: true },
  { name: "latest-prose", args: ["replay", "latest"], diagnostic: /ℹ Replaying latest run: r-big2/, big: true },
  { name: "from-step-json", args: ["replay", "r-big", "--from-step", "2000", "--as-json"], big: false },
  { name: "from-step-prose", args: ["replay", "r-big", "--from-step", "2000"], big: false },
  { name: "agent-view", args: ["replay", "agent-big"], big: true },
  { name: "agent-view-json", args: ["replay", "agent-big", "--as-json"], big: true },
  { name: "diff", args: ["replay", "diff", "r-big", "r-big2"], big: false, code: 1 },
  { name: "diff-json", args: ["replay", "diff", "r-big", "r-big2", "--as-json"], big: false, code: 1 },
  { name: "list", args: ["replay", "list"], big: false },
  { name: "list-json", args: ["replay", "list", "--as-json"], big: false },
  { name: "verify-json", args: ["journal", "verify", "r-big", "--as-json"], big: false },
  {
    name: "verify-json-stats",
    args: ["journal", "verify", "r-big", "--as-json"],
    env: { BERNSTEIN_VERIFY_STATS: "1" },
    diagnostic: /^verify stats: /,
    big: false,
  },
  { name: "verify-run-json", args: ["replay", "latest", "--verify", "--as-json"], big: false },
];

describe("stdout through a slow pipe equals stdout to a file (compiled binary)", () => {
  let t: BigTree;
  beforeAll(async () => {
    t = await makeBigTree();
  }, 60_000);
  afterAll(() => t.cleanup());

  for (const c of CASES) {
    test(`${c.name}: ${c.args.join(" ")}${c.diagnostic ? " (with a stderr diagnostic)" : ""}`, async () => {
      const env = c.env ?? {};
      const [file, slow, nonblock] = await Promise.all(
        (["file", "slow", "nonblock"] as const).map((m) => capture(t, m, c.args, env, c.name)),
      );
      expect(file.code).toBe(c.code ?? 0);
      if (c.big) expect(file.bytes.length).toBeGreaterThan(128 * 1024);
      if (c.diagnostic) {
        for (const r of [file, slow, nonblock]) expect(r.stderr).toMatch(c.diagnostic);
      }
      for (const r of [slow, nonblock]) {
        expect(r.code).toBe(file.code);
        // Compare sizes first: a failure then says "repeated" or "lost" at a glance.
        expect(r.bytes.length).toBe(file.bytes.length);
        expect(r.bytes.equals(file.bytes)).toBe(true);
      }
      if (c.args.includes("--as-json")) expect(() => JSON.parse(slow.bytes.toString("utf8"))).not.toThrow();
      // A large document widens its pipe (the reader and the writer then run side by side); any other output leaves
      // it as it was made (64 KiB, unless the system makes them otherwise).
      const size = (made: number | null) => (c.widens ? Math.max(WIDE_PIPE, made!) : made);
      expect({ slow: slow.pipe, nonblock: nonblock.pipe }).toEqual({ slow: size(slow.pipe0), nonblock: size(nonblock.pipe0) });
      if (c.widens) expect(slow.pipe0).toBeLessThan(WIDE_PIPE);
      if (c.widens) expect(file.bytes.length).toBeGreaterThan(8 << 20);
    }, 30_000);
  }
});
