/**
 * `bernstein journal verify|record|seal` through the compiled binary:
 * vectors, Python reference agreement on journals we write, seals, the
 * writer lock across processes, exit codes and the JSON contract.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson, binPath, VECTORS } from "../../helpers/cli.ts";
import { Gen } from "../../pyjson/gen.ts";
import { parse } from "../../../src/pyjson/index.ts";
import { referenceVerdicts, tempDirs } from "../../journal/tmp.ts";
import { runVectorExpect } from "../../helpers/run-vectors.ts";
import { verifyJournalSync } from "../../../src/journal/verify.ts";

const dirs = tempDirs("e2e-journal");
afterAll(() => dirs.cleanup());
const VDIR = join(VECTORS, "run-journal");

const VERDICT_KEYS = [
  "ok", "run_id", "path", "chain_consistent", "coverage", "identity", "count", "head", "divergent_index", "divergent_line", "step_index",
  "expected_hash", "actual_hash", "discarded_line_indices", "errors", "unauthenticated_fields",
  // how the verify was done (the fast verifier): full or links-only, the snapshot verified and the bytes read
  "mode", "payloads_checked", "snapshot_bytes", "grew_by", "bytes_read",
  // the seal file compared against (null: none), and the lineage spine checked (null: none)
  "seal", "spine",
];
/** A torn tail adds the fix: `torn_tail: true`, `fix: "bernstein replay repair <RUN>"`. */
const TORN_KEYS = ["torn_tail", "fix"];

