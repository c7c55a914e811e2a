import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson, binPath } from "../../helpers/cli.ts";
import { RUN_VECTORS, makeSdd, writeMetadata, type SddTree } from "./fixture.ts";

const VERBS = ["list", "agents", "latest", "diff", "repair", "export", "publish", "verify", "diff-journal", "debug"];
/** Every flag `replay` declares; a verb's page shows only its own. */
const ALL_REPLAY_FLAGS = ["--limit", "--verify", "--from-step", "--seal", "--threads", "--links-only", "--head", "--public-key", "--sign", "--redact", "--yes-i-want-to-publish", "--model", "--extra-context", "--timeout"];
const OWN_FLAGS: Record<string, string[]> = {
  list: ["--limit"],
  diff: [],
  repair: ["--seal"],
  export: ["--sign"],
  publish: ["--yes-i-want-to-publish", "--redact", "--sign"],
  verify: ["--head", "--public-key"],
  "diff-journal": [],
  latest: ["--limit", "--verify", "--from-step", "--seal", "--threads", "--links-only"],
};

/** Option names on a help page (the OPTIONS block only). */
function optionsOf(page: string): string[] {
  const block = page.split("\nOPTIONS\n")[1]?.split(/\n\n[A-Z]/)[0] ?? "";
  // The option's own name: the last `--name` before its `=<value>` / description on each line.
  return [...block.matchAll(/^\s*(?:-+[\w-]+, )*(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((f) => ALL_REPLAY_FLAGS.includes(f));
}

describe("replay <verb> --help shows that verb only (compiled binary)", () => {
  for (const verb of Object.keys(OWN_FLAGS)) {
    test(`replay ${verb} --help`, async () => {
      const r = await bernstein(["replay", verb, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(r.stdout).toContain(`USAGE bernstein replay ${verb} [OPTIONS]`);
      expect(optionsOf(r.stdout).sort()).toEqual([...OWN_FLAGS[verb]!].sort());
      expect(r.stdout).toContain("--sdd-dir");
    });
  }

  test("--help after the verb's arguments, and the target forms RUN_ID / AGENT_ID / TASK_ID", async () => {
    const r = await bernstein(["replay", "diff", "a", "b", "--help"]);
    expect(r.stdout).toContain("USAGE bernstein replay diff [OPTIONS] <RUN_A> <RUN_B>");
    const run = await bernstein(["replay", "RUN_ID", "--help"]);
    expect(optionsOf(run.stdout).sort()).toEqual(["--from-step", "--limit", "--links-only", "--seal", "--threads", "--verify"]);
    const task = await bernstein(["replay", "TASK_ID", "--help"]);
    expect(optionsOf(task.stdout).sort()).toEqual(["--extra-context", "--model", "--timeout"]);
  });

  test("replay --help is an overview: every verb listed, no verb's flags", async () => {
    const r = await bernstein(["replay", "--help"]);
    expect(r.code).toBe(0);
    for (const v of VERBS) expect(r.stdout).toMatch(new RegExp(`^\\s+${v}\\s+\\S`, "m"));
    expect(optionsOf(r.stdout)).toEqual([]);
    expect(r.stdout).toContain("Use bernstein replay <command> --help");
  });
});

describe("unknown replay words and command paths in errors (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd({ "run-1": "chain-4" });
  });
  afterAll(() => t.cleanup());

  test("a word that is no verb, run, agent or traced task is unknown_target (exit 2) listing the verbs", async () => {
    const r = await bernsteinJson(["replay", "lst"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ ok: false, error: "unknown_target", target: "lst", commands: VERBS, suggestion: "list" });
    expect(r.json.detail).not.toContain("No trace found");
    const prose = await bernstein(["replay", "lst"], { cwd: t.cwd });
    expect(prose.code).toBe(2);
    expect(prose.stdout).toBe("");
    expect(prose.stderr).toContain("'lst' is not a replay command");
    expect(prose.stderr).toContain("did you mean 'bernstein replay list'?");
    for (const v of VERBS) expect(prose.stderr).toContain(v);
  });

  test("a run directory without a journal is journal_missing (exit 3), not an unknown word", async () => {
    mkdirSync(t.runDir("hollow"), { recursive: true });
    const r = await bernsteinJson(["replay", "hollow"], { cwd: t.cwd });
    expect([r.code, r.json.error]).toEqual([3, "journal_missing"]);
  });

  test("unknown options name the full command path", async () => {
    const cases: [string[], string][] = [
      [["journal", "verify", "x.jsonl", "--thread", "2"], "unknown option '--thread' for 'bernstein journal verify'"],
      [["replay", "diff", "a", "b", "--thread", "2"], "unknown option '--thread' for 'bernstein replay diff'"],
      [["replay", "run-1", "--bogus"], "unknown option '--bogus' for 'bernstein replay'"],
      [["session", "show", "--bogus"], "unknown option '--bogus' for 'bernstein session show'"],
    ];
    for (const [args, message] of cases) {
      const r = await bernsteinJson(args, { cwd: t.cwd });
      expect([args.join(" "), r.code, r.json.error]).toEqual([args.join(" "), 2, "usage"]);
      expect(r.json.detail).toContain(message);
    }
  });
});

describe("latest and replay list: the run that started last first (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    // `torn` has no metadata and its first ts is 2025-11-13; the timestamped ids have metadata of 2026.
    t = makeSdd({ torn: "hazards-torn-tail", "20260101-090000": "chain-4", "20260301-090000": "chain-4", "20260201-090000": "chain-4" });
    for (const [id, at] of [["20260101-090000", 1767258000], ["20260301-090000", 1772355600], ["20260201-090000", 1769936400]] as const) {
      writeMetadata(t.runDir(id), { run_id: id, started_at: at + 0.5, git_sha: "", git_branch: "", config_hash: "", seed_path: null });
    }
  });
  afterAll(() => t.cleanup());

  test("a run named 'torn' no longer beats timestamped runs; latest is the newest start", async () => {
    const list = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
    expect(list.json.map((e: any) => e.run_id)).toEqual(["20260301-090000", "20260201-090000", "20260101-090000", "torn"]);
    const latest = await bernsteinJson(["replay", "latest", "--verify"], { cwd: t.cwd });
    expect(latest.json.run_id).toBe("20260301-090000");
    expect(latest.stderr).toContain("Replaying latest run: 20260301-090000");
  });

  test("without metadata the journal's first ts decides; the cache follows a changed start", async () => {
    const late = t.runDir("zz-no-metadata");
    mkdirSync(late, { recursive: true });
    // First row ts 1900000000 (2030): newer than every metadata start.
    writeFileSync(join(late, "journal.jsonl"), '{"ts": 1900000000.0, "event": "run_started"}\n');
    let r = await bernsteinJson(["replay", "list", "--limit", "1"], { cwd: t.cwd });
    expect(r.json.map((e: any) => e.run_id)).toEqual(["zz-no-metadata"]);
    // Metadata, once written, wins over the first ts (and the cached first ts is not reused for it).
    writeMetadata(late, { run_id: "zz-no-metadata", started_at: 1000000000.5, git_sha: "", git_branch: "", config_hash: "", seed_path: null });
    r = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
    expect(r.json.at(-1).run_id).toBe("zz-no-metadata"); // 2001, older than torn's 2025 first ts
    expect(r.json.at(-2).run_id).toBe("torn");
    const latest = await bernsteinJson(["replay", "latest", "--from-step", "0"], { cwd: t.cwd });
    expect(latest.stderr).toContain("Replaying latest run: 20260301-090000");
  });
});

