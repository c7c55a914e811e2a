import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson, binPath, VECTORS } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";
import { craftTar } from "../../receipts/tarcraft.ts";

/**
 * No green without a journal (issue 29): an empty input (0 bytes, blank
 * lines only, an empty standard input) is `input_empty` and one in which no
 * line is a journal row is `not_a_journal`, both exit 3, in every verb that
 * reads a journal; `--allow-empty` brings back the verdict on 0 events.
 * Every case goes through the compiled binary.
 */

const dirs = tempDirs("e2e-no-journal");
afterAll(() => dirs.cleanup());
const RUN_JOURNAL = join(VECTORS, "run-journal", "hazards.jsonl");
const AGENT_JOURNAL = join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl");
const GUARD = 10_000;

/** A directory holding the inputs every case uses. */
function inputs(): Record<string, string> {
  const d = dirs.make();
  const files: Record<string, string> = {
    empty: "",
    blank: "\n\n   \n\r\n",
    plan: "name: demo\ntasks:\n  - id: T1\n",
    agent: "const a = 1;\nexport default a;\n",
    objects: '{"a": 1}\n{"b": [2]}\n',
  };
  const out: Record<string, string> = { dir: d };
  for (const [name, text] of Object.entries(files)) {
    out[name] = join(d, name);
    writeFileSync(out[name]!, text);
  }
  return out;
}

