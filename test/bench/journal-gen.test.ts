/** `bun bench/journal-gen.ts`: usage, refused arguments, deterministic journals the binary verifies. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, bernsteinJson } from "../helpers/cli.ts";

let dir: string;

function gen(args: string[]): { code: number; stdout: string; stderr: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "bench", "journal-gen.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

function written(args: string[]): Record<string, any> {
  const r = gen(args);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bernstein-journal-gen-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("bun bench/journal-gen.ts", () => {
  test("--help prints the usage on stdout (exit 0); no arguments print it on stderr (exit 2)", () => {
    const help = gen(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toStartWith("usage: bun bench/journal-gen.ts --sdd DIR --run ID --bytes N [--shape S] [--seed N] [--force]\n");
    expect(help.stdout).toContain("--shape S ");
    expect(help.stdout).toContain("--agent ID --steps N");
    const none = gen([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe("");
    expect(none.stderr).toBe("journal-gen: --sdd DIR is required\n" + help.stdout.split("\n\n")[0] + "\n");
  });

  test.each([
    [["--sdd", "D", "--run", "x"], "--run needs --bytes N"],
    [["--sdd", "D", "--run", "x", "--bytes", "-5"], '--bytes needs a positive number, got "-5"'],
    [["--sdd", "D", "--run", "x", "--bytes", "lots"], '--bytes needs a positive number, got "lots"'],
    [["--sdd", "D", "--run", "x", "--bytes", "1e6", "--seed", "1.5"], '--seed needs an integer from 0 to 4294967295, got "1.5"'],
    [["--sdd", "D", "--run", "x", "--bytes", "1e6", "--seed", "4294967296"], '--seed needs an integer from 0 to 4294967295, got "4294967296"'],
    [["--sdd", "D", "--agent", "x", "--steps", "0"], '--steps needs an integer from 1 to 9007199254740991, got "0"'],
    [["--sdd", "D", "--run", "x", "--agent", "y", "--bytes", "1"], "give exactly one of --run ID (with --bytes) and --agent ID (with --steps)"],
    [["--sdd", "D", "--run", "x", "--steps", "3", "--bytes", "1"], "--steps goes with --agent, not --run"],
    [["--sdd", "D", "--agent", "x", "--bytes", "3"], "--bytes goes with --run, not --agent"],
    [["--sdd", "D", "--run", "x", "--bytes"], "--bytes needs a value"],
    [["--sdd", "D", "--run", "x", "--run", "y", "--bytes", "1"], "--run given twice"],
    [["--sdd", "D", "--run", "x", "--bytes", "1", "--size", "3"], 'unknown argument: "--size"'],
  ])("%j is refused: %s (exit 2, nothing written)", (args, message) => {
    const r = gen(args.map((a) => (a === "D" ? join(dir, "refused") : a)));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.split("\n")[0]).toBe(`journal-gen: ${message}`);
    expect(r.stderr).toContain("usage: ");
    expect(existsSync(join(dir, "refused"))).toBe(false);
  });

  test("an unsafe run id is the writer's invalid_run_id refusal (exit 2), no stack trace", () => {
    const r = gen(["--sdd", join(dir, "unsafe"), "--run", "../escape", "--bytes", "1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toStartWith('journal-gen: unsafe run_id for journal path: "../escape"');
    expect(r.stderr).not.toContain("    at ");
  });

  test("the same seed writes the same bytes; another seed other bytes; the binary verifies them", async () => {
    const one = written(["--sdd", join(dir, "s1"), "--run", "r", "--bytes", "1e5", "--seed", "42"]);
    const two = written(["--sdd", join(dir, "s2"), "--run", "r", "--bytes", "1e5", "--seed", "42"]);
    const other = written(["--sdd", join(dir, "s3"), "--run", "r", "--bytes", "1e5", "--seed", "43"]);
    expect(one).toMatchObject({ kind: "run", rows: 4096, seed: 42, path: join(dir, "s1", "runs", "r", "journal.jsonl") });
    const bytes = readFileSync(one.path);
    expect(bytes.length).toBe(one.bytes);
    expect(readFileSync(two.path).equals(bytes)).toBe(true);
    expect(readFileSync(other.path).equals(bytes)).toBe(false);
    const v = await bernsteinJson(["journal", "verify", one.path]);
    expect(v.code).toBe(0);
    expect(v.json.count).toBe(4096);
  });

  test("an existing journal is kept unless --force", () => {
    const args = ["--sdd", join(dir, "again"), "--run", "r", "--bytes", "1", "--seed", "1"];
    const first = written(args);
    const before = readFileSync(first.path);
    const r = gen([...args.slice(0, -1), "2"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`journal-gen: ${first.path} exists (--force replaces it)\n`);
    expect(readFileSync(first.path).equals(before)).toBe(true);
    const forced = written([...args.slice(0, -1), "2", "--force"]);
    expect(readFileSync(forced.path).equals(before)).toBe(false);
  });

  test("a step journal: same seed, same steps and step hashes (ts is the writer's clock); the binary verifies it", async () => {
    const a = written(["--sdd", join(dir, "ag1"), "--agent", "agent-x", "--steps", "50", "--seed", "7"]);
    const b = written(["--sdd", join(dir, "ag2"), "--agent", "agent-x", "--steps", "50", "--seed", "7"]);
    const c = written(["--sdd", join(dir, "ag3"), "--agent", "agent-x", "--steps", "50", "--seed", "8"]);
    expect(a).toMatchObject({ kind: "agent", steps: 50, seed: 7, path: join(dir, "ag1", "runtime", "journal", "agent-x", "000000.jsonl") });
    expect(b.head).toBe(a.head);
    expect(c.head).not.toBe(a.head);
    const withoutTs = (p: string) => readFileSync(p, "utf8").replace(/"ts":\s*[0-9.e+-]+/g, "\"ts\":0");
    expect(withoutTs(b.path)).toBe(withoutTs(a.path));
    const view = await bernsteinJson(["replay", "agent-x", "--sdd-dir", join(dir, "ag1")]);
    expect(view.code).toBe(0);
    expect(view.json.steps).toBe(50);
    expect(view.json.head_hash).toBe(a.head);
    expect(gen(["--sdd", join(dir, "ag1"), "--agent", "agent-x", "--steps", "5"]).code).toBe(2);
    expect(written(["--sdd", join(dir, "ag1"), "--agent", "agent-x", "--steps", "5", "--force"]).steps).toBe(5);
  });
});
