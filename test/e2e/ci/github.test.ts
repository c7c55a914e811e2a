/**
 * The CI reports through the compiled binary: `--format github` (golden
 * annotation lines with escaping, the 10-annotation cap, stop-commands
 * against injection, the step summary and `$GITHUB_OUTPUT`), `--junit`
 * (parsed by Python's XML parser) and several inputs per call.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";
import { craftTar, listTar } from "../../receipts/tarcraft.ts";
import { AGENT_VECTORS, RUN_VECTORS, joinLines, parseGithubOutput, parseJunit, runnerView, vectorLines } from "./fixture.ts";

const dirs = tempDirs("e2e-ci");
afterAll(() => dirs.cleanup());

const CHAIN4_HEAD = "beb8b92285cb2d3e5f1a4fc30b1024fb9848da6105bbada9fa19fb0933847f71";
const HAZARDS_HEAD = "7e3b356f62ebfce453d8b89cceb905b211ef5f98de108a5f1e63e62e07bd5f7e";
const EXPECTED_236 = "2309583f82d84a883013d19788c49a98369f83c97bbbcb54a5c49da032b6da0d";
const ACTUAL_236 = "5d5b32736982c9912efcb95c5324ecf5b7c8a0aaa027f378404b0d28d552df58";

/** A fresh dir with the GitHub files, and the env that points at them. */
function githubDir(): { dir: string; summary: string; output: string; env: Record<string, string> } {
  const dir = dirs.make();
  const summary = join(dir, "step_summary.md");
  const output = join(dir, "github_output");
  return { dir, summary, output, env: { GITHUB_STEP_SUMMARY: summary, GITHUB_OUTPUT: output, GITHUB_WORKSPACE: dir } };
}

function copyVector(dir: string, name: string, as = `${name}.jsonl`): string {
  copyFileSync(join(RUN_VECTORS, `${name}.jsonl`), join(dir, as));
  return as;
}

