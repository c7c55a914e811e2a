import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernsteinJson, binPath, VECTORS } from "../../helpers/cli.ts";
import { craftTar, listTar } from "../../receipts/tarcraft.ts";

/**
 * Input you can trust for receipts and step journals (issue 15): a receipt
 * on standard input verifies as the file does, a path that is not a regular
 * file is refused before any read, and the verdict says how many bytes it
 * read. Every spawn has a 5 s guard: a hang fails instead of blocking.
 */

const AJ = join(VECTORS, "agent-journal");
const RECEIPT = join(AJ, "agent-a.tar");
const GUARD = 5_000;
const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

function workdir(): string {
  const d = mkdtempSync(join(tmpdir(), "bernstein-receipt-input-"));
  made.push(d);
  return d;
}

/** `cat FILE | bernstein ARGS --as-json` through a real pipe. */
async function piped(file: string, args: string[], cwd: string): Promise<{ code: number; json: any }> {
  const proc = Bun.spawn(["sh", "-c", 'cat "$IN" | "$BIN" "$@" --as-json', "sh", ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", IN: file, BIN: binPath() },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), GUARD);
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(timer);
  return { code, json: JSON.parse(stdout) };
}

describe("replay verify reads a receipt from standard input", () => {
  test("a piped receipt (- and /dev/stdin) gives the file's verdict, bytes_read = its size; a tampered one exits 1 with the same errors", async () => {
    const cwd = workdir();
    const members = listTar(readFileSync(RECEIPT));
    const journal = new TextDecoder().decode(members[1]!.data).replace("Step 5:", "Step 6:");
    const bad = join(cwd, "bad.tar");
    writeFileSync(bad, craftTar([{ name: "manifest.json", data: members[0]!.data }, { name: "journal/000000.jsonl", data: journal }]));
    for (const [file, code] of [[RECEIPT, 0], [bad, 1]] as const) {
      const direct = await bernsteinJson(["replay", "verify", file], { cwd, timeoutMs: GUARD });
      expect([direct.code, direct.json.bytes_read]).toEqual([code, statSync(file).size]);
      for (const word of ["-", "/dev/stdin"]) {
        const p = await piped(file, ["replay", "verify", word], cwd);
        expect({ word, code: p.code, json: p.json }).toEqual({ word, code, json: direct.json });
      }
    }
    // The spooled copy of stdin is gone afterwards.
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith("bernstein-stdin-"))).toEqual([]);
  }, 30_000);

  test("diff-journal takes one side from standard input (journal or receipt); both sides from stdin is a usage error", async () => {
    const cwd = workdir();
    cpSync(join(AJ, "sdd"), join(cwd, ".sdd"), { recursive: true });
    const bucket = join(cwd, ".sdd", "runtime", "journal", "agent-b", "000000.jsonl");
    const direct = await bernsteinJson(["replay", "diff-journal", "agent-a", bucket], { cwd, timeoutMs: GUARD });
    const fromStdin = await piped(bucket, ["replay", "diff-journal", "agent-a", "-"], cwd);
    expect([fromStdin.code, fromStdin.json]).toEqual([direct.code, direct.json]);
    const receipt = await piped(RECEIPT, ["replay", "diff-journal", "/dev/stdin", "agent-a"], cwd);
    expect(receipt.json).toEqual((await bernsteinJson(["replay", "diff-journal", RECEIPT, "agent-a"], { cwd })).json);
    const both = await piped(RECEIPT, ["replay", "diff-journal", "-", "/dev/stdin"], cwd);
    expect([both.code, both.json.error]).toEqual([2, "usage"]);
  }, 30_000);
});

describe("a receipt or step journal that is not a regular file is refused before any read", () => {
  test("replay verify and diff-journal of /dev/zero, /dev/null, a directory, a FIFO, a symlink to /dev/zero: exit 3 input_not_regular_file", async () => {
    const cwd = workdir();
    Bun.spawnSync(["mkfifo", join(cwd, "fifo.tar")]);
    symlinkSync("/dev/zero", join(cwd, "zero.tar"));
    mkdirSync(join(cwd, "dir.tar"));
    cpSync(join(AJ, "sdd"), join(cwd, ".sdd"), { recursive: true });
    for (const p of ["/dev/zero", "/dev/null", "dir.tar", "fifo.tar", "zero.tar"]) {
      for (const args of [["replay", "verify", p], ["replay", "diff-journal", p, "agent-a"], ["replay", "diff-journal", "agent-a", p]]) {
        const r = await bernsteinJson(args, { cwd, timeoutMs: GUARD });
        expect({ args, code: r.code, error: r.json.error }).toEqual({ args, code: 3, error: "input_not_regular_file" });
      }
    }
  }, 30_000);

  for (const [kind, make] of [
    ["fifo", (at: string) => Bun.spawnSync(["mkfifo", at])],
    ["directory", (at: string) => mkdirSync(at)],
  ] as const) {
    test(`an agent whose step journal is a ${kind}: view, export, publish, diff-journal`, async () => {
      const cwd = workdir();
      mkdirSync(join(cwd, ".sdd", "runtime", "journal", "ag"), { recursive: true });
      make(join(cwd, ".sdd", "runtime", "journal", "ag", "000000.jsonl"));
      const commands = [
        ["replay", "ag"],
        ["replay", "export", "ag", join(cwd, "x.tar")],
        ["replay", "publish", "ag", join(cwd, "y.tar"), "--yes-i-want-to-publish"],
        ["replay", "diff-journal", "ag", "ag"],
      ];
      for (const args of commands) {
        const r = await bernsteinJson(args, { cwd, timeoutMs: GUARD });
        expect({ args, code: r.code, error: r.json.error }).toEqual({ args, code: 3, error: "input_not_regular_file" });
      }
      expect(readdirSync(cwd).sort()).toEqual([".sdd"]);
    }, 30_000);
  }
});
