/**
 * The verdict differences of issue 21, shaped after upstream's behaviour
 * (spec upstream-parity §3, §4, §7; run-journal §1.9), through the binary.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { upstreamWrite } from "../../helpers/upstream.ts";
import { referenceVerdicts, tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("verdicts21");
afterAll(() => dirs.cleanup());
const RUN_VECTORS = join(VECTORS, "run-journal");
const UNAUTH = ["elapsed_s", "event_hash", "index", "payload_hash", "prev_hash", "ts"];
/** Many small ranges, so the fast path stitches the divergent range to others (the case that lost the head). */
const SPLIT = { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "4096" };

function runTree(runs: Record<string, string>): { cwd: string; journal(run: string): string; runDir(run: string): string } {
  const cwd = dirs.make();
  const runDir = (run: string) => join(cwd, ".sdd", "runs", run);
  for (const [run, vector] of Object.entries(runs)) {
    mkdirSync(runDir(run), { recursive: true });
    copyFileSync(join(RUN_VECTORS, `${vector}.jsonl`), join(runDir(run), "journal.jsonl"));
  }
  return { cwd, journal: (run) => join(runDir(run), "journal.jsonl"), runDir };
}

describe("head after a divergence = head of the verified prefix", () => {
  test("journal verify and replay --verify, one thread and split ranges, JSON and prose", async () => {
    const t = runTree({ tampered: "hazards-payload-edit", swapped: "hazards-rows-swapped", edited: "hazards-prev-hash-edit" });
    for (const run of ["tampered", "swapped", "edited"]) {
      const want = referenceVerdicts([t.journal(run)])[0]!;
      expect(want.chain_consistent).toBe(false);
      expect(typeof want.head).toBe("string");
      for (const threads of ["1", "2"]) {
        for (const argv of [["journal", "verify", run], ["replay", run, "--verify"]]) {
          const r = await bernsteinJson([...argv, "--threads", threads], { cwd: t.cwd, env: SPLIT });
          const label = `${argv.join(" ")} --threads ${threads}`;
          expect([label, r.code, r.json.head, r.json.divergent_index]).toEqual([label, 1, want.head, want.divergent_index]);
          // upstream's report keys beside ours
          expect([label, r.json.run_id, r.json.step_index]).toEqual([label, run, want.divergent_index]);
          expect(r.json.expected_hash).toBe(want.expected_hash);
          expect(r.json.actual_hash).toBe(want.actual_hash);
        }
      }
      const prose = await bernstein(["replay", run, "--verify"], { cwd: t.cwd, env: SPLIT });
      expect(prose.stdout).toContain(`head of the verified prefix (steps before ${want.divergent_index}): ${want.head}`);
      const jprose = await bernstein(["journal", "verify", run], { cwd: t.cwd, env: SPLIT });
      expect(jprose.stdout).toContain(`head of the verified prefix ${want.head}`);
    }
  }, 60_000);

  test("a sealed journal with one broken row appended: only the count disagrees, no false head mismatch", async () => {
    const t = runTree({});
    const journal = t.journal("sealed");
    const events = Array.from({ length: 40 }, (_, i) => ({ event: "task_completed", task_id: `T-${i}`, note: "x".repeat(200) }));
    const [w] = upstreamWrite([{ job: "journal", path: journal, events }]);
    writeFileSync(join(t.runDir("sealed"), "seal.json"), JSON.stringify({ head: w.head, event_count: 40 }));
    // A foreign writer appends a row that links to the head but whose hash is wrong.
    appendFileSync(journal, JSON.stringify({ ts: 1.5, elapsed_s: 0.0, index: 40, event: "x", prev_hash: w.head, payload_hash: "0".repeat(64), event_hash: "1".repeat(64) }) + "\n");
    for (const threads of ["1", "2"]) {
      const r = await bernsteinJson(["replay", "sealed", "--verify", "--threads", threads], { cwd: t.cwd, env: SPLIT });
      expect(r.code).toBe(1);
      expect(r.json.head).toBe(w.head);
      expect(r.json.identity).toBe("mismatched");
      expect(r.json.errors).toEqual(["step 40: event_hash mismatch", "journal holds 41 events but the seal commits to 40"]);
    }
  });
});

