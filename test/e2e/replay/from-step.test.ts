import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { RUN_VECTORS, makeSdd, type SddTree } from "./fixture.ts";

const PROJECTIONS = JSON.parse(readFileSync(join(RUN_VECTORS, "hazards.from-step.json"), "utf8")) as Record<
  string,
  { step_count: number; head_hash: string; events: string[] }
>;

describe("replay <RUN_ID> --from-step N (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd({ hazards: "hazards", tampered: "hazards-payload-edit", torn: "hazards-torn-tail" });
  });
  afterAll(() => t.cleanup());

  test("every projection in hazards.from-step.json, byte for byte as Python's json.dumps(state, sort_keys=True)", async () => {
    const ns = Object.keys(PROJECTIONS);
    const want = runPython(
      // Every success document carries "ok": true; the rest is Python's state, sorted as json.dumps sorts it.
      "import json,sys\nd=json.load(sys.stdin)\nprint(json.dumps({n: json.dumps({**s, 'ok': True}, sort_keys=True) + '\\n' for n, s in d.items()}))",
      PROJECTIONS,
    ) as Record<string, string>;
    for (const n of ns) {
      const r = await bernstein(["replay", "hazards", "--from-step", n, "--as-json"], { cwd: t.cwd });
      expect([n, r.code]).toEqual([n, 0]);
      expect([n, r.stdout]).toEqual([n, want[n]!]);
      expect(Object.keys(JSON.parse(r.stdout))).toEqual(["events", "head_hash", "ok", "step_count"]);
    }
  });

  test("two invocations give identical bytes; N beyond the end is clamped (and warned about); negative N is a usage error", async () => {
    const a = await bernstein(["replay", "hazards", "--from-step", "150", "--as-json"], { cwd: t.cwd });
    const b = await bernstein(["replay", "hazards", "--from-step", "150", "--as-json"], { cwd: t.cwd });
    expect(a.stdout).toBe(b.stdout);
    const big = await bernsteinJson(["replay", "hazards", "--from-step", "100000"], { cwd: t.cwd });
    expect(big.json.step_count).toBe(300);
    expect(big.stderr).toContain("--from-step 100000 is beyond the end of hazards: it has 300 step(s)");
    expect(a.stderr).not.toContain("beyond the end");
    for (const n of ["-4", "-1"]) {
      const neg = await bernsteinJson(["replay", "hazards", `--from-step=${n}`], { cwd: t.cwd });
      expect([n, neg.code, neg.json.ok, neg.json.error]).toEqual([n, 2, false, "usage"]);
    }
    const spaced = await bernsteinJson(["replay", "hazards", "--from-step", "-1"], { cwd: t.cwd });
    expect(spaced.code).toBe(2);
  });

  test("the projection is recomputed from content: a tampered journal still projects, discarded lines are invisible", async () => {
    const tampered = await bernsteinJson(["replay", "tampered", "--from-step", "300"], { cwd: t.cwd });
    expect(tampered.code).toBe(0);
    expect(tampered.json.step_count).toBe(300);
    expect(PROJECTIONS["100000"]!.step_count).toBe(300);
    expect(tampered.json.head_hash).not.toBe(PROJECTIONS["100000"]!.head_hash);
    expect(tampered.json.events).toEqual(PROJECTIONS["100000"]!.events);
    const torn = await bernsteinJson(["replay", "torn", "--from-step", "1000"], { cwd: t.cwd });
    expect(torn.json.step_count).toBe(299);
  });

  test("prose names the run, the step, the head and the events", async () => {
    const r = await bernstein(["replay", "hazards", "--from-step", "1"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Rebuilt state for hazards through step 1\nhead: ${PROJECTIONS["1"]!.head_hash}\nevents: run_started\n`);
  });

  test("a bad N is a usage error; a missing run is missing input", async () => {
    let r = await bernsteinJson(["replay", "hazards", "--from-step", "two"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("usage");
    r = await bernsteinJson(["replay", "nope", "--from-step", "2"], { cwd: t.cwd });
    expect(r.code).toBe(3);
    expect(r.json.error).toBe("run_not_found");
  });
});
