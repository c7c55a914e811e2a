/**
 * Build the standalone `bernstein` executable.
 *   bun scripts/build.ts                  -> dist/bernstein for this machine
 *   bun scripts/build.ts --all            -> the six platform binaries + dist/SHA256SUMS
 *   bun scripts/build.ts --all --fresh    -> the same, compiling every one again
 *   bun scripts/build.ts --out P          -> host binary at P (tests build their own copy)
 * The host binary IS the release build of the host's platform (same `--target`,
 * so the same bytes): what the suite ran is what ships. `--all` reuses a
 * platform binary already in dist/ when dist/BUILDINFO says it was built from
 * the same inputs and its bytes still hash as recorded.
 *   bun scripts/build.ts --target NAME --out P -> one platform's binary (NAME from TARGETS)
 * Config autoloading is off: a `.env` or `bunfig.toml` in the user's cwd must
 * never change what the binary does.
 */
import { $ } from "bun";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
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

/**
 * The release platform this machine runs, or undefined when none of TARGETS
 * is it. Linux x64 with musl libc is linux-x64-musl.
 */
export function hostPlatform(): Platform | undefined {
  const arch = process.arch === "x64" ? "x64" : process.arch === "arm64" ? "arm64" : undefined;
  if (!arch) return undefined;
  let name: string;
  if (process.platform === "linux") name = `linux-${arch}${arch === "x64" && isMusl() ? "-musl" : ""}`;
  else if (process.platform === "darwin") name = `darwin-${arch}`;
  else if (process.platform === "win32") name = `windows-${arch}`;
  else return undefined;
  return TARGETS.find(([n]) => n === name)?.[0];
}

/** musl's dynamic loader is in /lib (as install.sh checks too). */
function isMusl(): boolean {
  try {
    return [...new Bun.Glob("ld-musl-*.so.1").scanSync({ cwd: "/lib", onlyFiles: false })].length > 0;
  } catch {
    return false;
  }
}

/** Bun's --target for a release platform. */
export function targetOf(platform: Platform): string {
  return TARGETS.find(([n]) => n === platform)![1];
}

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

/**
 * The profile the binary's bytecode is laid out by (Bun's --bytecode-order):
 * the functions the verbs load, recorded by scripts/record-bytecode-order.ts,
 * placed together at the front so a verb pages in less of the binary.
 * Relative to the repository root (the build runs there): the flags are hashed.
 */
export const BYTECODE_ORDER = "scripts/bytecode.order";

/**
 * Every flag but the output and target. A host build and a release build share
 * these, so the one binary the suite runs is byte-for-byte the shipped one.
 */
function buildArgs(): string[] {
  return [
    "build",
    ...ENTRYPOINTS,
    "--compile",
    "--splitting",
    "--bytecode",
    ...(existsSync(join(root, BYTECODE_ORDER)) ? [`--bytecode-order=${BYTECODE_ORDER}`] : []),
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
  ];
}

/**
 * Compile to `outfile`. Without `target`, the host's release target
 * (hostPlatform) when there is one, so a host build is a release build;
 * Bun's native default only on a machine no release covers.
 */
