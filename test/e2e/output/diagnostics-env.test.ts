/**
 * Diagnostics do not depend on the environment (issue 17): NODE_ENV, TEST,
 * CI and consola's own variables change nothing at run time; `--debug`
 * and BERNSTEIN_LOG_LEVEL are the only switches.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { binPath } from "../../helpers/cli.ts";
import { makeSdd, type SddTree } from "../replay/fixture.ts";

/** Run with exactly `env` (plus PATH): no inherited variable can leak in. */
async function run(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([binPath(), ...args], { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const NOISE: Record<string, string>[] = [
  { TEST: "1" },
  { CI: "true" },
  { NODE_ENV: "test" },
  { NODE_ENV: "production" },
  { NODE_ENV: "development", DEBUG: "1" },
  { GITHUB_ACTIONS: "true", CI: "1" },
  { CONSOLA_LEVEL: "0" },
  { MINIMAL: "1", TERM: "dumb" },
];

describe("stderr diagnostics are the same in every environment (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd({ "run-1": "chain-4" });
  });
  afterAll(() => t.cleanup());

  const COMMANDS: [string, string[], RegExp][] = [
    ["an info line", ["replay", "latest", "--limit", "1"], /^ℹ Replaying latest run: run-1\n$/],
    ["an error", ["journal", "verify", "nosuch-run"], /^\n ERROR  no journal for run nosuch-run: .*\n\n$/],
  ];
  for (const [what, args, expected] of COMMANDS) {
    test(`${what}: byte-identical stderr under ${NOISE.map((e) => Object.keys(e).join("+")).join(", ")}`, async () => {
      const clean = await run(args, t.cwd, {});
      expect(clean.stderr).toMatch(expected);
      const others = await Promise.all(NOISE.map((env) => run(args, t.cwd, env)));
      for (const [i, r] of others.entries()) {
        expect({ env: NOISE[i], stderr: r.stderr, code: r.code }).toEqual({ env: NOISE[i], stderr: clean.stderr, code: clean.code });
      }
    });
  }

  test("BERNSTEIN_LOG_LEVEL: warn and silent hide info lines, an unknown level is warned about once", async () => {
    const args = ["replay", "latest", "--limit", "1"];
    expect((await run(args, t.cwd, { BERNSTEIN_LOG_LEVEL: "warn" })).stderr).toBe("");
    expect((await run(args, t.cwd, { BERNSTEIN_LOG_LEVEL: "info" })).stderr).toBe("ℹ Replaying latest run: run-1\n");
    const silent = await run(["journal", "verify", "nosuch-run"], t.cwd, { BERNSTEIN_LOG_LEVEL: "silent" });
    expect(silent.code).toBe(3);
    expect(silent.stderr).toBe("");
    const bad = await run(args, t.cwd, { BERNSTEIN_LOG_LEVEL: "loud" });
    expect(bad.stderr).toBe(
      '\n WARN  BERNSTEIN_LOG_LEVEL="loud" is not one of silent, error, warn, info, debug; using info\n\nℹ Replaying latest run: run-1\n',
    );
  });

  test("--debug wins over BERNSTEIN_LOG_LEVEL=silent", async () => {
    const r = await run(["replay", "latest", "--limit", "1", "--debug"], t.cwd, { BERNSTEIN_LOG_LEVEL: "silent" });
    expect(r.stderr).toContain("ℹ Replaying latest run: run-1\n");
  });
});