/**
 * Root reads a mode-000 file, so as root the binary runs as `nobody` (setpriv)
 * for these checks: the permission bits then mean what they say.
 */
async function unprivileged(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const asRoot = process.getuid?.() === 0;
  const argv = asRoot ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binPath(), ...args] : [binPath(), ...args];
  const proc = Bun.spawn(argv, { cwd, env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

async function unprivilegedJson(args: string[], cwd: string) {
  const r = await unprivileged([...args, "--as-json"], cwd);
  return { ...r, json: JSON.parse(r.stdout) };
}

describe("replay list skips an unreadable run with a warning (compiled binary)", () => {
  test("one unreadable journal: warned and skipped, the others listed, exit 0; all unreadable: runs_unreadable exit 3", async () => {
    const t = makeSdd({ "20260101-090000": "chain-4", "20260102-090000": "chain-4" });
    chmodSync(t.cwd, 0o755);
    const bernsteinJson = (args: string[], o: { cwd: string }) => unprivilegedJson(args, o.cwd);
    const bernstein = (args: string[], o: { cwd: string }) => unprivileged(args, o.cwd);
    try {
      chmodSync(t.journal("20260102-090000"), 0o000);
      let r = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
      expect(r.code).toBe(0);
      expect(r.json.map((e: any) => e.run_id)).toEqual(["20260101-090000"]);
      expect(r.stderr).toContain("skipped 20260102-090000: cannot read it");
      const prose = await bernstein(["replay", "list"], { cwd: t.cwd });
      expect(prose.code).toBe(0);
      expect(prose.stdout).toContain("20260101-090000");
      expect(prose.stderr).toContain("skipped 20260102-090000");
      chmodSync(t.journal("20260101-090000"), 0o000);
      r = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
      expect(r.code).toBe(3);
      expect(r.json).toMatchObject({ ok: false, error: "runs_unreadable" });
      expect(r.json.unreadable.map((u: any) => u.run_id).sort()).toEqual(["20260101-090000", "20260102-090000"]);
      // latest says which runs it could not consider.
      chmodSync(t.journal("20260101-090000"), 0o644);
      const latest = await bernsteinJson(["replay", "latest", "--verify"], { cwd: t.cwd });
      expect(latest.json.run_id).toBe("20260101-090000");
      expect(latest.stderr).toContain("latest: skipped run 20260102-090000");
    } finally {
      chmodSync(t.journal("20260101-090000"), 0o644);
      chmodSync(t.journal("20260102-090000"), 0o644);
      t.cleanup();
    }
  });
});

describe("torn tails, sibling seals, --from-step (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd({ torn: "hazards-torn-tail", sealed: "chain-4", junk: "hazards-junk-line-middle" });
  });
  afterAll(() => t.cleanup());

  test("a torn-tail verdict names 'bernstein replay repair <RUN>' in prose and JSON", async () => {
    const r = await bernsteinJson(["replay", "torn", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, torn_tail: true, fix: "bernstein replay repair torn" });
    if (typeof r.json.detail === "string") expect(r.json.detail).toContain("bernstein replay repair torn");
    const prose = await bernstein(["replay", "torn", "--verify"], { cwd: t.cwd });
    expect(prose.stdout).toContain("fix: bernstein replay repair torn");
    const byFile = await bernsteinJson(["journal", "verify", t.journal("torn")], { cwd: t.cwd });
    expect(byFile.json.fix).toBe("bernstein replay repair torn");
    // Another state directory is named, so the command works as printed.
    const elsewhere = await bernsteinJson(["journal", "verify", t.journal("torn")], { cwd: join(t.cwd, "..") });
    expect(elsewhere.json.fix).toBe(`bernstein replay repair torn --sdd-dir ${t.sdd}`);
    // Middle corruption is not a torn tail: no repair advice.
    const junk = await bernsteinJson(["replay", "junk", "--verify"], { cwd: t.cwd });
    expect(junk.code).toBe(1);
    expect(junk.json.fix).toBeUndefined();
    expect((await bernstein(["replay", "junk", "--verify"], { cwd: t.cwd })).stdout).not.toContain("replay repair");
  });

  test("journal verify <run_dir>/journal.jsonl uses the sibling seal.json, like journal verify <RUN_ID>", async () => {
    const expectHead = JSON.parse(readFileSync(join(RUN_VECTORS, "chain-4.expect.json"), "utf8")).head;
    const seal = join(t.runDir("sealed"), "seal.json");
    writeFileSync(seal, JSON.stringify({ event_count: 4, head: expectHead }));
    const byId = await bernsteinJson(["journal", "verify", "sealed"], { cwd: t.cwd });
    const byPath = await bernsteinJson(["journal", "verify", t.journal("sealed")], { cwd: t.cwd });
    expect(byId.json.identity).toBe("verified");
    expect(byPath.json.identity).toBe(byId.json.identity);
    expect(byPath.json.seal).toBe(seal);
    const prose = await bernstein(["journal", "verify", t.journal("sealed")], { cwd: t.cwd });
    expect(prose.stdout).toContain(`seal: ${seal} (the run's seal.json, beside the journal`);
    // A seal that disagrees is a negative verdict by path too.
    writeFileSync(seal, JSON.stringify({ event_count: 5, head: expectHead }));
    const bad = await bernsteinJson(["journal", "verify", t.journal("sealed")], { cwd: t.cwd });
    expect(bad.code).toBe(1);
    // A journal file not named journal.jsonl has no sibling seal.
    copyFileSync(t.journal("sealed"), join(t.runDir("sealed"), "copy.jsonl"));
    const other = await bernsteinJson(["journal", "verify", join(t.runDir("sealed"), "copy.jsonl")], { cwd: t.cwd });
    expect([other.code, other.json.identity, other.json.seal]).toEqual([0, "unverifiable", null]);
  });
});