describe("journal verify on the shared vectors", () => {
  const subset = [
    "chain-4", "hazards", "foreign-writer", "hazards-crlf-line-endings", "hazards-torn-tail",
    "hazards-payload-edit", "hazards-invalid-utf8-row", "hazards-junk-line-middle", "hazards-clean-truncation",
  ];
  for (const name of subset) {
    test(`${name}: --as-json verdict and exit code equal the vector`, async () => {
      const dir = join(dirs.make(), "run-x");
      mkdirSync(dir);
      const file = join(dir, "journal.jsonl");
      copyFileSync(join(VDIR, `${name}.jsonl`), file);
      const exp = runVectorExpect(VDIR, name);
      const r = await bernsteinJson(["journal", "verify", file]);
      // A negative verdict names its first failed check right after `ok`, like every failure.
      const [okKey, ...rest] = VERDICT_KEYS;
      const keys = exp.ok ? VERDICT_KEYS : [okKey, "error", "detail", ...rest];
      expect(Object.keys(r.json)).toEqual(name === "hazards-torn-tail" ? [...keys, ...TORN_KEYS] : keys);
      if (!exp.ok) {
        const error = exp.chain_consistent === false ? "chain_broken" : name === "hazards-torn-tail" ? "torn_tail" : "coverage_partial";
        expect(r.json.error).toBe(error);
        if (error === "torn_tail") expect(r.json.detail).toContain("torn tail: the last line was cut mid-write");
        else expect(r.json.detail).toBe(r.json.errors.length > 1 ? `${r.json.errors[0]} (and ${r.json.errors.length - 1} more error(s))` : r.json.errors[0]);
      }
      for (const k of Object.keys(exp)) expect([k, r.json[k]]).toEqual([k, exp[k]]);
      expect(r.json.identity).toBe("unverifiable");
      expect(r.code).toBe(exp.ok ? 0 : 1);
      // A failure leaves divergence_report.json next to the journal.
      const report = join(dir, "divergence_report.json");
      expect(existsSync(report)).toBe(!exp.ok);
      if (!exp.ok) {
        expect(JSON.parse(readFileSync(report, "utf8"))).toEqual({
          actual_hash: exp.actual_hash ?? null,
          expected_hash: exp.expected_hash ?? null,
          run_id: "run-x",
          step_index: exp.divergent_index,
        });
      }
    });
  }

  test("human output: one verdict line (and the fields no hash covers), or DIVERGENCE with the step and both hashes", async () => {
    const ok = await bernstein(["journal", "verify", join(VDIR, "hazards.jsonl")]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(
      "chain intact: 300 events, head 7e3b356f62ebfce453d8b89cceb905b211ef5f98de108a5f1e63e62e07bd5f7e; coverage=complete; identity=unverifiable (no seal)\n" +
        "Unauthenticated fields: elapsed_s, event_hash, index, payload_hash, prev_hash, ts\n",
    );
    // Work on a copy: a negative verdict writes divergence_report.json beside
    // the journal, and the shared vectors must stay untouched (root can write there).
    const dir = dirs.make();
    copyFileSync(join(VDIR, "hazards-payload-edit.jsonl"), join(dir, "hazards-payload-edit.jsonl"));
    const bad = await bernstein(["journal", "verify", join(dir, "hazards-payload-edit.jsonl")]);
    expect(bad.code).toBe(1);
    expect(existsSync(join(dir, "divergence_report.json"))).toBe(true);
    expect(bad.stdout.split("\n")[0]).toBe(
      "DIVERGENCE at step 236: expected 2309583f82d84a883013d19788c49a98369f83c97bbbcb54a5c49da032b6da0d actual 5d5b32736982c9912efcb95c5324ecf5b7c8a0aaa027f378404b0d28d552df58",
    );
    expect(bad.stdout).toContain("step 236: event_hash mismatch");
  });
});

describe("journals written by `journal record` verify in Python", () => {
  test("hostile JSON Lines on stdin (raw UTF-8, escapes, floats, big ints, NaN) -> reference verifier agrees", async () => {
    const sdd = join(dirs.make(), ".sdd");
    const g = new Gen(777);
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) {
      // Random payload object text (single line: raw CR/LF only occur as
      // whitespace between tokens) with the event key spliced in first.
      const body = g.objectText(0, 1).replace(/[\r\n]/g, " ").slice(1);
      lines.push(`{"event": ${g.pick(['"tick"', '"agent_spawned"', '"\\u00e9v\\ud83d\\ude80"', '"h\u00e9"'])}${body.trim() === "}" ? "}" : ", " + body}`);
    }
    // Drop lines whose payload uses reserved keys (they are refused, tested below).
    const RESERVED = ["prev_hash", "payload_hash", "event_hash", "hash_profile"];
    const usable = lines.filter((l) => {
      const row = parse(l) as Map<string, unknown>;
      const event = row.get("event"); // a duplicate "event" key: the last one wins
      return ![...row.keys()].some((k) => RESERVED.includes(k)) && typeof event === "string" && event !== "";
    });
    expect(usable.length).toBeGreaterThan(200);
    const rec = await bernsteinJson(["journal", "record", "hostile", "--sdd-dir", sdd], { stdin: usable.join("\n") + "\n" });
    expect(rec.code).toBe(0);
    expect(rec.json).toMatchObject({ ok: true, run_id: "hostile", recorded: usable.length, count: usable.length });
    const extra = await bernsteinJson(
      ["journal", "record", "hostile", "float_bits", "--sdd-dir", sdd, "--data", '{"a": 1E-5, "b": 1.50, "c": -0, "d": 5e-324, "e": 123456789012345678901234567890, "f": Infinity, "g": "\\u2028\\u007f/\\/"}'],
    );
    expect(extra.code).toBe(0);
    const file = join(sdd, "runs", "hostile", "journal.jsonl");
    const [ref] = referenceVerdicts([file]);
    const ours = await bernsteinJson(["journal", "verify", "hostile", "--sdd-dir", sdd]);
    expect(ours.code).toBe(0);
    expect(ref).toMatchObject({ ok: true, chain_consistent: true, count: usable.length + 1, head: extra.json.head });
    expect(ours.json.head).toBe(extra.json.head);
    // Numbers are written with Python's spelling.
    expect(readFileSync(file, "utf8")).toContain('"a": 1e-05, "b": 1.5, "c": 0, "d": 5e-324, "e": 123456789012345678901234567890, "f": Infinity');
  });

  test("stdin input is all-or-nothing: an invalid line appends nothing", async () => {
    const sdd = join(dirs.make(), ".sdd");
    await bernstein(["journal", "record", "r", "first", "--sdd-dir", sdd]);
    const file = join(sdd, "runs", "r", "journal.jsonl");
    const before = readFileSync(file);
    const many = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ event: "e", i }));
    many.push('{"event": "bad", "prev_hash": "x"}');
    const r = await bernsteinJson(["journal", "record", "r", "--sdd-dir", sdd], { stdin: many.join("\n") });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "invalid_event_line", line: 5001 });
    expect(Buffer.compare(readFileSync(file), before)).toBe(0);
    for (const bad of ["not json", "[1]", '{"no_event": 1}', '{"event": ""}', '{"event": 5}']) {
      const x = await bernsteinJson(["journal", "record", "r", "--sdd-dir", sdd], { stdin: `{"event": "ok"}\n${bad}\n` });
      expect([bad, x.code, x.json.error, x.json.line]).toEqual([bad, 3, "invalid_event_line", 2]);
    }
    expect(Buffer.compare(readFileSync(file), before)).toBe(0);
  });
});