describe("--format github: annotations", () => {
  test("the divergent row's file line (not its chain index), past blank and junk lines", async () => {
    const g = githubDir();
    // Three lines that are not rows before the tampered row 236: a blank, a whitespace-only and a junk line.
    const lines = vectorLines("hazards-payload-edit");
    lines.splice(10, 0, "", "   ", "not json");
    writeFileSync(join(g.dir, "shifted.jsonl"), joinLines(lines));
    // Python finds the row independently: the 1-based line whose stored index is 236.
    const oracle = Bun.spawnSync(["python3", "-c", "import json,sys\nfor n,l in enumerate(open(sys.argv[1]),1):\n  try: d=json.loads(l)\n  except Exception: continue\n  if d.get('index')==236: print(n)", join(g.dir, "shifted.jsonl")]);
    expect(oracle.stdout.toString().trim()).toBe("240");
    const r = await bernstein(["journal", "verify", "shifted.jsonl", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(r.code).toBe(1);
    const view = runnerView(r.stdout);
    expect(view.commands).toEqual([
      `::error file=shifted.jsonl,line=240,title=Chain divergence at step 236::step 236: event_hash mismatch: expected ${EXPECTED_236}, actual ${ACTUAL_236}`,
      "::error file=shifted.jsonl,line=13,title=Unreadable journal line::line 13 is not a journal row (undecodable, unparsable, overlong or not a JSON object); the chain skips it and coverage is partial",
    ]);
    // The prose (what the command always prints) is inside the stop-commands block.
    expect(view.blocks).toBe(1);
    expect(view.inert[0]).toBe(`DIVERGENCE at step 236: expected ${EXPECTED_236} actual ${ACTUAL_236}`);
  });

  test("the divergent line comes from the verify (`divergent_line`): CRLF, blank and junk lines, one range or many", async () => {
    const g = githubDir();
    // hazards-payload-edit (row 236 tampered) with CRLF endings, blank, whitespace-only and junk lines before and after many ranges' starts.
    const lines = vectorLines("hazards-payload-edit");
    for (const at of [250, 200, 120, 10]) lines.splice(at, 0, "", "   ", "not json", "[1]");
    writeFileSync(join(g.dir, "crlf.jsonl"), lines.map((l) => `${l}\r\n`).join(""));
    const oracle = Bun.spawnSync(["python3", "-c", "import json,sys\nfor n,l in enumerate(open(sys.argv[1]),1):\n  try: d=json.loads(l)\n  except Exception: continue\n  if isinstance(d,dict) and d.get('index')==236: print(n)", join(g.dir, "crlf.jsonl")]);
    const want = Number(oracle.stdout.toString().trim());
    expect(want).toBe(236 + 1 + 3 * 4);
    for (const env of [{}, { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "1" }]) {
      for (const threads of ["1", "2"]) {
        const json = await bernsteinJson(["journal", "verify", "crlf.jsonl", "--threads", threads], { cwd: g.dir, env });
        expect([threads, env, json.json.divergent_index, json.json.divergent_line]).toEqual([threads, env, 236, want]);
        const r = await bernstein(["journal", "verify", "crlf.jsonl", "--threads", threads, "--format", "github"], { cwd: g.dir, env: { ...g.env, ...env } });
        expect(r.code).toBe(1);
        expect(runnerView(r.stdout).commands[0]).toStartWith(`::error file=crlf.jsonl,line=${want},title=Chain divergence at step 236::`);
      }
    }
    expect(readFileSync(g.summary, "utf8")).toContain(`DIVERGENCE at step 236 (line ${want})`);
  });

  test("escaping: %, CR and LF in data; also : and , in properties (golden lines)", async () => {
    const g = githubDir();
    const weird = "cr\rlf\nc,d:50%.jsonl";
    copyVector(g.dir, "hazards-payload-edit", weird);
    const r = await bernstein(["journal", "verify", weird, "gone 100%,x:y.jsonl", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(r.code).toBe(3);
    const { commands } = runnerView(r.stdout);
    expect(commands).toEqual([
      `::error file=cr%0Dlf%0Ac%2Cd%3A50%25.jsonl,line=237,title=Chain divergence at step 236::step 236: event_hash mismatch: expected ${EXPECTED_236}, actual ${ACTUAL_236}`,
      `::error file=gone 100%25%2Cx%3Ay.jsonl,title=Journal not verified%3A journal_unreadable::journal not found: ${g.dir}/gone 100%25,x:y.jsonl`,
    ]);
  });

  test("at most 10 error annotations; the rest are counted in a warning and listed in the summary", async () => {
    const g = githubDir();
    const lines = vectorLines("hazards");
    // 13 junk lines, one every 20 rows, from the end backwards so earlier positions hold.
    const at = Array.from({ length: 13 }, (_, k) => 5 + 20 * k).reverse();
    for (const p of at) lines.splice(p, 0, `junk ${p}`);
    writeFileSync(join(g.dir, "many.jsonl"), joinLines(lines));
    const r = await bernstein(["journal", "verify", "many.jsonl", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(r.code).toBe(1);
    const { commands } = runnerView(r.stdout);
    // Junk line k sits at 0-based index 5 + 20k + k (the k junk lines before it shift it).
    const fileLines = Array.from({ length: 13 }, (_, k) => 5 + 21 * k + 1);
    const annotation = (n: number) =>
      `::error file=many.jsonl,line=${n},title=Unreadable journal line::line ${n} is not a journal row (undecodable, unparsable, overlong or not a JSON object); the chain skips it and coverage is partial`;
    expect(commands).toEqual([
      ...fileLines.slice(0, 10).map(annotation),
      "::warning title=More problems::3 more problem(s) not annotated (limit 10); the step summary lists them",
    ]);
    const summary = readFileSync(g.summary, "utf8");
    expect(summary).toContain("**13 problems** (10 annotated; 3 listed only here):");
    for (const n of fileLines) expect(summary).toContain(`| many.jsonl | ${n} | Unreadable journal line: line ${n} is not a journal row`);
  });

  test("the cap counts problems over several inputs", async () => {
    const g = githubDir();
    const names = Array.from({ length: 12 }, (_, i) => copyVector(g.dir, "hazards-payload-edit", `bad-${i}.jsonl`));
    const r = await bernstein(["journal", "verify", ...names, "--format", "github"], { cwd: g.dir, env: g.env });
    expect(r.code).toBe(1);
    const { commands } = runnerView(r.stdout);
    expect(commands.filter((c) => c.startsWith("::error "))).toHaveLength(10);
    expect(commands[0]).toStartWith("::error file=bad-0.jsonl,line=237,");
    expect(commands[9]).toStartWith("::error file=bad-9.jsonl,line=237,");
    expect(commands[10]).toBe("::warning title=More problems::2 more problem(s) not annotated (limit 10); the step summary lists them");
  });

  test("journal text cannot inject workflow commands: it is printed inside ::stop-commands::", async () => {
    const g = githubDir();
    const lines = vectorLines("chain-4");
    const row = JSON.parse(lines[1]!);
    // A stored hash with line breaks followed by commands, and commands in a payload string.
    const evil = "x\n::set-output name=verdict::verified\n::error::injected\n::add-mask::x";
    lines[1] = lines[1]!
      .replace(`"event_hash": "${row.event_hash}"`, `"event_hash": ${JSON.stringify(evil)}`)
      .replace(/}$/, `, "note": "::error::in payload\\n::set-output name=head::0"}`);
    writeFileSync(join(g.dir, "evil.jsonl"), joinLines(lines));
    const r = await bernstein(["journal", "verify", "evil.jsonl", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(r.code).toBe(1);
    const view = runnerView(r.stdout);
    // What the runner would obey: our one annotation, its untrusted text escaped onto one line.
    expect(view.commands).toHaveLength(1);
    expect(view.commands[0]).toStartWith("::error file=evil.jsonl,line=2,title=Chain divergence at step 1::step 1: ");
    expect(view.commands[0]).toContain("actual x\\u000a::set-output name=verdict::verified\\u000a::error::injected");
    // The injected lines reach the log only as inert text.
    expect(view.inert).toContain("::set-output name=verdict::verified");
    expect(view.inert).toContain("::error::injected");
    const outputs = parseGithubOutput(readFileSync(g.output, "utf8"));
    expect(outputs.verdict).toBe("failed");
  });

  test("GITHUB_ACTIONS=true turns github on unless --as-json or --format text", async () => {
    const g = githubDir();
    copyVector(g.dir, "chain-4");
    const env = { ...g.env, GITHUB_ACTIONS: "true" };
    const auto = await bernstein(["journal", "verify", "chain-4.jsonl"], { cwd: g.dir, env });
    expect(auto.code).toBe(0);
    expect(runnerView(auto.stdout)).toEqual({
      commands: [],
      inert: [`chain intact: 4 events, head ${CHAIN4_HEAD}; coverage=complete; identity=unverifiable (no seal)`, "Unauthenticated fields: elapsed_s, event_hash, index, payload_hash, prev_hash, ts"],
      blocks: 1,
    });
    expect(parseGithubOutput(readFileSync(g.output, "utf8"))).toEqual({ verdict: "verified", head: CHAIN4_HEAD, count: "4" });
    const before = readFileSync(g.summary, "utf8");

    const json = await bernsteinJson(["journal", "verify", "chain-4.jsonl"], { cwd: g.dir, env });
    expect(json.json.ok).toBe(true);
    const text = await bernstein(["journal", "verify", "chain-4.jsonl", "--format", "text"], { cwd: g.dir, env });
    expect(text.stdout).not.toContain("::");
    // Neither wrote to the GitHub files.
    expect(readFileSync(g.summary, "utf8")).toBe(before);

    const both = await bernsteinJson(["journal", "verify", "chain-4.jsonl", "--format", "github"], { cwd: g.dir });
    expect([both.code, both.json.error]).toEqual([2, "invalid_format"]);
    const bad = await bernsteinJson(["journal", "verify", "chain-4.jsonl", "--format", "xml"], { cwd: g.dir });
    expect([bad.code, bad.json.error]).toEqual([2, "invalid_format"]);
  });
});

describe("--format github: step summary and outputs", () => {
  test("the summary is appended (earlier content kept) with one row per input", async () => {
    const g = githubDir();
    copyVector(g.dir, "chain-4");
    copyVector(g.dir, "hazards-payload-edit");
    writeFileSync(g.summary, "# from an earlier command\n");
    const args = ["journal", "verify", "chain-4.jsonl", "hazards-payload-edit.jsonl", "--format", "github"];
    const r = await bernstein(args, { cwd: g.dir, env: g.env });
    expect(r.code).toBe(1);
    const summary = readFileSync(g.summary, "utf8");
    const rows = summary.split("\n");
    expect(rows.slice(0, 6)).toEqual([
      "# from an earlier command",
      "### ❌ bernstein journal verify: 1 failed of 2 inputs",
      "",
      "| | input | verdict | events | head | seconds |",
      "|:-:|---|---|--:|---|--:|",
      expect.stringMatching(
        new RegExp(`^\\| ✅ \\| chain-4\\.jsonl \\| chain intact: 4 events, head ${CHAIN4_HEAD}; coverage=complete; identity=unverifiable \\| 4 \\| ${CHAIN4_HEAD} \\| \\d+\\.\\d{3} \\|$`),
      ),
    ]);
    expect(rows[6]).toMatch(
      new RegExp(`^\\| ❌ \\| hazards-payload-edit\\.jsonl \\| DIVERGENCE at step 236 \\(line 237\\): expected ${EXPECTED_236} actual ${ACTUAL_236} \\| 300 \\|  \\| \\d+\\.\\d{3} \\|$`),
    );
    expect(summary).toContain("**1 problem**:");
    // A second call appends again; nothing is ever truncated.
    await bernstein(args, { cwd: g.dir, env: g.env });
    const twice = readFileSync(g.summary, "utf8");
    const untimed = (t: string) => t.replace(/\d+\.\d{3} \|$/gm, "T |");
    expect(twice.startsWith(summary)).toBe(true);
    expect(untimed(twice)).toBe(untimed(summary + summary.slice("# from an earlier command\n".length)));
  });

  test("the summary stays within 1 MiB, counting what it leaves out", async () => {
    const g = githubDir();
    const held = 1024 * 1024 - 1500;
    writeFileSync(g.summary, "x".repeat(held - 1) + "\n");
    const names = Array.from({ length: 40 }, (_, i) => copyVector(g.dir, "hazards-payload-edit", `b${i}.jsonl`));
    const r = await bernstein(["journal", "verify", ...names, "--format", "github"], { cwd: g.dir, env: g.env });
    expect(r.code).toBe(1);
    const size = statSync(g.summary).size;
    expect(size).toBeLessThanOrEqual(1024 * 1024);
    expect(size).toBeGreaterThan(held);
    const ours = readFileSync(g.summary, "utf8").slice(held);
    expect(ours).toStartWith("### ❌ bernstein journal verify: 40 failed of 40 inputs");
    expect(ours).toMatch(/_… \d+ more lines not shown: the step summary is limited to 1 MiB\._/);

    // A summary already at the limit is left alone (with a warning), and the verdict stands.
    writeFileSync(g.summary, "y".repeat(1024 * 1024));
    const full = await bernstein(["journal", "verify", "b0.jsonl", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(full.code).toBe(1);
    expect(statSync(g.summary).size).toBe(1024 * 1024);
    expect(full.stderr).toContain("step summary not written");
  });

  test("$GITHUB_OUTPUT: verdict, head, count; one line per input in the heredoc form", async () => {
    const g = githubDir();
    copyVector(g.dir, "chain-4");
    copyVector(g.dir, "hazards");
    writeFileSync(g.output, "earlier=1\n");
    const r = await bernstein(["journal", "verify", "chain-4.jsonl", "hazards.jsonl", "nosuch.jsonl", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(r.code).toBe(3);
    const raw = readFileSync(g.output, "utf8");
    expect(raw).toStartWith("earlier=1\nverdict=error\nhead<<ghadelimiter_");
    expect(parseGithubOutput(raw)).toEqual({ earlier: "1", verdict: "error", head: `${CHAIN4_HEAD}\n${HAZARDS_HEAD}\n`, count: "4\n300\n" });
  });

  test("an output file that cannot be written is exit 70, naming the file", async () => {
    const g = githubDir();
    copyVector(g.dir, "chain-4");
    const env = { ...g.env, GITHUB_OUTPUT: join(g.dir, "no-such-dir", "out") };
    const r = await bernsteinJson(["journal", "verify", "chain-4.jsonl", "--junit", join(g.dir, "j.xml")], { cwd: g.dir, env: { ...env, GITHUB_ACTIONS: "true" } });
    // --as-json: github is off, so GITHUB_OUTPUT is not touched.
    expect(r.code).toBe(0);
    const p = await bernstein(["journal", "verify", "chain-4.jsonl", "--format", "github"], { cwd: g.dir, env });
    expect(p.code).toBe(70);
    expect(p.stderr).toContain(`cannot write the $GITHUB_OUTPUT ${join(g.dir, "no-such-dir", "out")}: ENOENT`);
  });
});

describe("--junit FILE", () => {
  test("one testcase per input, failure text = the verdict line, parsed by Python's XML parser", async () => {
    const g = githubDir();
    copyVector(g.dir, "chain-4");
    copyVector(g.dir, "hazards-payload-edit");
    // A name with characters XML cannot carry and markup characters.
    const odd = "ctl\u0001<&>\".jsonl";
    copyVector(g.dir, "hazards-junk-line-middle", odd);
    const report = join(g.dir, "reports", "sub", "journal.xml");
    const r = await bernstein(["journal", "verify", "chain-4.jsonl", "hazards-payload-edit.jsonl", odd, "missing.jsonl", "--junit", report], { cwd: g.dir, env: { GITHUB_WORKSPACE: g.dir } });
    expect(r.code).toBe(3);
    const x = parseJunit(report);
    expect(x.suites).toMatchObject({ name: "bernstein journal verify", tests: "4", failures: "2", errors: "1" });
    expect(x.suite).toMatchObject({ name: "bernstein journal verify", tests: "4", failures: "2", errors: "1", skipped: "0" });
    expect(x.cases.map((c) => [c.classname, c.name, c.file])).toEqual([
      ["bernstein.journal", "chain-4.jsonl", "chain-4.jsonl"],
      ["bernstein.journal", "hazards-payload-edit.jsonl", "hazards-payload-edit.jsonl"],
      ["bernstein.journal", "ctl\\u0001<&>\".jsonl", "ctl\\u0001<&>\".jsonl"],
      ["bernstein.journal", "missing.jsonl", "missing.jsonl"],
    ]);
    for (const c of x.cases) expect(c.time).toMatch(/^\d+\.\d{3}$/);
    expect(x.cases[0]!.failure).toBeNull();
    const divergence = `DIVERGENCE at step 236 (line 237): expected ${EXPECTED_236} actual ${ACTUAL_236}`;
    expect(x.cases[1]!.failure).toEqual({ tag: "failure", type: "journal_verify_failed", message: divergence, text: divergence });
    expect(x.cases[1]!.out).toBe(`hazards-payload-edit.jsonl:237: Chain divergence at step 236: step 236: event_hash mismatch: expected ${EXPECTED_236}, actual ${ACTUAL_236}`);
    expect(x.cases[2]!.failure!.text).toBe("INCOMPLETE: 1 physical line(s) could not be read (line 237); chain intact over the 300 readable events");
    expect(x.cases[3]!.failure).toEqual({
      tag: "error",
      type: "journal_unreadable",
      message: `ERROR journal_unreadable: journal not found: ${g.dir}/missing.jsonl`,
      text: `ERROR journal_unreadable: journal not found: ${g.dir}/missing.jsonl`,
    });
    // Written atomically: no temp file left beside it.
    expect(existsSync(report)).toBe(true);
    expect(Bun.spawnSync(["ls", join(g.dir, "reports", "sub")]).stdout.toString()).toBe("journal.xml\n");
  });

  test("replay verify and replay <RUN_ID> --verify write it too; --junit - is refused", async () => {
    const g = githubDir();
    const rj = join(g.dir, ".sdd", "runs", "run-ok");
    mkdirSync(rj, { recursive: true });
    copyFileSync(join(RUN_VECTORS, "chain-4.jsonl"), join(rj, "journal.jsonl"));
    const run = await bernstein(["replay", "run-ok", "--verify", "--junit", "run.xml"], { cwd: g.dir, env: { GITHUB_WORKSPACE: g.dir } });
    expect(run.code).toBe(0);
    expect(parseJunit(join(g.dir, "run.xml")).cases).toEqual([
      { classname: "bernstein.journal", name: "run-ok", file: ".sdd/runs/run-ok/journal.jsonl", time: expect.any(String), failure: null, out: null },
    ]);
    const rc = await bernstein(["replay", "verify", join(AGENT_VECTORS, "agent-a.tar"), "--junit", "r.xml"], { cwd: g.dir });
    expect(rc.code).toBe(0);
    expect(parseJunit(join(g.dir, "r.xml")).cases.map((c) => [c.classname, c.failure])).toEqual([["bernstein.receipt", null]]);
    const dash = await bernsteinJson(["journal", "verify", "x.jsonl", "--junit", "-"], { cwd: g.dir });
    expect(dash.code).toBe(2);
    const elsewhere = await bernsteinJson(["replay", "list", "--junit", "x.xml"], { cwd: g.dir });
    expect([elsewhere.code, elsewhere.json.error]).toEqual([2, "flag_not_applicable"]);
  });
});

describe("several inputs per call", () => {
  test("journal verify: {ok, results}, one verdict each, exit code = the worst (3 > 2 > 1 > 0)", async () => {
    const g = githubDir();
    copyVector(g.dir, "chain-4");
    copyVector(g.dir, "hazards");
    copyVector(g.dir, "hazards-payload-edit");
    const good = await bernsteinJson(["journal", "verify", "chain-4.jsonl", "hazards.jsonl"], { cwd: g.dir });
    expect(good.code).toBe(0);
    expect(Object.keys(good.json)).toEqual(["ok", "results"]);
    expect(good.json.ok).toBe(true);
    expect(good.json.results.map((x: any) => [x.input, x.ok, x.head])).toEqual([
      ["chain-4.jsonl", true, CHAIN4_HEAD],
      ["hazards.jsonl", true, HAZARDS_HEAD],
    ]);
    // Each result is the single-input document, preceded by the input as given.
    const single = await bernsteinJson(["journal", "verify", "hazards.jsonl"], { cwd: g.dir });
    expect(good.json.results[1]).toEqual({ input: "hazards.jsonl", ...single.json });

    const cases: [string[], number][] = [
      [["chain-4.jsonl", "hazards-payload-edit.jsonl"], 1],
      [["hazards-payload-edit.jsonl", "bad id!"], 2],
      [["bad id!", "missing.jsonl", "hazards-payload-edit.jsonl"], 3],
    ];
    for (const [inputs, code] of cases) {
      const r = await bernsteinJson(["journal", "verify", ...inputs], { cwd: g.dir });
      expect([inputs, r.code]).toEqual([inputs, code]);
      expect(r.json).toMatchObject({ ok: false, error: "verify_failed" });
      expect(r.json.results.map((x: any) => x.input)).toEqual(inputs);
    }
    const mixed = await bernsteinJson(["journal", "verify", "bad id!", "missing.jsonl", "hazards-payload-edit.jsonl"], { cwd: g.dir });
    expect(mixed.json.detail).toBe("0 of 3 inputs verified, 1 failed, 2 could not be verified (exit 3)");
    expect(mixed.json.results.map((x: any) => [x.ok, x.error ?? null])).toEqual([
      [false, "invalid_run_id"],
      [false, "journal_unreadable"],
      [false, "chain_broken"],
    ]);
    expect(mixed.json.results[2].divergent_index).toBe(236);

    const prose = await bernstein(["journal", "verify", "chain-4.jsonl", "missing.jsonl"], { cwd: g.dir });
    expect(prose.code).toBe(3);
    expect(prose.stdout).toBe(
      `chain-4.jsonl: chain intact: 4 events, head ${CHAIN4_HEAD}; coverage=complete; identity=unverifiable (no seal)\n` +
        "  Unauthenticated fields: elapsed_s, event_hash, index, payload_hash, prev_hash, ts\n" +
        `missing.jsonl: error: journal not found: ${g.dir}/missing.jsonl (journal_unreadable)\n` +
        "1 of 2 inputs verified, 0 failed, 1 could not be verified (exit 3)\n",
    );
    // A seal belongs to one journal.
    const seal = await bernsteinJson(["journal", "verify", "chain-4.jsonl", "hazards.jsonl", "--seal", "s.json"], { cwd: g.dir });
    expect([seal.code, seal.json.error]).toEqual([2, "flag_not_applicable"]);
  });

  test("replay verify: several receipts, one verdict each, worst exit code", async () => {
    const g = githubDir();
    const [manifest, journal] = listTar(readFileSync(join(AGENT_VECTORS, "agent-a.tar")));
    const text = new TextDecoder().decode(manifest!.data);
    const head = /"head_hash": ?"([0-9a-f]{64})"/.exec(text)![1]!;
    const lied = text.replace(head, "0".repeat(64));
    writeFileSync(join(g.dir, "lied.tar"), craftTar([{ name: "manifest.json", data: lied }, { name: "journal/000000.jsonl", data: journal!.data }]));
    const inputs = [join(AGENT_VECTORS, "agent-a.tar"), join(AGENT_VECTORS, "agent-a.published.tar")];
    const ok = await bernsteinJson(["replay", "verify", ...inputs], { cwd: g.dir });
    expect(ok.code).toBe(0);
    expect(ok.json.results.map((x: any) => [x.ok, x.steps])).toEqual([[true, 60], [true, 60]]);
    const bad = await bernsteinJson(["replay", "verify", ...inputs, "lied.tar"], { cwd: g.dir });
    expect(bad.code).toBe(1);
    expect(bad.json.results[2]).toMatchObject({ input: "lied.tar", ok: false, errors: [expect.stringContaining("manifest head mismatch")] });
    const worst = await bernsteinJson(["replay", "verify", "lied.tar", "nope.tar"], { cwd: g.dir });
    expect(worst.code).toBe(3);
    expect(worst.json.results[1]).toMatchObject({ input: "nope.tar", ok: false, error: "receipt_not_found" });

    const gh = await bernstein(["replay", "verify", ...inputs, "lied.tar", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(gh.code).toBe(1);
    expect(runnerView(gh.stdout).commands).toEqual([
      "::error file=lied.tar,title=Receipt verification failed::manifest head mismatch: 0000000000000000... vs walked " + head.slice(0, 16) + "...",
    ]);
    expect(parseGithubOutput(readFileSync(g.output, "utf8"))).toMatchObject({ verdict: "failed", count: "60\n60\n60" });
    const headFlag = await bernsteinJson(["replay", "verify", ...inputs, "--head", head], { cwd: g.dir });
    expect([headFlag.code, headFlag.json.error]).toEqual([2, "flag_not_applicable"]);
  });

  test("replay <RUN_ID> --verify --format github: annotation on the run's journal", async () => {
    const g = githubDir();
    const rj = join(g.dir, ".sdd", "runs", "run-bad");
    mkdirSync(rj, { recursive: true });
    copyFileSync(join(RUN_VECTORS, "hazards-payload-edit.jsonl"), join(rj, "journal.jsonl"));
    const r = await bernstein(["replay", "run-bad", "--verify", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(r.code).toBe(1);
    const view = runnerView(r.stdout);
    expect(view.commands).toEqual([
      `::error file=.sdd/runs/run-bad/journal.jsonl,line=237,title=Chain divergence at step 236::step 236: event_hash mismatch: expected ${EXPECTED_236}, actual ${ACTUAL_236}`,
    ]);
    expect(view.inert[0]).toBe("DIVERGENCE first divergent step 236 in run run-bad");
    expect(readFileSync(g.summary, "utf8")).toStartWith("### ❌ bernstein replay --verify: 1 failed of 1 input\n");
    const missing = await bernstein(["replay", "run-gone", "--verify", "--format", "github"], { cwd: g.dir, env: g.env });
    expect(missing.code).toBe(3);
    expect(runnerView(missing.stdout).commands[0]).toStartWith("::error file=run-gone,title=Journal not verified%3A ");
  });
});

describe("stdin (`-`) in the CI reports", () => {
  test("annotated and reported as `stdin`, or the name --stdin-name gives; never `file=-`", async () => {
    const g = githubDir();
    const tampered = readFileSync(join(RUN_VECTORS, "hazards-payload-edit.jsonl"));
    const plain = await bernstein(["journal", "verify", "-", "--format", "github", "--junit", "plain.xml"], { cwd: g.dir, env: g.env, stdin: tampered });
    expect(plain.code).toBe(1);
    expect(runnerView(plain.stdout).commands).toEqual([expect.stringMatching(/^::error file=stdin,line=237,title=Chain divergence at step 236::/)]);
    expect(parseJunit(join(g.dir, "plain.xml")).cases.map((c) => c.name)).toEqual(["stdin"]);
    const named = await bernstein(["journal", "verify", "-", "--format", "github", "--stdin-name", "logs/run 7.jsonl", "--junit", "named.xml"], {
      cwd: g.dir,
      env: g.env,
      stdin: tampered,
    });
    expect(named.code).toBe(1);
    expect(runnerView(named.stdout).commands).toEqual([expect.stringMatching(/^::error file=logs\/run 7\.jsonl,line=237,title=Chain divergence at step 236::/)]);
    expect(parseJunit(join(g.dir, "named.xml")).cases.map((c) => c.name)).toEqual(["logs/run 7.jsonl"]);
    expect(readFileSync(g.summary, "utf8")).toContain("logs/run 7.jsonl");
  });

  test("replay verify takes --stdin-name; an empty name is a usage error; other replay verbs refuse it", async () => {
    const g = githubDir();
    const r = await bernstein(["replay", "verify", "-", "--junit", "r.xml", "--stdin-name", "agent.tar"], { cwd: g.dir, stdin: readFileSync(join(AGENT_VECTORS, "agent-a.tar")) });
    expect(r.code).toBe(0);
    expect(parseJunit(join(g.dir, "r.xml")).cases.map((c) => c.name)).toEqual(["agent.tar"]);
    const empty = await bernsteinJson(["journal", "verify", "-", "--stdin-name", ""], { cwd: g.dir, stdin: "" });
    expect([empty.code, empty.json.ok]).toEqual([2, false]);
    const misplaced = await bernsteinJson(["replay", "list", "--stdin-name", "x"], { cwd: g.dir });
    expect([misplaced.code, misplaced.json.error]).toEqual([2, "flag_not_applicable"]);
  });
});
