import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..", "..");

/**
 * The compiled binary the harnesses drive: `explicit`, else BERNSTEIN_BIN,
 * else a fresh build of the working tree into bench/out/harness-bin/ (never
 * dist/, which may hold an older build).
 */
export function harnessBinary(explicit?: string | null): string {
  if (explicit) {
    const p = resolve(explicit);
    if (!existsSync(p)) throw new Error(`binary not found: ${p}`);
    return p;
  }
  if (process.env.BERNSTEIN_BIN) return resolve(process.env.BERNSTEIN_BIN);
  const out = join(root, "bench", "out", "harness-bin", "bernstein");
  const r = Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), "--out", out], { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`building the binary failed:\n${r.stderr.toString()}`);
  return out;
}