describe("unauthenticated_fields (spec §3.1)", () => {
  test("the sorted six on intact, divergent, partial and sealed verdicts, in both commands, JSON and prose", async () => {
    const t = runTree({ intact: "chain-4", tampered: "hazards-payload-edit", junk: "hazards-junk-line-middle", sealed: "chain-4" });
    const head = referenceVerdicts([t.journal("sealed")])[0]!.head;
    writeFileSync(join(t.runDir("sealed"), "seal.json"), JSON.stringify({ head, event_count: 4 }));
    for (const run of ["intact", "tampered", "junk", "sealed"]) {
      for (const argv of [["journal", "verify", run], ["replay", run, "--verify"]]) {
        const r = await bernstein([...argv, "--as-json"], { cwd: t.cwd });
        const doc = JSON.parse(r.stdout); // the whole stdout is one document
        expect([run, doc.unauthenticated_fields]).toEqual([run, UNAUTH]);
        const prose = await bernstein(argv, { cwd: t.cwd });
        expect(prose.stdout).toContain(`Unauthenticated fields: ${UNAUTH.join(", ")}`);
      }
    }
    expect(JSON.parse((await bernstein(["replay", "sealed", "--verify", "--as-json"], { cwd: t.cwd })).stdout).identity).toBe("verified");
  }, 60_000);

  test("an edited ts keeps identity=verified, and the verdict names ts as not covered", async () => {
    const t = runTree({ run: "chain-4" });
    const head = referenceVerdicts([t.journal("run")])[0]!.head;
    writeFileSync(join(t.runDir("run"), "seal.json"), JSON.stringify({ head, event_count: 4 }));
    const text = readFileSync(t.journal("run"), "utf8").replace(/"ts": [0-9.]+/, '"ts": 1.0');
    writeFileSync(t.journal("run"), text);
    const r = await bernsteinJson(["replay", "run", "--verify"], { cwd: t.cwd });
    expect([r.code, r.json.identity]).toEqual([0, "verified"]);
    expect(r.json.unauthenticated_fields).toContain("ts");
  });
});