describe("seal", () => {
  test("seal, verify by run id (verified), refuse appends, detect truncation and foreign appends", async () => {
    const cwd = dirs.make();
    const rows = ["run_started", "task_claimed", "task_completed"].map((e) => JSON.stringify({ event: e, task_id: "T-1" }));
    expect((await bernstein(["journal", "record", "run-1"], { cwd, stdin: rows.join("\n") })).code).toBe(0);
    const seal = await bernsteinJson(["journal", "seal", "run-1"], { cwd });
    expect(seal.code).toBe(0);
    expect(seal.json).toMatchObject({ ok: true, event_count: 3, already_sealed: false });
    const sealFile = join(cwd, ".sdd", "runs", "run-1", "seal.json");
    expect(readFileSync(sealFile, "utf8")).toBe(`{"event_count": 3, "head": "${seal.json.head}"}\n`);
    expect((await bernsteinJson(["journal", "seal", "run-1"], { cwd })).json.already_sealed).toBe(true);

    const verified = await bernstein(["journal", "verify", "run-1"], { cwd });
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain("identity=verified");

    const refused = await bernsteinJson(["journal", "record", "run-1", "late"], { cwd });
    expect([refused.code, refused.json.error]).toEqual([2, "journal_sealed"]);

    const file = join(cwd, ".sdd", "runs", "run-1", "journal.jsonl");
    const original = readFileSync(file);
    // A foreign append (a valid chained row) after sealing:
    const lines = original.toString("utf8").trimEnd().split("\n");
    writeFileSync(file, original);
    appendFileSync(file, lines[lines.length - 1] + "\n");
    const appended = await bernstein(["journal", "verify", "run-1"], { cwd });
    expect(appended.code).toBe(1);
    expect(appended.stdout).toContain("mismatch");
    expect(appended.stdout).not.toContain("unverifiable");
    // A clean truncation at a row boundary:
    writeFileSync(file, lines.slice(0, 2).join("\n") + "\n");
    const truncated = await bernsteinJson(["journal", "verify", "run-1"], { cwd });
    expect(truncated.code).toBe(1);
    expect(truncated.json).toMatchObject({ ok: false, chain_consistent: true, coverage: "complete", identity: "mismatched", count: 2 });
    expect(truncated.json.errors).toContain("journal holds 2 events but the seal commits to 3");
    // An explicit --seal works for a file path too; the original bytes verify again.
    writeFileSync(file, original);
    const explicit = await bernsteinJson(["journal", "verify", file, "--seal", sealFile]);
    expect([explicit.code, explicit.json.identity]).toEqual([0, "verified"]);
    const byDir = await bernsteinJson(["journal", "verify", join(cwd, ".sdd", "runs", "run-1"), "--seal", sealFile]);
    expect([byDir.code, byDir.json.path]).toEqual([0, file]);
    // Resealing a changed journal is refused, not silently overwritten.
    writeFileSync(file, lines.slice(0, 2).join("\n") + "\n");
    const reseal = await bernsteinJson(["journal", "seal", "run-1"], { cwd });
    // seal_refused (exit 2): seal_mismatch is the verdict (exit 1) of a journal that disagrees with its seal.
    expect([reseal.code, reseal.json.error]).toEqual([2, "seal_refused"]);
  });

  test("refuses to seal a journal that does not verify, and a missing one", async () => {
    const cwd = dirs.make();
    mkdirSync(join(cwd, ".sdd", "runs", "bad"), { recursive: true });
    copyFileSync(join(VDIR, "hazards-payload-edit.jsonl"), join(cwd, ".sdd", "runs", "bad", "journal.jsonl"));
    const r = await bernsteinJson(["journal", "seal", "bad"], { cwd });
    expect([r.code, r.json.error]).toEqual([2, "seal_refused"]);
    expect(existsSync(join(cwd, ".sdd", "runs", "bad", "seal.json"))).toBe(false);
    const missing = await bernsteinJson(["journal", "seal", "nope"], { cwd });
    expect([missing.code, missing.json.error]).toEqual([3, "journal_missing"]);
  });

  test("sealing verifies on worker threads too: the seal commits to the exact head, a broken copy is refused", async () => {
    // BERNSTEIN_FAST_VERIFY_MIN_RANGE=1 splits even a small journal into
    // many ranges across workers, as a huge journal would be.
    const env = { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "1" };
    const cwd = dirs.make();
    const runs = join(cwd, ".sdd", "runs");
    for (const id of ["good", "broken"]) mkdirSync(join(runs, id), { recursive: true });
    const rows = readFileSync(join(VDIR, "hazards.jsonl"), "utf8").split("\n").filter(Boolean);
    writeFileSync(join(runs, "good", "journal.jsonl"), rows.join("\n") + "\n");
    writeFileSync(join(runs, "broken", "journal.jsonl"), rows.filter((_, i) => i !== 1).join("\n") + "\n");
    const exact = verifyJournalSync(join(runs, "good", "journal.jsonl"));
    const sealed = await bernsteinJson(["journal", "seal", "good"], { cwd, env });
    expect([sealed.code, sealed.json.event_count, sealed.json.head]).toEqual([0, exact.count, exact.head]);
    const refused = await bernsteinJson(["journal", "seal", "broken"], { cwd, env });
    expect([refused.code, refused.json.error]).toEqual([2, "seal_refused"]);
    expect(refused.json.errors).toEqual(["step 1: prev_hash break"]);
  });
});

