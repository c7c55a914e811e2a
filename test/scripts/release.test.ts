/**
 * scripts/release.sh refuses bad arguments before it builds or writes
 * anything (its full run writes dist/, so .ci/run exercises it, not the suite).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/cli.ts";

const SCRIPT = join(ROOT, "scripts", "release.sh");

function run(args: string[]): { code: number; stderr: string } {
  const r = Bun.spawnSync(["bash", SCRIPT, ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, stderr: r.stderr.toString() };
}

describe("scripts/release.sh usage", () => {
  test("a key without its public half, a missing key file, an unknown flag: exit 2, dist/ untouched", () => {
    const dist = join(ROOT, "dist");
    const before = existsSync(dist) ? statSync(dist).mtimeMs : null;
    for (const [args, text] of [
      [["--key", join(ROOT, "package.json")], "--key needs --public-key"],
      [["--public-key", join(ROOT, "release-signing.pub")], "--public-key needs --key"],
      [["--key", "/nonexistent.key", "--public-key", join(ROOT, "release-signing.pub")], "--key: no such file: /nonexistent.key"],
      [["--upload"], "unknown argument: --upload"],
    ] as const) {
      const r = run([...args]);
      expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(text)]);
    }
    expect(existsSync(dist) ? statSync(dist).mtimeMs : null).toBe(before);
  });
});
