import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { cleanupProjects, journalEvents, makeProject, readLedger, runIds, runToEnd, spawnRun, waitFor } from "./fixture.ts";

afterAll(cleanupProjects);

const CHAIN = [{ id: "T1" }, { id: "T2", depends_on: ["T1"] }, { id: "T3", depends_on: ["T2"] }];

/** Run once, Ctrl-C it while T2 runs, resume it to the end: [first run id, second run id]. */
async function stoppedAndResumed(): Promise<{ p: ReturnType<typeof makeProject>; run1: string; run2: string }> {
  const p = makeProject({ tasks: CHAIN, agentEnv: { AGENT_SLEEP: "0.3" } });
  const proc = spawnRun(p, ["--max-agents", "1"]);
  await waitFor(() => readLedger(p).some((l) => l.kind === "start" && l.task === "T2"), 20000, "T2 to start");
  proc.kill("SIGINT");
  await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const r = await runToEnd(p, ["--max-agents", "1"]);
  expect(r.code).toBe(0);
  const [run1, run2] = runIds(p);
  return { p, run1: run1!, run2: run2! };
}

describe("one story across resumes (compiled binary)", () => {
  test("the resumed run's run_started names the run and session it continues; a fresh run names none", async () => {
    const { p, run1, run2 } = await stoppedAndResumed();
    const first = journalEvents(p, run1)[0]!;
    expect(first.get("event")).toBe("run_started");
    expect(first.has("resumed_from_run")).toBe(false);
    const started = journalEvents(p, run2)[0]!;
    expect(started.get("event")).toBe("run_started");
    expect(started.get("resumed_from_run")).toBe(run1);
    expect(String(started.get("resumed_from_session"))).toMatch(/^\d+$/);
    // Upstream's keys stay first; ours come after them.
    expect([...started.keys()].slice(-2)).toEqual(["resumed_from_run", "resumed_from_session"]);
    expect([...started.keys()].indexOf("config_hash")).toBeLessThan([...started.keys()].indexOf("resumed_from_run"));

    // replay list marks the continuation (JSON and table).
    const list = await bernsteinJson(["replay", "list", "--sdd-dir", p.sddDir]);
    expect(list.code).toBe(0);
    const byId = new Map(list.json.map((r: any) => [r.run_id, r]));
    expect((byId.get(run2) as any).continues).toBe(run1);
    expect((byId.get(run1) as any).continues).toBeNull();
    // A second listing is served from the cache and says the same.
    const again = await bernsteinJson(["replay", "list", "--sdd-dir", p.sddDir]);
    expect(again.json).toEqual(list.json);
    const table = await bernstein(["replay", "list", "--sdd-dir", p.sddDir], { env: { COLUMNS: "200" } });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("Continues");
    expect(table.stdout.split("\n").find((l) => l.startsWith(run2))).toContain(run1);

    // replay <RUN2> --with-previous: both runs, oldest first, each under a header line.
    const shown = await bernstein(["replay", run2, "--with-previous", "--sdd-dir", p.sddDir], { env: { COLUMNS: "200" } });
    expect(shown.code).toBe(0);
    const h1 = shown.stdout.indexOf(`=== Run 1 of 2: ${run1} ===`);
    const h2 = shown.stdout.indexOf(`=== Run 2 of 2: ${run2} (continues ${run1}) ===`);
    expect(h1).toBeGreaterThanOrEqual(0);
    expect(h2).toBeGreaterThan(h1);
    expect(shown.stdout.indexOf("run_started", h1)).toBeLessThan(h2);
    expect(shown.stdout.indexOf("session_resume", h2)).toBeGreaterThan(h2);
    // Each run is displayed exactly as replay <RUN> displays it alone.
    const alone1 = await bernstein(["replay", run1, "--sdd-dir", p.sddDir], { env: { COLUMNS: "200" } });
    const alone2 = await bernstein(["replay", run2, "--sdd-dir", p.sddDir], { env: { COLUMNS: "200" } });
    expect(shown.stdout).toContain(alone1.stdout);
    expect(shown.stdout).toContain(alone2.stdout);

    // --as-json: one document with the runs' documents, oldest first.
    const js = await bernsteinJson(["replay", run2, "--with-previous", "--sdd-dir", p.sddDir]);
    expect(js.code).toBe(0);
    expect(js.json.runs.map((r: any) => r.run_id)).toEqual([run1, run2]);
    expect(js.json.ok).toBe(true);
    expect(js.json.missing_previous).toBeNull();
    const single = await bernsteinJson(["replay", run1, "--sdd-dir", p.sddDir]);
    expect(js.json.runs[0]).toEqual(single.json);

    // Without a predecessor the chain is the run alone.
    const solo = await bernsteinJson(["replay", run1, "--with-previous", "--sdd-dir", p.sddDir]);
    expect(solo.json.runs.map((r: any) => r.run_id)).toEqual([run1]);

    // --with-previous is refused by the operations it does not apply to (nothing is verified silently without it).
    const refused = await bernstein(["replay", run2, "--verify", "--with-previous", "--sdd-dir", p.sddDir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--with-previous");

    // A predecessor that is gone is a note, not a crash.
    renameSync(join(p.sddDir, "runs", run1), join(p.dir, "moved-away"));
    const gone = await bernstein(["replay", run2, "--with-previous", "--sdd-dir", p.sddDir], { env: { COLUMNS: "200" } });
    expect(gone.code).toBe(0);
    expect(gone.stdout).toContain(`Note: previous run ${run1} not shown`);
    expect(gone.stdout).toContain(`=== Run 1 of 1: ${run2} ===`);
    expect(gone.stderr).not.toContain("    at ");
    const goneJs = await bernsteinJson(["replay", run2, "--with-previous", "--sdd-dir", p.sddDir]);
    expect(goneJs.code).toBe(0);
    expect(goneJs.json.runs.map((r: any) => r.run_id)).toEqual([run2]);
    expect(goneJs.json.missing_previous.run_id).toBe(run1);
  });

  test("an old replay list cache (version 2) is not trusted: continues is read from the journal", async () => {
    const { p, run1, run2 } = await stoppedAndResumed();
    const cachePath = join(p.sddDir, "runs", ".replay-list-cache.json");
    const first = await bernsteinJson(["replay", "list", "--sdd-dir", p.sddDir]);
    expect(first.code).toBe(0);
    // Rewrite the cache as the previous format would have it: no continues, version 2.
    const cache = JSON.parse(readFileSync(cachePath, "utf8"));
    expect(cache.version).toBe(3);
    for (const r of Object.values(cache.runs) as any[]) delete r.continues;
    cache.version = 2;
    rmSync(cachePath);
    await Bun.write(cachePath, JSON.stringify(cache));
    const listed = await bernsteinJson(["replay", "list", "--sdd-dir", p.sddDir]);
    expect(listed.json.find((r: any) => r.run_id === run2).continues).toBe(run1);
    expect(JSON.parse(readFileSync(cachePath, "utf8")).version).toBe(3);
  });
});
