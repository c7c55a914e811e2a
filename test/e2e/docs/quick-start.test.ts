/**
 * The README's quick start runs as shown: its `npm run demo` line is run as scripts/demo.ts
 * (the same script, with the binary under test and the workspace in a temp folder laid out as
 * the repository is: dist/bernstein beside demo-workspace/), then every other line is run
 * verbatim by bash with `set -euo pipefail`, so a command that fails or prints no JSON for jq
 * fails the test.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quickStartLines } from "../../../scripts/gen-cli-docs.ts";
import { binPath, ROOT } from "../../helpers/cli.ts";
import { available } from "../../helpers/require-service.ts";

const hasJq = Bun.spawnSync(["sh", "-c", "command -v jq"]).exitCode === 0;

describe.skipIf(!available("jq", hasJq, "jq is not installed (Debian jq)"))("README quick start", () => {
  test("every command runs as shown against the compiled binary", async () => {
    const lines = quickStartLines(readFileSync(join(ROOT, "README.md"), "utf8"));
    expect(lines[0]).toBe("npm run demo");
    expect(lines.filter((l) => l.startsWith("bernstein ")).length).toBeGreaterThanOrEqual(8);

    const top = mkdtempSync(join(tmpdir(), "bernstein-quick-start-"));
    try {
      mkdirSync(join(top, "dist"));
      symlinkSync(binPath(), join(top, "dist", "bernstein"));
      const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", BERNSTEIN_BIN: join(top, "dist", "bernstein") };
      for (const k of ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_WORKSPACE"]) delete env[k];

      const demo = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "demo.ts"), "--workspace", join(top, "demo-workspace")], { cwd: top, env, stdout: "pipe", stderr: "pipe" });
      expect({ code: demo.exitCode, out: demo.exitCode === 0 ? "" : demo.stdout.toString() + demo.stderr.toString() }).toEqual({ code: 0, out: "" });

      const script = ["set -euo pipefail", ...lines.slice(1), "wait"].join("\n");
      const proc = Bun.spawn(["bash", "-c", script], { cwd: top, env, stdout: "pipe", stderr: "pipe" });
      const timer = setTimeout(() => proc.kill("SIGKILL"), 150_000);
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      clearTimeout(timer);
      expect({ code, err: code === 0 ? "" : err, out: code === 0 ? "" : out }).toEqual({ code: 0, err: "", out: "" });

      // What the commands claim they did.
      expect(out).toMatch(/^\d+$/m); // jq '.events | length'
      expect(out).toContain("chain intact");
      expect(out).toContain("Divergence at event");
      expect(out).toContain("the runs diverge (exit 1)");
      expect(out).toContain("Receipt verified");
      expect(out).toContain("Session saved to .sdd/runtime/session.json");
      expect(existsSync(join(top, "demo-workspace", "receipt.tar"))).toBe(true);
      expect(out).toMatch(/resumed/);
    } finally {
      // The quick start stops its own server; make sure nothing is left behind on a failure.
      Bun.spawnSync([binPath(), "stop", "--force"], { cwd: join(top, "demo-workspace"), stdout: "ignore", stderr: "ignore" });
      rmSync(top, { recursive: true, force: true });
    }
  }, 180_000);
});
