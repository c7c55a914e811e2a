/**
 * The JSON contract, through the compiled binary: every success document has
 * `"ok": true` (`replay list` is the one documented exception: an array, as
 * the Python CLI prints it); every failure and negative verdict has
 * `ok: false`, a catalogued `error` whose exit code is the process's, and a
 * one-line `detail`; missing input of any kind exits 3.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { ERROR_CATALOGUE, isErrorCode } from "../../src/errors/index.ts";
import { makeSdd, type SddTree } from "../e2e/replay/fixture.ts";
import { bernstein, bernsteinJson, VECTORS } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";

let t: SddTree;
beforeAll(() => {
  t = makeSdd({ hazards: "hazards", copy: "hazards", tampered: "hazards-payload-edit", junk: "hazards-junk-line-middle", torn: "hazards-torn-tail" });
  // The same torn write with CRLF line ends; and a torn write after a junk line in the middle (not only a torn tail).
  const tornText = readFileSync(t.journal("torn"), "utf8");
  mkdirSync(t.runDir("torncrlf"));
  writeFileSync(t.journal("torncrlf"), tornText.replace(/\n/g, "\r\n"));
  mkdirSync(t.runDir("midcut"));
  writeFileSync(t.journal("midcut"), readFileSync(t.journal("junk"), "utf8") + '{"event": "cut');
  cpSync(join(VECTORS, "agent-journal", "sdd", "runtime"), join(t.sdd, "runtime"), { recursive: true });
  for (const d of ["runtime", "runtime/journal"]) chmodSync(join(t.sdd, d), 0o755);
  writeFileSync(join(t.cwd, "wrong-seal.json"), JSON.stringify({ head: "0".repeat(64), event_count: 300 }));
});
afterAll(() => t.cleanup());

async function run(args: string[]) {
  return bernsteinJson(args, { cwd: t.cwd });
}

/** A failure document: ok false, a catalogued code whose exit code is the process's, one line of detail. */
function expectFailure(r: { code: number; json: any }, error: string, exit: number) {
  expect([r.json.ok, r.json.error, r.code]).toEqual([false, error, exit]);
  expect(isErrorCode(r.json.error)).toBe(true);
  expect(ERROR_CATALOGUE[r.json.error as keyof typeof ERROR_CATALOGUE][0] as number).toBe(exit);
  expect(typeof r.json.detail).toBe("string");
  expect(r.json.detail.length).toBeGreaterThan(0);
  expect(r.json.detail).not.toContain("\n");
}

describe("--version", () => {
  test("--version --as-json (and --json -v) is {ok, version, commit, platform}", async () => {
    for (const args of [["--version", "--as-json"], ["--json", "-v"], ["--as-json", "--version"]]) {
      const r = await bernstein(args);
      expect([args, r.code]).toEqual([args, 0]);
      const doc = JSON.parse(r.stdout);
      expect(Object.keys(doc)).toEqual(["ok", "version", "commit", "platform"]);
      expect(doc).toMatchObject({ ok: true, version: pkg.version, platform: `${process.platform}-${process.arch}` });
      // Built from this checkout: the commit is baked in; "unknown" only where git was absent at build time.
      expect(doc.commit).toMatch(/^([0-9a-f]{40}|unknown)$/);
    }
  });

  test("plain --version is still the bare version line", async () => {
    for (const flag of ["--version", "-v"]) {
      const r = await bernstein([flag]);
      expect([r.code, r.stdout, r.stderr]).toEqual([0, pkg.version + "\n", ""]);
    }
  });

  test("--version with a command word is not the version", async () => {
    const r = await bernsteinJson(["journal", "--version"]);
    expect(r.json.version).toBeUndefined();
  });
});

