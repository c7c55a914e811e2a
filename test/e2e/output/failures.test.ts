/**
 * A stdout that cannot be written (issue 15): EPIPE stays quiet; ENOSPC
 * (`> /dev/full`) and the like are `output_failed`, exit 70, one line on
 * stderr — never a stack trace, never exit 1 (the "chain broken" code).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, openSync } from "node:fs";
import { binPath } from "../../helpers/cli.ts";
import { makeSdd, type SddTree } from "../replay/fixture.ts";
import { makeBigTree, type BigTree } from "./fixture.ts";

async function toDevFull(args: string[], cwd: string): Promise<{ code: number; stderr: string }> {
  const fd = openSync("/dev/full", "w");
  try {
    const proc = Bun.spawn([binPath(), ...args], { cwd, env: { ...process.env, NO_COLOR: "1" }, stdout: fd, stderr: "pipe" });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    return { code, stderr };
  } finally {
    closeSync(fd);
  }
}

function expectOneLineNoStack(stderr: string): void {
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^ERROR {2}cannot write to stdout: no space left on device \(ENOSPC\); the output is incomplete$/);
  expect(stderr).not.toMatch(/\bat .*\(|Bun v|\$bunfs/);
}

describe.skipIf(process.platform !== "linux")("stdout to /dev/full (compiled binary)", () => {
  let t: SddTree;
  let big: BigTree;
  beforeAll(async () => {
    t = makeSdd({ "run-1": "chain-4" });
    big = await makeBigTree();
  }, 60_000);
  afterAll(() => {
    t.cleanup();
    big.cleanup();
  });

  for (const json of [true, false]) {
    const mode = json ? "--as-json" : "human";
    test(`journal verify of an intact journal, ${mode}: exit 70, one line, no stack`, async () => {
      const r = await toDevFull(["journal", "verify", "run-1", ...(json ? ["--as-json"] : [])], t.cwd);
      expect(r.code).toBe(70);
      expectOneLineNoStack(r.stderr);
    });

    test(`a streamed replay of 2,000 events, ${mode}: exit 70, one line`, async () => {
      const r = await toDevFull(["replay", "r-big", ...(json ? ["--as-json"] : [])], big.cwd);
      expect(r.code).toBe(70);
      expectOneLineNoStack(r.stderr);
    });

    test(`a negative verdict (diff of runs that differ), ${mode}: still 70, not 1`, async () => {
      const r = await toDevFull(["replay", "diff", "r-big", "r-big2", ...(json ? ["--as-json"] : [])], big.cwd);
      expect(r.code).toBe(70);
      expectOneLineNoStack(r.stderr);
    });

    test(`a usage error under ${mode}: its report cannot be written either → 70`, async () => {
      const r = await toDevFull(["journal", "verify", ...(json ? ["--as-json"] : [])], t.cwd);
      // Human usage errors go to stderr (exit 2); JSON ones to stdout, which fails.
      expect(r.code).toBe(json ? 70 : 2);
      if (json) expectOneLineNoStack(r.stderr);
    });
  }

  test("a reader that goes away (EPIPE) stays quiet", async () => {
    const proc = Bun.spawn(["sh", "-c", `'${binPath()}' replay r-big --as-json | head -c 100 >/dev/null`], {
      cwd: big.cwd,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(stderr).toBe("");
  });
});
