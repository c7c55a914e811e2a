/**
 * Build the standalone `bernstein` executable.
 *   bun scripts/build.ts          -> dist/bernstein for this machine
 *   bun scripts/build.ts --all    -> the six platform binaries + dist/SHA256SUMS
 *   bun scripts/build.ts --out P  -> host binary at P (tests build their own copy)
 * Config autoloading is off: a `.env` or `bunfig.toml` in the user's cwd must
 * never change what the binary does.
 */
import { $ } from "bun";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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

async function compile(outfile: string, target?: string): Promise<void> {
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
  await $`${process.execPath} ${args}`.cwd(root).quiet();
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const outIdx = argv.indexOf("--out");
  if (argv.includes("--all")) {
    const lines: string[] = [];
    for (const [name, target] of TARGETS) {
      const file = join(root, "dist", `bernstein-${name}${name.startsWith("windows") ? ".exe" : ""}`);
      await compile(file, target);
      const digest = new Bun.CryptoHasher("sha256").update(await Bun.file(file).bytes()).digest("hex");
      lines.push(`${digest}  ${basename(file)}`);
      console.error(`built ${basename(file)}`);
    }
    await compile(join(root, "dist", "bernstein"));
    writeFileSync(join(root, "dist", "SHA256SUMS"), lines.join("\n") + "\n");
    console.error("wrote dist/SHA256SUMS");
    return;
  }
  const out = outIdx >= 0 ? argv[outIdx + 1]! : join(root, "dist", "bernstein");
  await compile(out);
  console.error(`built ${out}`);
}

if (import.meta.main) await main();