describe("-json", () => {
  test("is refused as an unknown flag naming --json, and help advertises --json", async () => {
    const r = await bernstein(["journal", "verify", "hazards", "-json"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("unknown option '-json'");
    expect(r.stderr).toContain("did you mean '--json'?");
    const j = await run(["journal", "verify", "hazards", "-json"]);
    expectFailure(j, "usage", 2);
    // A one-letter flag spelled as a word is refused the same way (the parser would read -debug as -d -e -b -u -g).
    expect((await bernstein(["journal", "verify", "hazards", "-debug"], { cwd: t.cwd })).code).toBe(2);
    // --json itself is the alias of --as-json.
    const alias = await bernstein(["journal", "verify", "hazards", "--json"], { cwd: t.cwd });
    expect([alias.code, JSON.parse(alias.stdout).ok]).toEqual([0, true]);
    for (const cmd of [["journal", "verify"], ["replay"], ["run"], ["stop"], ["keys", "generate"]]) {
      const h = await bernstein([...cmd, "--help"]);
      expect([cmd, h.stdout.includes("-json,")]).toEqual([cmd, false]);
      expect([cmd, h.stdout.includes("--as-json")]).toEqual([cmd, true]);
      expect([cmd, h.stdout.includes("(also --json)")]).toEqual([cmd, true]);
    }
  });
});

describe("every success document has ok: true", () => {
  const successes: string[][] = [
    ["journal", "verify", "hazards"],
    ["journal", "seal", "copy"],
    ["journal", "verify", "copy"],
    ["journal", "record", "fresh", "note", "--data", '{"a": 1}'],
    ["replay", "hazards"],
    ["replay", "hazards", "--verify"],
    ["replay", "hazards", "--from-step", "3"],
    ["replay", "diff", "hazards", "copy"],
    ["replay", "repair", "hazards"],
    ["replay", "agent-a", "--limit", "1"],
    ["replay", "agents", "hazards"],
    ["replay", "export", "agent-a", "a.tar"],
    ["replay", "verify", "a.tar"],
    ["replay", "publish", "agent-a", "p.tar", "--yes-i-want-to-publish"],
    ["replay", "diff-journal", "agent-a", "a.tar"],
    ["keys", "generate", "--out-dir", "keys"],
    ["status"],
  ];
  for (const args of successes) {
    test(args.join(" "), async () => {
      const r = await bernstein([...args, "--as-json"], { cwd: t.cwd });
      expect([args, r.code]).toEqual([args, 0]);
      // Python's json reads the documents as the Python side would (journals carry NaN, which JSON.parse refuses).
      const doc = runPython("import json,sys\nd=json.loads(json.load(sys.stdin))\nprint(json.dumps([d.get('ok'), 'error' in d]))", r.stdout);
      expect([args, doc]).toEqual([args, [true, false]]);
    });
  }

  test("replay list --as-json stays a JSON array (the documented exception, as the Python CLI prints it)", async () => {
    const r = await run(["replay", "list"]);
    expect(r.code).toBe(0);
    expect(Array.isArray(r.json)).toBe(true);
    expect(r.json.map((x: { run_id: string }) => x.run_id).sort()).toContain("hazards");
  });
});

describe("every negative verdict carries error and detail", () => {
  const verdicts: [string[], string][] = [
    [["journal", "verify", "tampered"], "chain_broken"],
    [["journal", "verify", "junk"], "coverage_partial"],
    [["journal", "verify", "torn"], "torn_tail"],
    [["journal", "verify", "torncrlf"], "torn_tail"],
    [["replay", "torn", "--verify"], "torn_tail"],
    [["journal", "verify", "midcut"], "coverage_partial"],
    [["journal", "verify", "hazards", "--seal", "wrong-seal.json"], "seal_mismatch"],
    [["replay", "tampered", "--verify"], "chain_broken"],
    [["replay", "hazards", "--verify", "--seal", "wrong-seal.json"], "seal_mismatch"],
    [["replay", "diff", "hazards", "tampered"], "divergence"],
    [["replay", "diff-journal", "agent-a", "agent-c"], "divergence"],
  ];
  for (const [args, error] of verdicts) {
    test(`${args.join(" ")} -> ${error}`, async () => {
      const r = await run(args);
      expectFailure(r, error, 1);
      // The verdict's own facts stay beside the code (keys are added, never renamed).
      if (error === "torn_tail") expect(r.json.detail).toContain("fix: bernstein replay repair");
      else if (args[0] === "journal" || args.includes("--verify")) expect(r.json.errors[0]).toBe(r.json.detail.replace(/ \(and \d+ more error\(s\)\)$/, ""));
      else expect(r.json.diverged).toBe(true);
    });
  }

  test("a refusal of a journal that does not verify is a failure document too", async () => {
    expectFailure(await run(["journal", "seal", "tampered"]), "seal_refused", 2);
  });
});

describe("missing input of any kind exits 3", () => {
  const missing: [string[], string][] = [
    [["journal", "verify", "nosuch"], "journal_missing"],
    [["journal", "verify", "no/such/file.jsonl"], "journal_unreadable"],
    [["journal", "verify", "hazards", "--seal", "nosuch.json"], "seal_unreadable"],
    [["replay", "nosuch", "--verify"], "run_not_found"],
    [["replay", "diff", "hazards", "nosuch"], "run_not_found"],
    [["replay", "export", "nosuch"], "agent_journal_missing"],
    [["replay", "publish", "nosuch", "--yes-i-want-to-publish"], "agent_journal_missing"],
    [["replay", "diff-journal", "agent-a", "nosuch"], "agent_journal_missing"],
    [["replay", "verify", "nosuch.tar"], "receipt_not_found"],
    [["replay", "verify", "a.tar", "--public-key", "nosuch.pub"], "public_key_unreadable"],
    [["replay", "export", "agent-a", "b.tar", "--sign", "nosuch.key"], "signing_key_unreadable"],
    [["run", "nosuch-plan.yaml"], "plan_not_found"],
  ];
  for (const [args, error] of missing) {
    test(`${args.join(" ")} -> ${error}`, async () => {
      const r = await run(args);
      expectFailure(r, error, 3);
    });
  }
});
