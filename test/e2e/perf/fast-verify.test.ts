/**
 * The fast verifier through the compiled binary: worker threads embedded in
 * the executable, `--threads`, `--links-only`, the snapshot fields, no
 * progress output when stderr is piped. (Speed is shown by `npm run bench`,
 * never asserted here.)
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateJournal } from "../../../bench/journal-gen.ts";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { runVectorExpect } from "../../helpers/run-vectors.ts";
import { referenceVerdicts, tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("e2e-fast-verify");
afterAll(() => dirs.cleanup());
const SHARED_VDIR = join(VECTORS, "run-journal");
// A negative verdict writes divergence_report.json next to the journal: work on
// copies, never in the shared vectors (writable to root despite its modes).
const VDIR = dirs.make();
for (const f of readdirSync(SHARED_VDIR)) copyFileSync(join(SHARED_VDIR, f), join(VDIR, f));
const NAMES = readdirSync(VDIR)
  .filter((f) => f.endsWith(".jsonl"))
  .map((f) => f.slice(0, -".jsonl".length))
  .sort();
/** Split even tiny journals across the workers (a tuning knob: it never changes a verdict). */
const TINY_RANGES = { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "1" };

describe("journal verify --threads N (compiled binary, worker threads)", () => {
  test("every vector: the same verdict for 1, 2, 3 and 7 threads, equal to the expect file", async () => {
    for (const name of NAMES) {
      const file = join(VDIR, `${name}.jsonl`);
      const exp = runVectorExpect(VDIR, name);
      let first: unknown = null;
      for (const threads of ["1", "2", "3", "7"]) {
        const r = await bernsteinJson(["journal", "verify", file, "--threads", threads], { env: TINY_RANGES });
        expect([name, threads, r.code]).toEqual([name, threads, exp.ok ? 0 : 1]);
        for (const k of Object.keys(exp)) expect([name, threads, k, r.json[k]]).toEqual([name, threads, k, exp[k]]);
        expect(r.json).toMatchObject({ mode: "full", payloads_checked: true, grew_by: 0 });
        expect(r.stderr).toBe("");
        if (first === null) first = r.json;
        else expect(r.json).toEqual(first);
      }
    }
  }, 120_000);

  test("a generated multi-MB journal: threads 1 and 2 agree with each other and with Python, intact and tampered", async () => {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "run-big", 6_000_000, 5);
    const tampered = join(dir, "tampered.jsonl");
    const lines = readFileSync(gen.path, "utf8").split("\n");
    const i = lines.findIndex((l, k) => k > lines.length * 0.7 && l.includes('"agent_id": "agent-'));
    lines[i] = lines[i]!.replace('"agent_id": "agent-', '"agent_id": "agent-X');
    writeFileSync(tampered, lines.join("\n"));
    const python = referenceVerdicts([gen.path, tampered]);
    for (const [file, want] of [[gen.path, python[0]!], [tampered, python[1]!]] as const) {
      const one = await bernsteinJson(["journal", "verify", file, "--threads", "1"]);
      const two = await bernsteinJson(["journal", "verify", file, "--threads", "2"], { env: { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "65536" } });
      expect(two.json).toEqual(one.json);
      for (const k of Object.keys(want)) expect([k, one.json[k]]).toEqual([k, want[k]]);
    }
    expect(python[1]!.divergent_index).toBe(i);
  }, 120_000);

  test("the WebAssembly kernel verifies the rows inside the binary, in the main thread and in workers (BERNSTEIN_VERIFY_STATS)", async () => {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "run-k", 12_000_000, 9);
    const rows = gen.rows;
    const stats = (stderr: string) => {
      const m = /verify stats: rows by kernel (\d+), exact (\d+); threads (\d+)/.exec(stderr);
      if (!m) throw new Error(`no stats line in: ${stderr}`);
      return m.slice(1).map(Number);
    };
    const one = await bernsteinJson(["journal", "verify", gen.path, "--threads", "1"], { env: { BERNSTEIN_VERIFY_STATS: "1" } });
    expect(one.json.ok).toBe(true);
    // one range: every row by the kernel but the genesis row (its prev_hash is empty), which is checked exactly
    const [k1, e1, t1] = stats(one.stderr);
    expect([k1, e1, t1]).toEqual([rows - 1, 1, 1]);
    // 1 MiB ranges over 2 threads (the worker joins while the main thread is still at work on them): every
    // range's first row too by the kernel, in whichever thread took the range
    const two = await bernsteinJson(["journal", "verify", gen.path, "--threads", "2"], {
      env: { BERNSTEIN_VERIFY_STATS: "1", BERNSTEIN_FAST_VERIFY_MIN_RANGE: String(1 << 20) },
    });
    expect(two.json).toEqual(one.json);
    const [k2, e2, t2] = stats(two.stderr);
    expect(t2).toBe(2);
    expect([k2, e2]).toEqual([rows - 1, 1]);
    // links-only: the kernel checks the links too
    const links = await bernsteinJson(["journal", "verify", gen.path, "--links-only"], { env: { BERNSTEIN_VERIFY_STATS: "1" } });
    expect(links.json.ok).toBe(true);
    expect(stats(links.stderr).slice(0, 2)).toEqual([rows - 1, 1]);
    // without the variable, stderr stays empty
    expect((await bernsteinJson(["journal", "verify", gen.path])).stderr).toBe("");
  }, 60_000);

  test("--links-only: finds a broken link, passes a payload edit, and says payloads were not checked", async () => {
    const broken = await bernsteinJson(["journal", "verify", join(VDIR, "hazards-row-deleted.jsonl"), "--links-only", "--threads", "3"], {
      env: TINY_RANGES,
    });
    expect(broken.code).toBe(1);
    expect(broken.json).toMatchObject({ mode: "links-only", payloads_checked: false, chain_consistent: false });
    const edited = await bernstein(["journal", "verify", join(VDIR, "hazards-payload-edit.jsonl"), "--links-only"]);
    expect(edited.code).toBe(0);
    expect(edited.stdout).toContain("links intact (payloads NOT checked): 300 events");
    expect(edited.stdout).toContain("payload hashes were NOT recomputed");
    const json = await bernsteinJson(["journal", "verify", join(VDIR, "hazards-payload-edit.jsonl"), "--links-only"]);
    expect(json.json).toMatchObject({ ok: true, mode: "links-only", payloads_checked: false });
  });

  test("bad --threads values are usage errors (exit 2, one JSON document)", async () => {
    for (const bad of ["0", "-1", "two", "1.5", "100000"]) {
      const r = await bernsteinJson(["journal", "verify", join(VDIR, "chain-4.jsonl"), "--threads", bad]);
      expect([bad, r.code, r.json.ok, r.json.error]).toEqual([bad, 2, false, "invalid_threads"]);
    }
  });

  test("a directory or unreadable target is exit 3 whatever the thread count", async () => {
    const dir = dirs.make();
    const r = await bernsteinJson(["journal", "verify", dir, "--threads", "2"]);
    expect([r.code, r.json.error]).toEqual([3, "input_not_regular_file"]);
  });
});
