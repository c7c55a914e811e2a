/**
 * Build the standalone `bernstein` executable.
 *   bun scripts/build.ts                  -> dist/bernstein for this machine
 *   bun scripts/build.ts --all            -> the six platform binaries + dist/SHA256SUMS
 *   bun scripts/build.ts --out P          -> host binary at P (tests build their own copy)
 *   bun scripts/build.ts --target NAME --out P -> one platform's binary (NAME from TARGETS)
 * Config autoloading is off: a `.env` or `bunfig.toml` in the user's cwd must
 * never change what the binary does.
 */
import { $ } from "bun";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";

const root = join(import.meta.dir, "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };

/** Entry points bundled into the binary: the CLI first, then worker modules. */
export const ENTRYPOINTS = ["src/cli/main.ts", ...extraEntrypoints()];

function extraEntrypoints(): string[] {
  const listed = join(root, "scripts", "worker-entrypoints.txt");
  try {
    return readFileSync(listed, "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  } catch {
    return [];
  }
}

export const TARGETS = [
  ["linux-x64", "bun-linux-x64"],
  ["linux-arm64", "bun-linux-arm64"],
  ["linux-x64-musl", "bun-linux-x64-musl"],
  ["darwin-x64", "bun-darwin-x64"],
  ["darwin-arm64", "bun-darwin-arm64"],
  ["windows-x64", "bun-windows-x64"],
] as const;

export type Platform = (typeof TARGETS)[number][0];

/** File name of a platform's binary in dist/. */
export function binaryName(platform: Platform): string {
  return `bernstein-${platform}${platform.startsWith("windows") ? ".exe" : ""}`;
}

/**
 * The runtime Bun embeds for a cross target, as Bun names it in its cache and
 * errors (it spells arm64 as aarch64), and the npm tarball it fetches it from
 * unless BUN_COMPILE_TARGET_TARBALL_URL overrides the address.
 */
export function runtimeOf(target: string): { name: string; url: string } {
  const pkgName = target.replace("arm64", "aarch64");
  return {
    name: `${pkgName}-v${Bun.version}`,
    url: `https://registry.npmjs.org/@oven/${pkgName}/-/${pkgName}-${Bun.version}.tgz`,
  };
}

/** Where Bun keeps cross-compile runtimes (the first of the places bun install also uses). */
function runtimeCacheDir(): string {
  const env = process.env;
  if (env.BUN_INSTALL_CACHE_DIR) return env.BUN_INSTALL_CACHE_DIR;
  if (env.BUN_INSTALL) return join(env.BUN_INSTALL, "install", "cache");
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, ".bun", "install", "cache");
  return join(homedir(), ".bun", "install", "cache");
}

/** Bun's own failure text, turned into one that names the runtime and the way out. */
function compileFailure(stderr: string, platform: string, target: string | undefined): Error {
  const fetchFailed = /Failed to (?:download|extract executable for) '([^']+)'[^\n]*/.exec(stderr);
  if (target && fetchFailed) {
    const rt = runtimeOf(target);
    return new Error(
      `could not fetch Bun's ${platform} runtime ${fetchFailed[1]} (Bun said: ${fetchFailed[0].trim()}).\n` +
        `  Bun downloads it from ${process.env.BUN_COMPILE_TARGET_TARBALL_URL || rt.url}\n` +
        `  into its cache as ${join(runtimeCacheDir(), rt.name)} (BUN_INSTALL_CACHE_DIR moves it).\n` +
        `  Allow that download once, put the runtime in the cache, set BUN_COMPILE_TARGET_TARBALL_URL to a mirror,\n` +
        `  or build only this machine's binary with \`npm run build:host\`.`,
    );
  }
  return new Error(`bun build failed for ${platform}:\n${stderr.trim()}`);
}

export async function compile(outfile: string, target?: string, platform = target ?? "host"): Promise<void> {
  mkdirSync(dirname(outfile), { recursive: true });
  const args = [
    "build",
    ...ENTRYPOINTS,
    "--compile",
    "--splitting",
    "--bytecode",
    "--format=esm",
    "--minify",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    "--no-compile-autoload-tsconfig",
    "--no-compile-autoload-package-json",
    `--define=BERNSTEIN_VERSION=${JSON.stringify(pkg.version)}`,
    `--define=BERNSTEIN_COMMIT=${JSON.stringify((() => { try { return Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: root }).stdout.toString().trim(); } catch { return ""; } })())}`, // contract: `--version --as-json` commit ("" -> "unknown")
    // Hermetic: the bundle never inlines the builder's NODE_ENV (bun test sets
    // "test"), so a build inside the test runner equals a release build.
    `--define=process.env.NODE_ENV=${JSON.stringify("production")}`,
    `--outfile=${outfile}`,
  ];
  if (target) args.push(`--target=${target}`);
  const r = await $`${process.execPath} ${args}`.cwd(root).quiet().nothrow();
  if (r.exitCode !== 0) throw compileFailure(r.stderr.toString() + r.stdout.toString(), platform, target);
}

export function sha256File(file: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");
}

/** The six platform binaries, dist/bernstein for this machine, and dist/SHA256SUMS over the six. */
export async function buildAll(dist = join(root, "dist")): Promise<void> {
  // A failed run must not leave an older SHA256SUMS that looks like this build's.
  rmSync(join(dist, "SHA256SUMS"), { force: true });
  const lines: string[] = [];
  for (const [name, target] of TARGETS) {
    const file = join(dist, binaryName(name));
    await compile(file, target, name);
    lines.push(`${sha256File(file)}  ${basename(file)}`);
    console.error(`built ${basename(file)}`);
  }
  await compile(join(dist, "bernstein"));
  writeFileSync(join(dist, "SHA256SUMS"), lines.join("\n") + "\n");
  console.error("wrote dist/SHA256SUMS");
}

function optionValue(argv: string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (!v || v.startsWith("--")) throw new Error(`${flag} needs a value`);
  return v;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--all")) return buildAll();
  const out = optionValue(argv, "--out") ?? join(root, "dist", "bernstein");
  const platform = optionValue(argv, "--target");
  if (platform === undefined) {
    await compile(out);
  } else {
    const found = TARGETS.find(([name]) => name === platform);
    if (!found) throw new Error(`unknown --target ${platform}: one of ${TARGETS.map(([n]) => n).join(", ")}`);
    await compile(out, found[1], found[0]);
  }
  console.error(`built ${out}`);
}

if (import.meta.main) {
  try {
    await main();
  } catch (err) {
    console.error(`build: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