describe("provider-state gate (spec §4)", () => {
  function gateRun(mutations: Record<string, unknown>[]): { cwd: string; journal: string; runDir: string } {
    const t = runTree({});
    const payloads = upstreamWrite(mutations.map((m) => ({ job: "mutation", ...m })));
    const events = [{ event: "run_started", run_id: "gate" }, ...payloads.map((p, i) => (i === 1 && mutations[1]!.corrupt ? { ...p, content_address: "0".repeat(64) } : p)), { event: "run_completed" }];
    upstreamWrite([{ job: "journal", path: t.journal("gate"), events }]);
    return { cwd: t.cwd, journal: t.journal("gate"), runDir: t.runDir("gate") };
  }
  const detail = { pre_tokens: 180000, trigger: "auto", post_tokens: 42000 };

  test("unflagged mutations with their content address: exit 0, chain intact", async () => {
    const g = gateRun([{ detail }, { detail: { before_x: 1 }, step_index: 1 }]);
    const r = await bernsteinJson(["replay", "gate", "--verify"], { cwd: g.cwd });
    expect(r.code).toBe(0);
    expect(r.json.ok).toBe(true);
    expect(r.json.provider_state).toEqual({ mutations: 2, flagged_steps: [] });
  });

  test("a flagged mutation and a content-address mismatch: exit 1, reason_code provider_state_mutation, upstream's keys and messages", async () => {
    const g = gateRun([{ detail, flagged: true }, { detail, step_index: 1, corrupt: true }]);
    const r = await bernsteinJson(["replay", "gate", "--verify"], { cwd: g.cwd });
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({
      run_id: "gate",
      ok: false,
      error: "provider_state_mutation",
      chain_consistent: true,
      coverage: "complete",
      verified: false,
      reason_code: "provider_state_mutation",
      flagged_steps: [1],
    });
    expect(r.json.errors).toEqual([
      "step 1: flagged provider-side mutation (compact_boundary) arrived in deterministic mode",
      "step 2: provider_state_mutation content address mismatch",
    ]);
    expect(r.json.detail).toBe(r.json.errors[0]);
    expect(existsSync(join(g.runDir, "divergence_report.json"))).toBe(false);
    const prose = await bernstein(["replay", "gate", "--verify"], { cwd: g.cwd });
    expect(prose.code).toBe(1);
    expect(prose.stdout).toContain("PROVIDER STATE");
    expect(prose.stdout).toContain("step 2: provider_state_mutation content address mismatch");
  });

  // the gate read lines up to 16 MiB and counted a longer one without reading it: a flagged mutation padded past
  // that passed with exit 0, though the chain walk reads rows up to 256 MiB
  test("a flagged mutation row over 16 MiB (written by the Python reference) fails the gate like any other", async () => {
    const t = runTree({});
    const [mutation] = upstreamWrite([{ job: "mutation", detail, flagged: true }]);
    const events = [{ event: "run_started", run_id: "gate" }, { ...mutation, transcript: "t".repeat(17 << 20) }, { event: "run_completed" }];
    upstreamWrite([{ job: "journal", path: t.journal("gate"), events }]);
    expect(readFileSync(t.journal("gate")).length).toBeGreaterThan(17 << 20);
    const r = await bernsteinJson(["replay", "gate", "--verify"], { cwd: t.cwd });
    expect([r.code, r.json.ok, r.json.reason_code, r.json.flagged_steps]).toEqual([1, false, "provider_state_mutation", [1]]);
  }, 60_000);

  // rows of ~1.1 MB each cross the gate's 1 MiB reads: each is assembled in the splitter's reused buffer, and a
  // search remembered from the row before must not answer for the next (it did, in a first version)
  test("flagged mutation rows that straddle the gate's reads are each found", async () => {
    const t = runTree({});
    const rows: Record<string, unknown>[] = [{ event: "run_started", run_id: "gate" }];
    for (let i = 1; i < 9; i++) {
      rows.push(i % 3 === 2 ? { event: "provider_state_mutation", flagged: true, mutation_kind: `m${i}`, pad: "m".repeat(1_100_000) } : { event: "tick", n: i, pad: "t".repeat(1_100_000) });
    }
    const rec = await bernstein(["journal", "record", "gate"], { cwd: t.cwd, stdin: rows.map((r) => JSON.stringify(r)).join("\n") + "\n" });
    expect(rec.code).toBe(0);
    const r = await bernsteinJson(["replay", "gate", "--verify"], { cwd: t.cwd });
    expect([r.code, r.json.reason_code, r.json.flagged_steps]).toEqual([1, "provider_state_mutation", [2, 5, 8]]);
  }, 60_000);

  test("a mutation row spelled with \\u escapes is still found; a broken chain is a divergence first", async () => {
    const g = gateRun([{ detail, flagged: true }]);
    writeFileSync(g.journal, readFileSync(g.journal, "utf8").replace('"provider_state_mutation"', '"provider\\u005fstate_mutation"'));
    const r = await bernsteinJson(["replay", "gate", "--verify"], { cwd: g.cwd });
    expect([r.code, r.json.reason_code, r.json.flagged_steps]).toEqual([1, "provider_state_mutation", [1]]);
    // Tamper the chain too: upstream reports the divergence, not the gate.
    writeFileSync(g.journal, readFileSync(g.journal, "utf8").replace('"run_id": "gate"', '"run_id": "other"'));
    const d = await bernsteinJson(["replay", "gate", "--verify"], { cwd: g.cwd });
    expect([d.code, d.json.error, d.json.step_index, d.json.reason_code]).toEqual([1, "chain_broken", 0, undefined]);
  });
});
