import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventHash, payloadHash } from "../../../src/journal/hash.ts";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { RUN_VECTORS, makeSdd, type SddTree } from "./fixture.ts";

const VECTOR_NAMES = readdirSync(RUN_VECTORS)
  .filter((f) => f.endsWith(".expect.json"))
  .map((f) => f.slice(0, -".expect.json".length));
const expectOf = (name: string) => JSON.parse(readFileSync(join(RUN_VECTORS, `${name}.expect.json`), "utf8"));
const HAZARDS_HEAD = expectOf("hazards").head as string;

describe("replay <RUN_ID> --verify (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd(VECTOR_NAMES);
  });
  afterAll(() => t.cleanup());

  test("every run-journal vector gets the reference verdict, exit code and JSON shape", async () => {
    for (const name of VECTOR_NAMES) {
      const want = expectOf(name);
      const r = await bernsteinJson(["replay", name, "--verify"], { cwd: t.cwd });
      const got = r.json;
      const label = `${name}: ${JSON.stringify(got)}`;
      expect(`${label} exit ${r.code}`).toBe(`${label} exit ${want.ok ? 0 : 1}`);
      expect(got.run_id).toBe(name);
      for (const k of ["ok", "chain_consistent", "coverage", "count", "discarded_line_indices", "divergent_index"]) {
        expect([name, k, got[k]]).toEqual([name, k, want[k]]);
      }
      if (want.head !== null) expect([name, got.head]).toEqual([name, want.head]);
      if (want.expected_hash) expect([name, got.expected_hash, got.actual_hash]).toEqual([name, want.expected_hash, want.actual_hash]);
      expect(got.identity).toBe("unverifiable");
      const report = join(t.runDir(name), "divergence_report.json");
      expect([name, existsSync(report)]).toEqual([name, !want.ok]);
      if (!want.ok) {
        const text = readFileSync(report, "utf8");
        expect(Object.keys(JSON.parse(text))).toEqual(["actual_hash", "expected_hash", "run_id", "step_index"]);
        expect(JSON.parse(text).step_index).toBe(want.divergent_index);
        expect(text.endsWith("}\n")).toBe(true);
      }
    }
  });

  test("the JSON is journal verify's document plus run_id", async () => {
    for (const name of ["hazards", "hazards-rows-swapped", "hazards-torn-tail"]) {
      const a = await bernsteinJson(["replay", name, "--verify"], { cwd: t.cwd });
      const b = await bernsteinJson(["journal", "verify", name], { cwd: t.cwd });
      expect(b.code).toBe(a.code);
      // replay --verify adds what its provider-state gate looked at (upstream's gate; journal verify has none).
      const { provider_state, ...rest } = a.json;
      expect(a.json.run_id).toBe(name);
      expect(Object.keys(a.json)[0]).toBe("run_id");
      expect(provider_state === undefined || provider_state.mutations === 0).toBe(true);
      expect(rest).toEqual(b.json);
    }
  });

  test("prose: chain intact … identity=unverifiable, or DIVERGENCE at the first divergent step", async () => {
    const ok = await bernstein(["replay", "chain-4", "--verify"], { cwd: t.cwd });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("chain intact for chain-4 (4 steps); identity=unverifiable");
    const bad = await bernstein(["replay", "hazards-prev-hash-edit", "--verify"], { cwd: t.cwd });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`DIVERGENCE first divergent step ${expectOf("hazards-prev-hash-edit").divergent_index} in run hazards-prev-hash-edit`);
    expect(bad.stdout).toContain("Divergence report written to:");
  });

  test("an injected non-deterministic tool result surfaces at its exact step", async () => {
    const lines = readFileSync(join(RUN_VECTORS, "hazards.jsonl"), "utf8").split("\n");
    const candidates = lines.map((l, i) => (l.includes('"result_summary": ') ? i : -1)).filter((i) => i >= 0);
    const step = candidates[Math.floor(candidates.length / 2)]!;
    lines[step] = lines[step]!.replace(/"result_summary": "[^"]*"/, '"result_summary": "different tool output on replay"');
    mkdirSync(t.runDir("injected"), { recursive: true });
    writeFileSync(t.journal("injected"), lines.join("\n"));
    const r = await bernsteinJson(["replay", "injected", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(1);
    expect(r.json.divergent_index).toBe(step);
    expect(r.json.errors).toContain(`step ${step}: event_hash mismatch`);
  });

  test("with the run's seal.json: verified, then mismatch (exit 1) when truncated or extended", async () => {
    writeFileSync(join(t.runDir("hazards"), "seal.json"), JSON.stringify({ event_count: 300, head: HAZARDS_HEAD }));
    let r = await bernstein(["replay", "hazards", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("identity=verified");

    // The clean truncation is chain-consistent: only the seal can tell.
    writeFileSync(join(t.runDir("hazards-clean-truncation"), "seal.json"), JSON.stringify({ event_count: 300, head: HAZARDS_HEAD }));
    r = await bernstein(["replay", "hazards-clean-truncation", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(1);
    expect(r.stdout.toLowerCase()).toContain("mismatch");
    expect(r.stdout).not.toContain("unverifiable");
    const j = await bernsteinJson(["replay", "hazards-clean-truncation", "--verify"], { cwd: t.cwd });
    expect(j.json).toMatchObject({ ok: false, chain_consistent: true, identity: "mismatched" });
    expect(j.json.errors).toContain("journal holds 297 events but the seal commits to 300");

    // Extended after sealing with a correctly chained row: the chain is fine, the seal is not.
    mkdirSync(t.runDir("extended"), { recursive: true });
    const ph = payloadHash("task_retried", { task_id: "T-late" });
    const eh = eventHash(HAZARDS_HEAD, "task_retried", ph, 300);
    writeFileSync(
      t.journal("extended"),
      readFileSync(join(RUN_VECTORS, "hazards.jsonl"), "utf8") +
        `{"ts": 1.0, "elapsed_s": 0.0, "index": 300, "event": "task_retried", "prev_hash": "${HAZARDS_HEAD}", "payload_hash": "${ph}", "event_hash": "${eh}", "task_id": "T-late"}\n`,
    );
    writeFileSync(join(t.runDir("extended"), "seal.json"), JSON.stringify({ event_count: 300, head: HAZARDS_HEAD }));
    r = await bernstein(["replay", "extended", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("identity=mismatched");
    expect(r.stdout).not.toContain("unverifiable");
    const unsealed = await bernsteinJson(["replay", "extended", "--verify", "--seal", join(RUN_VECTORS, "nonexistent")], { cwd: t.cwd });
    expect(unsealed.code).toBe(3);
  });

  test("--seal F names the seal explicitly; an unreadable one is an input error, not 'no seal'", async () => {
    const sealFile = join(t.cwd, "external-seal.json");
    writeFileSync(sealFile, JSON.stringify({ event_count: 4, head: expectOf("chain-4").head }));
    let r = await bernsteinJson(["replay", "chain-4", "--verify", "--seal", sealFile], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.json.identity).toBe("verified");
    r = await bernsteinJson(["replay", "chain-4", "--verify", "--seal", join(t.cwd, "missing.json")], { cwd: t.cwd });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "seal_unreadable" });
  });

  test("a sealed journal that was deleted is a negative verdict; an unsealed missing one is missing input", async () => {
    mkdirSync(t.runDir("gone"), { recursive: true });
    writeFileSync(join(t.runDir("gone"), "seal.json"), JSON.stringify({ event_count: 4, head: expectOf("chain-4").head }));
    let r = await bernsteinJson(["replay", "gone", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(1);
    expect(r.json.identity).toBe("mismatched");
    expect(r.json.errors).toContain("journal file is missing but an external seal exists");
    unlinkSync(join(t.runDir("gone"), "seal.json"));
    r = await bernsteinJson(["replay", "gone", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "journal_missing", run_id: "gone" });
    r = await bernsteinJson(["replay", "no-such-run", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "run_not_found" });
    rmSync(t.runDir("gone"), { recursive: true });
  });

  test("latest resolves to the run that started last for --verify (not the greatest id)", async () => {
    mkdirSync(t.runDir("0-started-last"), { recursive: true });
    writeFileSync(t.journal("0-started-last"), readFileSync(join(RUN_VECTORS, "chain-4.jsonl")));
    writeFileSync(join(t.runDir("0-started-last"), "metadata.json"), JSON.stringify({ run_id: "0-started-last", started_at: 1800000000.0 }));
    try {
      const r = await bernsteinJson(["replay", "latest", "--verify"], { cwd: t.cwd });
      expect(r.json.run_id).toBe("0-started-last");
      expect(r.stderr).toContain("Replaying latest run: 0-started-last");
    } finally {
      rmSync(t.runDir("0-started-last"), { recursive: true });
    }
  });

  test("--threads / --links-only are honoured, never ignored", async () => {
    const threaded = await bernsteinJson(["replay", "hazards-payload-edit", "--verify", "--threads", "2"], { cwd: t.cwd });
    expect(threaded.json.divergent_index).toBe(expectOf("hazards-payload-edit").divergent_index);
    expect(threaded.json).toMatchObject({ mode: "full", payloads_checked: true });
    // links-only never re-hashes payloads: a payload edit passes, and the verdict says so
    const links = await bernsteinJson(["replay", "hazards-payload-edit", "--verify", "--links-only"], { cwd: t.cwd });
    expect(links.json).toMatchObject({ divergent_index: null, mode: "links-only", payloads_checked: false });
    // ...but a broken link is found
    const broken = await bernsteinJson(["replay", "hazards-prev-hash-edit", "--verify", "--links-only"], { cwd: t.cwd });
    expect(broken.code).toBe(1);
    expect(broken.json.divergent_index).toBe(expectOf("hazards-prev-hash-edit").divergent_index);
  });

  test("usage and refusals", async () => {
    let r = await bernsteinJson(["replay", "chain-4", "--verify", "--from-step", "2"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("usage");
    r = await bernsteinJson(["replay", "chain-4", "--verify", "--limit", "3"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("flag_not_applicable");
    r = await bernsteinJson(["replay", "../etc", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("invalid_run_id");
    r = await bernsteinJson(["replay", "chain-4", "--verify", "--yes-i-want-to-publish"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("flag_not_applicable");
    expect(r.json.detail).toContain("--yes-i-want-to-publish");
  });
});
