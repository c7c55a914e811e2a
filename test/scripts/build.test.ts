/**
 * Hermetic builds: the bytes of the binary depend on the sources only, never
 * on the builder's NODE_ENV / TEST / CI; and a cross build whose Bun runtime
 * cannot be fetched fails naming that runtime.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildAll, hostPlatform } from "../../scripts/build.ts";
import { ROOT } from "../helpers/cli.ts";

const BUILD = join(ROOT, "scripts", "build.ts");
const RUNNER_VARS = ["NODE_ENV", "BUN_ENV", "TEST", "CI"];

/** The test runner's environment minus the variables under test, plus `extra`. */
function envWith(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !RUNNER_VARS.includes(k)) env[k] = v;
  return { ...env, ...extra };
}

async function build(args: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn([process.execPath, BUILD, ...args], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  return { code, stderr };
}

describe("scripts/build.ts", () => {
  test("builds under NODE_ENV unset, test (+TEST=1, CI=true) and production are byte-identical", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bernstein-hermetic-"));
    try {
      const envs: Record<string, Record<string, string>> = {
        unset: envWith({}),
        test: envWith({ NODE_ENV: "test", TEST: "1", CI: "true", BUN_ENV: "test" }),
        production: envWith({ NODE_ENV: "production" }),
      };
      const digests: Record<string, string> = {};
      for (const [name, env] of Object.entries(envs)) {
        const out = join(dir, name, "bernstein");
        const r = await build(["--out", out], env);
        expect(r.stderr).toContain(`built ${out}`);
        expect(r.code).toBe(0);
        digests[name] = new Bun.CryptoHasher("sha256").update(readFileSync(out)).digest("hex");
      }
      expect(digests.test).toBe(digests.unset!);
      expect(digests.production).toBe(digests.unset!);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  const onLinuxX64 = process.platform === "linux" && process.arch === "x64" && hostPlatform() === "linux-x64";
  test.skipIf(!onLinuxX64)("on x64 Linux the host build IS the linux-x64 release build: same sha256, whatever the output is named", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bernstein-onebin-"));
    try {
      const host = join(dir, "host", "bernstein");
      const release = join(dir, "dist", "bernstein-linux-x64");
      const env = envWith({});
      const a = await build(["--out", host], env);
      expect(a.code).toBe(0);
      const b = await build(["--target", "linux-x64", "--out", release], env);
      expect(b.code).toBe(0);
      const sha = (f: string) => new Bun.CryptoHasher("sha256").update(readFileSync(f)).digest("hex");
      expect(sha(host)).toBe(sha(release));
      expect(a.stderr).toContain(`linux-x64 release build, sha256 ${sha(host)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test.skipIf(!onLinuxX64)("build --all reuses a current binary, rebuilds a tampered one, and dist/bernstein is the host's release bytes", async () => {
    const dist = mkdtempSync(join(tmpdir(), "bernstein-reuse-"));
    try {
      const first = await buildAll(dist, ["linux-x64"]);
      expect(first).toEqual({ built: ["bernstein-linux-x64"], reused: [] });
      const bin = join(dist, "bernstein-linux-x64");
      const bytes = readFileSync(bin);
      const ino = statSync(bin).ino;
      expect(Buffer.compare(readFileSync(join(dist, "bernstein")), bytes)).toBe(0);
      const sums = readFileSync(join(dist, "SHA256SUMS"), "utf8");
      expect(sums).toBe(`${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}  bernstein-linux-x64\n`);

      const second = await buildAll(dist, ["linux-x64"]);
      expect(second).toEqual({ built: [], reused: ["bernstein-linux-x64"] });
      expect(statSync(bin).ino).toBe(ino);
      expect(readFileSync(join(dist, "SHA256SUMS"), "utf8")).toBe(sums);

      // Bytes that no longer hash as BUILDINFO recorded are never shipped: rebuilt.
      const tampered = Buffer.from(bytes);
      tampered[tampered.length - 100] ^= 1;
      writeFileSync(bin, tampered);
      const third = await buildAll(dist, ["linux-x64"]);
      expect(third).toEqual({ built: ["bernstein-linux-x64"], reused: [] });
      expect(readFileSync(join(dist, "SHA256SUMS"), "utf8")).toBe(sums);
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  }, 180_000);

  test("a cross build whose runtime cannot be fetched names the runtime and exits 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bernstein-nofetch-"));
    try {
      // An empty cache and a dead address: Bun must try, and fail, to download.
      const env = envWith({ BUN_INSTALL_CACHE_DIR: join(dir, "cache"), BUN_COMPILE_TARGET_TARBALL_URL: "http://127.0.0.1:9/runtime.tgz" });
      const r = await build(["--target", "linux-arm64", "--out", join(dir, "out", "bernstein")], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`build: could not fetch Bun's linux-arm64 runtime bun-linux-aarch64-v${Bun.version}`);
      expect(r.stderr).toContain("http://127.0.0.1:9/runtime.tgz");
      expect(r.stderr).toContain(join(dir, "cache", `bun-linux-aarch64-v${Bun.version}`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("an unknown --target is refused by name", async () => {
    const r = await build(["--target", "plan9-mips", "--out", join(tmpdir(), "never-built")], envWith({}));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("unknown --target plan9-mips: one of linux-x64, linux-arm64");
  });
});
