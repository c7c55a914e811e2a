/**
 * Test preload: make sure a compiled host binary exists for the e2e tests.
 * CI (or a developer) may point BERNSTEIN_BIN at one; otherwise the suite
 * builds its own into a fresh temp folder, never over the user's `dist/`.
 * The build runs in a child process with the test runner's variables
 * (NODE_ENV=test, …) removed, and scripts/build.ts defines NODE_ENV itself,
 * so the binary under test is byte-for-byte a release build: on a host a
 * release covers, it IS that platform's release binary (scripts/build.ts
 * builds the host with the release target and file name). The preload prints
 * `binary under test: PATH sha256 HEX` once, so a run (.ci/run, the release
 * workflow) can compare what passed with what ships.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
if (!process.env.BERNSTEIN_BIN) {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-test-bin-"));
  // ~110 MB per run: never leave it behind in the shared temp folder.
  // (A hook in the preload runs once, after the last file.)
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, "bernstein");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== "NODE_ENV" && k !== "BUN_ENV" && k !== "TEST") env[k] = v;
  }
  const r = Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), "--out", out], { cwd: root, env, stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`building the host binary failed:\n${r.stderr.toString()}`);
  process.env.BERNSTEIN_BIN = out;
}
{
  const bin = process.env.BERNSTEIN_BIN ?? "";
  let digest = "unreadable";
  try {
    digest = new Bun.CryptoHasher("sha256").update(readFileSync(bin)).digest("hex");
  } catch {}
  console.error(`binary under test: ${bin} sha256 ${digest}`);
}