describe("writer lock and resume across processes", () => {
  test("a second `journal record` while another holds the journal is refused with journal_locked", async () => {
    const cwd = dirs.make();
    // The first writer opens the journal (taking the lock) and then waits on stdin.
    const first = Bun.spawn([binPath(), "journal", "record", "run-1"], { cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    const lock = join(cwd, ".sdd", "runs", "run-1", "journal.lock");
    for (let i = 0; i < 200 && !existsSync(lock); i++) await Bun.sleep(25);
    expect(existsSync(lock)).toBe(true);
    const second = await bernsteinJson(["journal", "record", "run-1", "x"], { cwd });
    expect(second.code).toBe(2);
    expect(second.json.error).toBe("journal_locked");
    expect(second.json.detail).toContain("another process is writing");
    first.stdin.write('{"event": "from_first"}\n');
    first.stdin.end();
    expect(await first.exited).toBe(0);
    expect(existsSync(lock)).toBe(false);
    const after = await bernsteinJson(["journal", "record", "run-1", "x"], { cwd });
    expect([after.code, after.json.count]).toEqual([0, 2]);
  });

  test("a torn tail is refused with a pointer to `bernstein replay repair`", async () => {
    const cwd = dirs.make();
    await bernstein(["journal", "record", "run-7", "a"], { cwd });
    appendFileSync(join(cwd, ".sdd", "runs", "run-7", "journal.jsonl"), '{"ts": 17');
    const r = await bernstein(["journal", "record", "run-7", "b"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("bernstein replay repair run-7");
  });

  test("BERNSTEIN_REPLAY_RETENTION prunes the oldest runs when a journal is opened", async () => {
    const cwd = dirs.make();
    for (const id of ["run-00", "run-01", "run-02"]) mkdirSync(join(cwd, ".sdd", "runs", id), { recursive: true });
    const r = await bernstein(["journal", "record", "run-03", "start"], { cwd, env: { BERNSTEIN_REPLAY_RETENTION: "2" } });
    expect(r.code).toBe(0);
    expect(readdirSync(join(cwd, ".sdd", "runs")).sort()).toEqual(["run-02", "run-03"]);
    const meta = join(cwd, ".sdd", "runs", "run-03", "metadata.json");
    expect(statSync(meta).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(meta, "utf8")).run_id).toBe("run-03");
  });
});

describe("exit codes and errors", () => {
  test("missing FILE -> 3 journal_unreadable; run id without journal -> 3 journal_missing; bad run id -> 2", async () => {
    const cwd = dirs.make();
    const a = await bernsteinJson(["journal", "verify", join(cwd, "none.jsonl")], { cwd });
    expect([a.code, a.json.ok, a.json.error]).toEqual([3, false, "journal_unreadable"]);
    const b = await bernsteinJson(["journal", "verify", "run-404"], { cwd });
    expect([b.code, b.json.error]).toEqual([3, "journal_missing"]);
    const c = await bernsteinJson(["journal", "verify", "bad id"], { cwd });
    expect([c.code, c.json.error]).toEqual([2, "invalid_run_id"]);
    const d = await bernsteinJson(["journal", "record", "..", "x"], { cwd });
    expect([d.code, d.json.error]).toEqual([2, "invalid_run_id"]);
    const e = await bernstein(["journal", "verify", "x", "--seel", "y"], { cwd });
    expect(e.code).toBe(2);
    expect(e.stderr).toContain("did you mean '--seal'");
    // A directory is no journal: refused before any read (test/e2e/journal/input-trust.test.ts has the rest).
    const dir = await bernsteinJson(["journal", "verify", cwd + "/"], { cwd });
    expect([dir.code, dir.json.error]).toEqual([3, "input_not_regular_file"]);
  });

  test("bad --data is 3 invalid_data; malformed seal is 3; missing positional is 2; no stack traces", async () => {
    const cwd = dirs.make();
    const a = await bernsteinJson(["journal", "record", "r", "e", "--data", "{nope"], { cwd });
    expect([a.code, a.json.error]).toEqual([3, "invalid_data"]);
    const b = await bernsteinJson(["journal", "record", "r", "e", "--data", "[1]"], { cwd });
    expect([b.code, b.json.error]).toEqual([3, "invalid_data"]);
    writeFileSync(join(cwd, "seal.json"), '{"head": 3}');
    const c = await bernsteinJson(["journal", "verify", join(VDIR, "chain-4.jsonl"), "--seal", join(cwd, "seal.json")], { cwd });
    expect([c.code, c.json.error]).toEqual([3, "seal_malformed"]);
    const d = await bernstein(["journal", "verify"], { cwd });
    expect(d.code).toBe(2);
    for (const r of [a, b, c, d]) expect(r.stderr).not.toContain("    at ");
  });
});

describe("help", () => {
  for (const verb of ["verify", "record", "seal"]) {
    test(`journal ${verb} --help`, async () => {
      const r = await bernstein(["journal", verb, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatchSnapshot();
    });
  }
});