export async function compile(outfile: string, target?: string, platform?: string): Promise<void> {
  mkdirSync(dirname(outfile), { recursive: true });
  const host = target === undefined ? hostPlatform() : undefined;
  if (host) target = targetOf(host);
  platform ??= host ?? target ?? "host";
  // Bun embeds the output file's name in the binary (its module paths), so
  // dist/bernstein-linux-x64 and a test's …/bernstein would differ in ~340 KB.
  // Every build writes `bernstein` (`bernstein.exe`) in a private folder beside
  // the destination and is renamed into place: one name, one set of bytes.
  const exe = (target ?? "").includes("windows") || (!target && process.platform === "win32") ? "bernstein.exe" : "bernstein";
  const work = mkdtempSync(join(dirname(outfile), ".build-"));
  try {
    const args = [...buildArgs(), `--outfile=${join(work, exe)}`];
    if (target) args.push(`--target=${target}`);
    const r = await $`${process.execPath} ${args}`.cwd(root).quiet().nothrow();
    if (r.exitCode !== 0) throw compileFailure(r.stderr.toString() + r.stdout.toString(), platform, target);
    renameSync(join(work, exe), outfile);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function sha256File(file: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");
}

/**
 * What a binary's bytes depend on: the build flags, Bun's version, the
 * commit, and every source file bundled (src/, the build script, the worker
 * list, package.json, the lock file, bunfig.toml and tsconfig.json), as one SHA-256.
 */
export function inputsDigest(): string {
  const h = new Bun.CryptoHasher("sha256");
  h.update(JSON.stringify({ bun: Bun.version, revision: Bun.revision, args: buildArgs() }));
  const files = [...new Bun.Glob("src/**/*").scanSync({ cwd: root, onlyFiles: true })].sort();
  files.push("scripts/build.ts", "scripts/worker-entrypoints.txt", BYTECODE_ORDER, "package.json", "package-lock.json", "bunfig.toml", "tsconfig.json");
  for (const f of files) {
    let data: Uint8Array;
    try {
      data = readFileSync(join(root, f));
    } catch {
      continue;
    }
    h.update(`${f}\0${data.length}\0`);
    h.update(data);
  }
  return h.digest("hex");
}

interface BuildInfo {
  inputs: string;
  files: Record<string, string>;
}

function readBuildInfo(dist: string): BuildInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(join(dist, "BUILDINFO"), "utf8")) as BuildInfo;
    return typeof info.inputs === "string" && info.files && typeof info.files === "object" ? info : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The six platform binaries, dist/bernstein for this machine (a copy of its
 * platform's release binary, not a second compile), dist/SHA256SUMS over the
 * six and dist/BUILDINFO. A binary already in dist/ is reused when BUILDINFO
 * names the same inputs and the file still hashes as recorded.
 */
export async function buildAll(
  dist = join(root, "dist"),
  platforms: readonly Platform[] = TARGETS.map(([n]) => n),
  opts: { fresh?: boolean } = {},
): Promise<{ built: string[]; reused: string[] }> {
  const built: string[] = [];
  const reused: string[] = [];
  mkdirSync(dist, { recursive: true });
  // A failed run must not leave an older SHA256SUMS that looks like this build's.
  rmSync(join(dist, "SHA256SUMS"), { force: true });
  const inputs = inputsDigest();
  const old = opts.fresh ? undefined : readBuildInfo(dist);
  rmSync(join(dist, "BUILDINFO"), { force: true });
  const files: Record<string, string> = {};
  const lines: string[] = [];
  for (const [name, target] of TARGETS.filter(([n]) => platforms.includes(n))) {
    const file = join(dist, binaryName(name));
    const recorded = old?.inputs === inputs ? old.files[basename(file)] : undefined;
    if (recorded && existsSync(file) && sha256File(file) === recorded) {
      console.error(`reused ${basename(file)} (inputs unchanged)`);
      reused.push(basename(file));
    } else {
      await compile(file, target, name);
      console.error(`built ${basename(file)}`);
      built.push(basename(file));
    }
    files[basename(file)] = sha256File(file);
    lines.push(`${files[basename(file)]}  ${basename(file)}`);
  }
  const host = hostPlatform();
  if (host && platforms.includes(host)) {
    const tmp = join(dist, ".bernstein.tmp");
    copyFileSync(join(dist, binaryName(host)), tmp);
    renameSync(tmp, join(dist, "bernstein"));
    console.error(`dist/bernstein is ${binaryName(host)}`);
  } else {
    await compile(join(dist, "bernstein"));
  }
  writeFileSync(join(dist, "SHA256SUMS"), lines.join("\n") + "\n");
  writeFileSync(join(dist, "BUILDINFO"), JSON.stringify({ inputs, files }, null, 2) + "\n");
  console.error("wrote dist/SHA256SUMS");
  return { built, reused };
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
  if (argv.includes("--all")) {
    await buildAll(undefined, undefined, { fresh: argv.includes("--fresh") });
    return;
  }
  const out = optionValue(argv, "--out") ?? join(root, "dist", "bernstein");
  const platform = optionValue(argv, "--target");
  if (platform === undefined) {
    await compile(out);
    const host = hostPlatform();
    if (host) console.error(`${host} release build, sha256 ${sha256File(out)}`);
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
