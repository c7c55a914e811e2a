/** scripts/smoke.sh (the per-platform smoke set CI runs, e.g. under qemu) passes on a good binary and fails on a bad one. */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, binPath } from "../helpers/cli.ts";

const SMOKE = join(ROOT, "scripts", "smoke.sh");

async function smoke(args: string[]): Promise<{ code: number; stdout: string }> {
  const proc = Bun.spawn(["bash", SMOKE, ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, stdout };
}

describe("scripts/smoke.sh", () => {
  test("every check passes on the binary under test", async () => {
    const r = await smoke([binPath()]);
    expect(r.stdout).not.toContain("FAIL");
    expect(r.stdout.trim().split("\n").at(-1)).toBe("smoke bernstein: 11 ok, 0 failed");
    expect(r.code).toBe(0);
  }, 60_000);

  test("a binary that says yes to everything fails the negative checks (exit 1)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bernstein-smoke-fake-"));
    try {
      const fake = join(dir, "yes-bin");
      writeFileSync(fake, "#!/bin/sh\necho 0.1.0 DIVERGENCE mismatch signature\nexit 0\n");
      chmodSync(fake, 0o755);
      const r = await smoke([fake]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("FAIL  tampered journal is a divergence (exit 1): exit 0 (want 1)");
      expect(r.stdout).toMatch(/smoke yes-bin: \d+ ok, [1-9]\d* failed\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a runner prefix is used to start the binary", async () => {
    // `env` as a stand-in emulator: the same checks, launched through it.
    const r = await smoke([binPath(), "env", "BERNSTEIN_SMOKE_RUNNER=1"]);
    expect(r.stdout).toContain("(under env BERNSTEIN_SMOKE_RUNNER=1)");
    expect(r.code).toBe(0);
  }, 60_000);
});