/** `printf '<text>' | bernstein ARGS --as-json` through a real pipe (sh), with a guard against a hang. */
async function piped(text: string, args: string[], cwd: string): Promise<{ code: number; json: any; stderr: string }> {
  const proc = Bun.spawn(["sh", "-c", 'printf "%s" "$TEXT" | "$BIN" "$@" --as-json', "sh", ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", TEXT: text, BIN: binPath() },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), GUARD);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, json: JSON.parse(stdout), stderr };
}

/** The refusal document: exit 3, ok false, the code, a detail naming the input, no stack trace. */
function expectRefused(r: { code: number; json: any; stderr: string }, error: string, input: string): void {
  expect([r.code, r.json.ok, r.json.error]).toEqual([3, false, error]);
  expect(r.json.detail).toContain(input);
  expect(r.stderr).not.toContain("    at ");
}

describe("journal verify", () => {
  test("an empty file, a blank-lines-only file: input_empty, exit 3; --allow-empty: ok, 0 events (the old verdict)", async () => {
    const f = inputs();
    for (const name of ["empty", "blank"]) {
      const r = await bernsteinJson(["journal", "verify", f[name]!], { cwd: f.dir });
      expectRefused(r, "input_empty", f[name]!);
      expect(r.json.detail).toContain("--allow-empty");
      const allowed = await bernsteinJson(["journal", "verify", f[name]!, "--allow-empty"], { cwd: f.dir });
      expect([allowed.code, allowed.json.ok, allowed.json.count, allowed.json.coverage]).toEqual([0, true, 0, "complete"]);
    }
    // Prose: the refusal on stderr, nothing claimed on stdout.
    const prose = await bernstein(["journal", "verify", f.empty!], { cwd: f.dir });
    expect([prose.code, prose.stdout]).toEqual([3, ""]);
    expect(prose.stderr).toContain("is empty");
  });

  test("`printf '' | journal verify -` (a failed download piped in): input_empty, exit 3; --allow-empty: ok", async () => {
    const cwd = dirs.make();
    expectRefused(await piped("", ["journal", "verify", "-"], cwd), "input_empty", "-");
    expectRefused(await piped("\n \n", ["journal", "verify", "-"], cwd), "input_empty", "-");
    const allowed = await piped("", ["journal", "verify", "-", "--allow-empty"], cwd);
    expect([allowed.code, allowed.json.ok, allowed.json.count, allowed.json.bytes_read]).toEqual([0, true, 0, 0]);
  });

  test("a file in which no line is a journal row: not_a_journal, exit 3 (was coverage_partial or chain_broken), --allow-empty or not", async () => {
    const f = inputs();
    for (const name of ["plan", "agent", "objects"]) {
      for (const extra of [[], ["--allow-empty"], ["--threads", "1"], ["--links-only"]]) {
        const r = await bernsteinJson(["journal", "verify", f[name]!, ...extra], { cwd: f.dir });
        expectRefused(r, "not_a_journal", f[name]!);
      }
    }
    // Standard input with no object at all is foreign too.
    expectRefused(await piped("name: demo\n", ["journal", "verify", "-"], f.dir!), "not_a_journal", "-");
    // No divergence report is written beside a file that is no journal.
    expect(existsSync(join(f.dir!, "divergence_report.json"))).toBe(false);
  });

  test("a journal keeps its verdicts: clean (0), torn tail and lines discarded in the middle (1), tampered first row (1)", async () => {
    const cwd = dirs.make();
    const clean = await bernsteinJson(["journal", "verify", RUN_JOURNAL], { cwd });
    expect([clean.code, clean.json.ok]).toEqual([0, true]);
    for (const [vector, error] of [
      ["hazards-torn-tail", "torn_tail"],
      ["hazards-junk-line-middle", "coverage_partial"],
      ["hazards-payload-edit", "chain_broken"],
    ] as const) {
      const r = await bernsteinJson(["journal", "verify", join(VECTORS, "run-journal", `${vector}.jsonl`)], { cwd });
      expect([vector, r.code, r.json.error]).toEqual([vector, 1, error]);
    }
    // The first row edited: still a journal row (event, event_hash), so a broken chain, not a refusal.
    const rows = readFileSync(RUN_JOURNAL, "utf8").split("\n");
    const edited = join(cwd, "first-edited.jsonl");
    writeFileSync(edited, [rows[0]!.replace('"event_hash": "', '"event_hash": "0'), ...rows.slice(1)].join("\n"));
    const r = await bernsteinJson(["journal", "verify", edited], { cwd });
    expect([r.code, r.json.error, r.json.divergent_index]).toEqual([1, "chain_broken", 0]);
  });

  test("several inputs: the empty one is refused and the exit is the worst; the journal beside it still verifies", async () => {
    const f = inputs();
    const r = await bernsteinJson(["journal", "verify", RUN_JOURNAL, f.empty!], { cwd: f.dir });
    expect([r.code, r.json.ok, r.json.error]).toEqual([3, false, "verify_failed"]);
    expect(r.json.results.map((x: any) => [x.ok, x.error ?? null])).toEqual([[true, null], [false, "input_empty"]]);
  });
});

describe("replay <RUN> --verify, --html, journal seal, journal checkpoint", () => {
  function runs(): { cwd: string } {
    const cwd = dirs.make();
    const f = inputs();
    for (const [id, src] of [["empty", f.empty!], ["blank", f.blank!], ["foreign", f.plan!], ["good", RUN_JOURNAL]] as const) {
      mkdirSync(join(cwd, ".sdd", "runs", id), { recursive: true });
      copyFileSync(src, join(cwd, ".sdd", "runs", id, "journal.jsonl"));
    }
    return { cwd };
  }

  test("replay <RUN> --verify: empty run journal → input_empty, foreign → not_a_journal; --allow-empty: ok", async () => {
    const { cwd } = runs();
    for (const id of ["empty", "blank"]) expectRefused(await bernsteinJson(["replay", id, "--verify"], { cwd }), "input_empty", id);
    expectRefused(await bernsteinJson(["replay", "foreign", "--verify"], { cwd }), "not_a_journal", "foreign");
    const allowed = await bernsteinJson(["replay", "empty", "--verify", "--allow-empty"], { cwd });
    expect([allowed.code, allowed.json.ok]).toEqual([0, true]);
    expect(existsSync(join(cwd, ".sdd", "runs", "foreign", "divergence_report.json"))).toBe(false);
    const good = await bernsteinJson(["replay", "good", "--verify"], { cwd });
    expect([good.code, good.json.ok]).toEqual([0, true]);
  });

  test("replay <RUN> --html: no page for an empty or foreign journal; --allow-empty draws the empty one", async () => {
    const { cwd } = runs();
    const out = join(cwd, "t.html");
    expectRefused(await bernsteinJson(["replay", "empty", "--html", out], { cwd }), "input_empty", "empty");
    expectRefused(await bernsteinJson(["replay", "foreign", "--html", out], { cwd }), "not_a_journal", "foreign");
    expect(existsSync(out)).toBe(false);
    const allowed = await bernsteinJson(["replay", "empty", "--html", out, "--allow-empty"], { cwd });
    expect([allowed.code, allowed.json.ok, existsSync(out)]).toEqual([0, true, true]);
  });

  test("journal seal: an empty journal is input_empty and a foreign one not_a_journal (exit 3), and no seal is written", async () => {
    const { cwd } = runs();
    expectRefused(await bernsteinJson(["journal", "seal", "empty"], { cwd }), "input_empty", "empty");
    expectRefused(await bernsteinJson(["journal", "seal", "foreign"], { cwd }), "not_a_journal", "foreign");
    for (const id of ["empty", "foreign"]) expect(existsSync(join(cwd, ".sdd", "runs", id, "seal.json"))).toBe(false);
    // Nothing to offer: an empty journal is never sealed.
    const r = await bernsteinJson(["journal", "seal", "empty"], { cwd });
    expect(r.json.detail).not.toContain("--allow-empty");
  });

  test("journal checkpoint: no signed tree head over an empty or foreign journal", async () => {
    const { cwd } = runs();
    const keys = await bernsteinJson(["keys", "generate", "--out-dir", join(cwd, "keys")], { cwd });
    expect(keys.code).toBe(0);
    for (const [id, error] of [["empty", "input_empty"], ["foreign", "not_a_journal"]] as const) {
      expectRefused(await bernsteinJson(["journal", "checkpoint", id, "--sign", keys.json.private_key], { cwd }), error, id);
      expect(existsSync(join(cwd, ".sdd", "runs", id, "checkpoint"))).toBe(false);
    }
  });

  test("--allow-empty is refused by a verb that does not take it", async () => {
    const { cwd } = runs();
    const r = await bernsteinJson(["replay", "good", "--allow-empty"], { cwd });
    expect([r.code, r.json.error]).toEqual([2, "flag_not_applicable"]);
  });
});

describe("replay diff-journal and replay diff", () => {
  test("diff-journal of two files that are not journals: not_a_journal, exit 3 (was 'No divergence', exit 0)", async () => {
    const f = inputs();
    const r = await bernsteinJson(["replay", "diff-journal", f.plan!, f.agent!], { cwd: f.dir });
    expectRefused(r, "not_a_journal", f.plan!);
    const prose = await bernstein(["replay", "diff-journal", f.plan!, f.agent!], { cwd: f.dir });
    expect(prose.code).toBe(3);
    expect(prose.stdout).not.toContain("No divergence");
    // A run journal is no agent step journal either; --allow-empty does not let a foreign file through.
    expectRefused(await bernsteinJson(["replay", "diff-journal", RUN_JOURNAL, RUN_JOURNAL], { cwd: f.dir }), "not_a_journal", RUN_JOURNAL);
    expectRefused(await bernsteinJson(["replay", "diff-journal", AGENT_JOURNAL, f.objects!, "--allow-empty"], { cwd: f.dir }), "not_a_journal", f.objects!);
  });

  test("diff-journal of empty inputs (files, standard input): input_empty; --allow-empty: no divergence, as before", async () => {
    const f = inputs();
    expectRefused(await bernsteinJson(["replay", "diff-journal", f.empty!, f.blank!], { cwd: f.dir }), "input_empty", f.empty!);
    expectRefused(await bernsteinJson(["replay", "diff-journal", AGENT_JOURNAL, f.blank!], { cwd: f.dir }), "input_empty", f.blank!);
    expectRefused(await piped("", ["replay", "diff-journal", "-", AGENT_JOURNAL], f.dir!), "input_empty", "-");
    const allowed = await bernsteinJson(["replay", "diff-journal", f.empty!, f.blank!, "--allow-empty"], { cwd: f.dir });
    expect([allowed.code, allowed.json.ok, allowed.json.diverged]).toEqual([0, true, false]);
    const piedAllowed = await piped("", ["replay", "diff-journal", "-", f.empty!, "--allow-empty"], f.dir!);
    expect([piedAllowed.code, piedAllowed.json.diverged]).toEqual([0, false]);
    // An empty side against a journal, allowed: a length mismatch, as before.
    const short = await bernsteinJson(["replay", "diff-journal", f.empty!, AGENT_JOURNAL, "--allow-empty"], { cwd: f.dir });
    expect([short.code, short.json.error, short.json.fields_changed]).toEqual([1, "divergence", ["length"]]);
    // Journals still compare.
    const same = await bernsteinJson(["replay", "diff-journal", AGENT_JOURNAL, AGENT_JOURNAL], { cwd: f.dir });
    expect([same.code, same.json.diverged]).toEqual([0, false]);
  });

  test("replay diff of runs whose journals are foreign or empty: exit 3 with the code; --allow-empty: no divergence of two empty runs", async () => {
    const cwd = dirs.make();
    const f = inputs();
    for (const [id, src] of [["plan", f.plan!], ["agent", f.agent!], ["objects", f.objects!], ["empty", f.empty!], ["blank", f.blank!], ["good", RUN_JOURNAL]] as const) {
      mkdirSync(join(cwd, ".sdd", "runs", id), { recursive: true });
      copyFileSync(src, join(cwd, ".sdd", "runs", id, "journal.jsonl"));
    }
    expectRefused(await bernsteinJson(["replay", "diff", "plan", "agent"], { cwd }), "not_a_journal", join("plan", "journal.jsonl"));
    expectRefused(await bernsteinJson(["replay", "diff", "objects", "objects"], { cwd }), "not_a_journal", join("objects", "journal.jsonl"));
    expectRefused(await bernsteinJson(["replay", "diff", "good", "agent"], { cwd }), "not_a_journal", join("agent", "journal.jsonl"));
    expectRefused(await bernsteinJson(["replay", "diff", "empty", "blank"], { cwd }), "input_empty", join("empty", "journal.jsonl"));
    const allowed = await bernsteinJson(["replay", "diff", "empty", "blank", "--allow-empty"], { cwd });
    expect([allowed.code, allowed.json.ok, allowed.json.diverged]).toEqual([0, true, false]);
    const same = await bernsteinJson(["replay", "diff", "good", "good"], { cwd });
    expect([same.code, same.json.diverged]).toEqual([0, false]);
  });
});

describe("agent step journals: replay <AGENT>, replay debug; gateway logs in replay diff", () => {
  /** An .sdd with an empty agent journal (e), a foreign one (f) and a real one (a). */
  function agents(): string {
    const cwd = dirs.make();
    const f = inputs();
    for (const [id, src] of [["agent-e", f.empty!], ["agent-f", f.plan!], ["agent-a", AGENT_JOURNAL]] as const) {
      mkdirSync(join(cwd, ".sdd", "runtime", "journal", id), { recursive: true });
      copyFileSync(src, join(cwd, ".sdd", "runtime", "journal", id, "000000.jsonl"));
    }
    return cwd;
  }

  test("replay <AGENT>: empty → input_empty, foreign → not_a_journal (was ok, 0 steps); --allow-empty: the empty view", async () => {
    const cwd = agents();
    expectRefused(await bernsteinJson(["replay", "agent-e"], { cwd }), "input_empty", "agent-e");
    expectRefused(await bernsteinJson(["replay", "agent-f"], { cwd }), "not_a_journal", "agent-f");
    expectRefused(await bernsteinJson(["replay", "agent-f", "--allow-empty"], { cwd }), "not_a_journal", "agent-f");
    const allowed = await bernsteinJson(["replay", "agent-e", "--allow-empty"], { cwd });
    expect([allowed.code, allowed.json.ok, allowed.json.steps]).toEqual([0, true, 0]);
    // (the fixture's entries hold Python-only JSON such as NaN: read as text)
    const real = await bernstein(["replay", "agent-a", "--as-json"], { cwd });
    expect([real.code, real.stdout.startsWith('{\n  "ok": true')]).toEqual([0, true]);
  });

  test("replay debug: one or two empty or foreign journals are refused; --allow-empty: the old empty results", async () => {
    const cwd = agents();
    expectRefused(await bernsteinJson(["replay", "debug", "agent-e"], { cwd }), "input_empty", "agent-e");
    expectRefused(await bernsteinJson(["replay", "debug", "agent-f"], { cwd }), "not_a_journal", "agent-f");
    expectRefused(await bernsteinJson(["replay", "debug", "agent-f", "agent-f"], { cwd }), "not_a_journal", "agent-f");
    expectRefused(await bernsteinJson(["replay", "debug", "agent-a", "agent-e"], { cwd }), "input_empty", "agent-e");
    const single = await bernsteinJson(["replay", "debug", "agent-e", "--allow-empty"], { cwd });
    expect([single.code, single.json.ok, single.json.steps]).toEqual([0, true, 0]);
    const two = await bernsteinJson(["replay", "debug", "agent-e", "agent-e", "--allow-empty"], { cwd });
    expect([two.code, two.json.ok, two.json.diverged]).toEqual([0, true, false]);
  });

  test("replay diff over gateway logs (events.jsonl): an empty log is input_empty, a foreign one not_a_journal", async () => {
    const cwd = dirs.make();
    const f = inputs();
    const row = '{"kind": "tool", "key": "k", "response": 1}\n';
    for (const [id, text] of [["empty", ""], ["foreign", readFileSync(f.plan!, "utf8")], ["one", row]] as const) {
      mkdirSync(join(cwd, ".sdd", "runs", id), { recursive: true });
      copyFileSync(RUN_JOURNAL, join(cwd, ".sdd", "runs", id, "journal.jsonl"));
      writeFileSync(join(cwd, ".sdd", "runs", id, "events.jsonl"), text);
    }
    expectRefused(await bernsteinJson(["replay", "diff", "empty", "empty"], { cwd }), "input_empty", join("empty", "events.jsonl"));
    expectRefused(await bernsteinJson(["replay", "diff", "foreign", "foreign"], { cwd }), "not_a_journal", join("foreign", "events.jsonl"));
    expectRefused(await bernsteinJson(["replay", "diff", "one", "foreign", "--allow-empty"], { cwd }), "not_a_journal", join("foreign", "events.jsonl"));
    const allowed = await bernsteinJson(["replay", "diff", "empty", "empty", "--allow-empty"], { cwd });
    expect([allowed.code, allowed.json.log, allowed.json.diverged]).toEqual([0, "events.jsonl", false]);
    const same = await bernsteinJson(["replay", "diff", "one", "one"], { cwd });
    expect([same.code, same.json.diverged]).toEqual([0, false]);
  });
});

describe("replay verify of a receipt", () => {
  test("a receipt whose journal member is empty (manifest: 0 steps): input_empty, exit 3; --allow-empty: ok, 0 steps", async () => {
    const cwd = dirs.make();
    const genesis = "0".repeat(64);
    const manifest = JSON.stringify({ agent_id: "agent-e", blob_digests: [], created_at: "2026-01-01T00:00:00Z", format_version: 1, head_hash: genesis, steps: 0 });
    const receipt = join(cwd, "empty.tar");
    writeFileSync(receipt, craftTar([{ name: "manifest.json", data: manifest }, { name: "journal/000000.jsonl", data: "" }]));
    const r = await bernsteinJson(["replay", "verify", receipt], { cwd });
    expectRefused(r, "input_empty", receipt);
    expect(r.json.detail).toContain(`the journal of ${receipt} is empty`);
    const allowed = await bernsteinJson(["replay", "verify", receipt, "--allow-empty"], { cwd });
    expect([allowed.code, allowed.json.ok, allowed.json.steps]).toEqual([0, true, 0]);
    const real = await bernsteinJson(["replay", "verify", join(VECTORS, "agent-journal", "agent-a.tar")], { cwd });
    expect([real.code, real.json.ok]).toEqual([0, true]);
  });
});
