/**
 * Test preload: make sure the compiled host binary exists for the e2e tests.
 * CI builds it first and sets BERNSTEIN_BIN; a developer run builds it here
 * (to a temp name, renamed into place, so parallel runs never see half a file).
 */
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
if (!process.env.BERNSTEIN_BIN) {
  const out = join(root, "dist", "bernstein");
  if (!existsSync(out) || process.env.BERNSTEIN_REBUILD !== "0") {
    const tmp = `${out}.${process.pid}.tmp`;
    const r = Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), "--out", tmp], { cwd: root, stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`building the host binary failed:\n${r.stderr.toString()}`);
    renameSync(tmp, out);
  }
  process.env.BERNSTEIN_BIN = out;
}
