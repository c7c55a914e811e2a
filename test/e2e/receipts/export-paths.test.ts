/**
 * Issue 16 items 7, 8 and 15 (publish warnings) through the compiled
 * binary: export/publish never write over journals, non-regular files or
 * (without --force) existing files; writers refuse symlinks inside .sdd
 * that lead out; publish warns about unredacted absolute paths.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { forbiddenExportChecks } from "../../../tools/fuzz/writers.ts";
import { StepJournal } from "../../../src/steps/writer.ts";
import { bernstein, bernsteinJson, binPath } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("e2e-export-paths");
afterAll(() => dirs.cleanup());

function agent(sdd: string, id = "ag", toolCall: unknown = { name: "t" }): string {
  const j = StepJournal.open(sdd, id);
  for (let i = 0; i < 3; i++) j.append({ input_hash: `h${i}`, prompt: "p", tool_call: toolCall as never, tool_result: { i } });
  j.close();
  return join(sdd, "runtime", "journal", id, "000000.jsonl");
}

describe("export/publish output paths (item 7)", () => {
  test("a run journal, the agent's own 000000.jsonl and anything under .sdd/runs or .sdd/runtime/journal are refused untouched", async () => {
    const cwd = dirs.make();
    const bucket = agent(join(cwd, ".sdd"));
    expect((await bernsteinJson(["journal", "record", "r1", "x"], { cwd })).code).toBe(0);
    const journal = join(cwd, ".sdd", "runs", "r1", "journal.jsonl");
    const before = readFileSync(journal);
    for (const target of [".sdd/runs/r1/journal.jsonl", ".sdd/runs/r1/receipt.tar", ".sdd/runtime/journal/ag/000000.jsonl", ".sdd/runtime/journal/x.tar"]) {
      for (const verb of ["export", "publish"]) {
        const r = await bernsteinJson(["replay", verb, "ag", target, "--force", "--yes-i-want-to-publish"].filter((a) => verb === "publish" || a !== "--yes-i-want-to-publish"), { cwd });
        expect({ target, verb, code: r.code, error: r.json.error }).toEqual({ target, verb, code: 2, error: "output_forbidden" });
      }
    }
    expect(readFileSync(journal).equals(before)).toBe(true);
    expect(readFileSync(bucket, "utf8").split("\n")).toHaveLength(4);
    expect(existsSync(join(cwd, ".sdd", "runs", "r1", "receipt.tar"))).toBe(false);
  });

  test("an existing file needs --force; an empty path or '.' is a usage error (exit 2)", async () => {
    const cwd = dirs.make();
    agent(join(cwd, ".sdd"));
    writeFileSync(join(cwd, "mine.tar"), "my notes\n");
    const refused = await bernsteinJson(["replay", "export", "ag", "mine.tar"], { cwd });
    expect([refused.code, refused.json.error]).toEqual([2, "output_exists"]);
    expect(readFileSync(join(cwd, "mine.tar"), "utf8")).toBe("my notes\n");
    const forced = await bernsteinJson(["replay", "export", "ag", "mine.tar", "--force"], { cwd });
    expect(forced.code).toBe(0);
    expect(readFileSync(join(cwd, "mine.tar")).length % 10240).toBe(0);
    expect(statSync(join(cwd, "mine.tar")).mode & 0o777).toBe(0o644);
    for (const bad of ["", ".", "..", "sub/"]) {
      const r = await bernsteinJson(["replay", "export", "ag", bad], { cwd });
      expect({ bad, code: r.code, error: r.json.error }).toEqual({ bad, code: 2, error: "invalid_output_path" });
    }
    // the default path is bernstein's own: refreshed by every export, 0600 in 0700 like all of .sdd/runtime
    for (let i = 0; i < 2; i++) expect((await bernsteinJson(["replay", "export", "ag"], { cwd })).code).toBe(0);
    expect(statSync(join(cwd, ".sdd/runtime/receipts/ag.tar")).mode & 0o777).toBe(0o600);
    expect(statSync(join(cwd, ".sdd/runtime/receipts")).mode & 0o777).toBe(0o700);
  });

  test("/dev/null and other non-regular targets are refused and stay what they were", async () => {
    const cwd = dirs.make();
    agent(join(cwd, ".sdd"));
    const r = await bernsteinJson(["replay", "export", "ag", "/dev/null", "--force"], { cwd });
    expect([r.code, r.json.error]).toEqual([2, "output_forbidden"]);
    expect(lstatSync("/dev/null").isCharacterDevice()).toBe(true);
  });

  test("the forbidden-target battery (both verbs, every target)", async () => {
    expect(await forbiddenExportChecks(binPath(), dirs.make())).toBeGreaterThanOrEqual(24);
  }, 30_000);
});

describe("symlinked state directories (item 8)", () => {
  test("a symlinked .sdd root is followed (writes land in its target)", async () => {
    const cwd = dirs.make();
    const real = join(cwd, "elsewhere");
    mkdirSync(real);
    symlinkSync(real, join(cwd, ".sdd"));
    expect((await bernsteinJson(["journal", "record", "r", "x"], { cwd })).code).toBe(0);
    expect(existsSync(join(real, "runs", "r", "journal.jsonl"))).toBe(true);
    agent(join(cwd, ".sdd"));
    expect((await bernsteinJson(["replay", "export", "ag"], { cwd })).code).toBe(0);
    expect(existsSync(join(real, "runtime", "receipts", "ag.tar"))).toBe(true);
  });

  test("a symlink inside .sdd that points inside it is followed", async () => {
    const cwd = dirs.make();
    mkdirSync(join(cwd, ".sdd", "runs-real"), { recursive: true });
    symlinkSync(join(cwd, ".sdd", "runs-real"), join(cwd, ".sdd", "runs"));
    expect((await bernsteinJson(["journal", "record", "r", "x"], { cwd })).code).toBe(0);
    expect(existsSync(join(cwd, ".sdd", "runs-real", "r", "journal.jsonl"))).toBe(true);
  });

  for (const layout of ["runs", "runtime", "runtime/receipts", "runtime/journal"]) {
    test(`.sdd/${layout} -> outside: writers refuse (state_path_escapes), nothing is created outside`, async () => {
      const cwd = dirs.make();
      const sdd = join(cwd, ".sdd");
      // the agent's journal and a torn run journal exist before the link is planted
      agent(sdd);
      expect((await bernsteinJson(["journal", "record", "r", "x"], { cwd })).code).toBe(0);
      writeFileSync(join(sdd, "runs", "r", "journal.jsonl"), readFileSync(join(sdd, "runs", "r", "journal.jsonl"), "utf8") + '{"ts": 1');
      const outside = join(cwd, "outside");
      mkdirSync(outside);
      const linkAt = join(sdd, ...layout.split("/"));
      if (existsSync(linkAt)) {
        // move the real directory's content aside: the link replaces it
        Bun.spawnSync(["cp", "-a", `${linkAt}/.`, outside]);
        Bun.spawnSync(["rm", "-rf", linkAt]);
      }
      mkdirSync(join(linkAt, ".."), { recursive: true });
      symlinkSync(outside, linkAt);
      const before = readdirSync(outside, { recursive: true }).sort();
      const attempts: string[][] =
        layout === "runs"
          ? [["journal", "record", "r", "x"], ["journal", "seal", "r"], ["replay", "repair", "r"]]
          : layout === "runtime/journal"
            ? [] // only read there by export (reads follow links); the writer is checked below
            : [["replay", "export", "ag"], ["replay", "publish", "ag", "--yes-i-want-to-publish"]];
      for (const args of attempts) {
        const r = await bernsteinJson(args, { cwd });
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
        expect({ args, error: r.json.error }).toEqual({ args, error: "state_path_escapes" });
      }
      if (layout === "runtime/journal") {
        expect((await bernsteinJson(["replay", "export", "ag"], { cwd })).code).toBe(0);
        expect(() => StepJournal.open(sdd, "ag")).toThrow(expect.objectContaining({ code: "state_path_escapes" }));
        expect(() => StepJournal.open(sdd, "new-agent")).toThrow(expect.objectContaining({ code: "state_path_escapes" }));
      }
      expect(readdirSync(outside, { recursive: true }).sort()).toEqual(before);
    });
  }
});

describe("publish warns about absolute paths (item 15, publish side)", () => {
  test("unredacted tool_call.argv/cwd holding absolute paths: stderr and JSON warnings; --redact tool_call covers them", async () => {
    const cwd = dirs.make();
    agent(join(cwd, ".sdd"), "ag", { adapter: "script", argv: ["/home/someone/ws/agent.sh", "{prompt}"], cwd: "/home/someone/ws", task_id: "T1" });
    const r = await bernsteinJson(["replay", "publish", "ag", "--yes-i-want-to-publish"], { cwd });
    expect(r.code).toBe(0);
    expect(r.json.warnings).toHaveLength(2);
    expect(r.json.warnings[0]).toContain("tool_call.argv");
    expect(r.json.warnings[1]).toContain("tool_call.cwd");
    expect(r.json.warnings[1]).toContain("--redact tool_call");
    expect(r.stderr).toContain("tool_call.cwd still holds an absolute path");
    const covered = await bernsteinJson(["replay", "publish", "ag", "p2.tar", "--yes-i-want-to-publish", "--redact", "tool_call"], { cwd });
    expect([covered.code, covered.json.warnings]).toEqual([0, []]);
    // --redact is repeatable
    const repeated = await bernsteinJson(["replay", "publish", "ag", "p3.tar", "--yes-i-want-to-publish", "--redact", "model", "--redact", "tool_call"], { cwd });
    expect([repeated.code, repeated.json.warnings]).toEqual([0, []]);
    const prose = await bernstein(["replay", "publish", "ag", "p4.tar", "--yes-i-want-to-publish", "--redact", "tool_call"], { cwd });
    expect(prose.stderr).not.toContain("absolute path");
  });

  test("relative argv/cwd (what our orchestrator records) raise no warning", async () => {
    const cwd = dirs.make();
    agent(join(cwd, ".sdd"), "ag", { adapter: "script", argv: ["./agent.sh", "{prompt}"], cwd: ".", task_id: "T1" });
    const r = await bernsteinJson(["replay", "publish", "ag", "--yes-i-want-to-publish"], { cwd });
    expect([r.code, r.json.warnings]).toEqual([0, []]);
  });
});
