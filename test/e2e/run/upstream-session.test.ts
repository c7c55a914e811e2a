/**
 * A session.json written by the Python orchestrator resumes here (spec
 * upstream-parity §8): its goal is always "" (unknown, never "changed"), and
 * there is no task store of ours: the work comes from the backlog (the plan
 * file) and the saved ids decide what is skipped. Through the binary.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { cleanupProjects, eventNames, journalEvents, makeProject, readLedger, runIds, runToEnd, storedTasks, type Project } from "./fixture.ts";

afterAll(cleanupProjects);

/** session.json exactly as Python's SessionState writes it: json.dumps(asdict(state), indent=2), goal "", no open_task_ids. */
function pythonSession(p: Project, completed: string[], pending: string[]): void {
  mkdirSync(join(p.sddDir, "runtime"), { recursive: true });
  const script = [
    "import json, sys, time",
    "job = json.load(sys.stdin)",
    "state = {'saved_at': time.time(), 'goal': '', 'completed_task_ids': job['completed'], 'pending_task_ids': job['pending'], 'cost_spent': 0.25}",
    "open(job['path'], 'w').write(json.dumps(state, indent=2))",
    "print('null')",
  ].join("\n");
  runPython(script, { path: join(p.sddDir, "runtime", "session.json"), completed, pending });
}

const PLAN = [{ id: "T1" }, { id: "T2", depends_on: ["T1"] }, { id: "T3", depends_on: ["T1"] }, { id: "T4" }];

describe("resuming a session written by Python", () => {
  test("goal '' is compatible with any goal; no tasks.db: plan tasks minus the saved completed ids run, a dependency on a done task counts as met", async () => {
    const p = makeProject({ tasks: PLAN });
    pythonSession(p, ["T1", "T4"], ["T2"]);
    expect(existsSync(join(p.sddDir, "runtime", "tasks.db"))).toBe(false);
    const r = await runToEnd(p, ["--goal", "whatever the new run is about", "--as-json"]);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("goal changed");
    expect(r.stderr).toContain("resume: 2 task(s) from plan.yaml, 2 skipped as done previously");
    expect(readLedger(p).filter((l) => l.kind === "start").map((l) => l.task).sort()).toEqual(["T2", "T3"]);
    const rows = journalEvents(p, runIds(p)[0]!);
    const resume = rows.find((x) => x.get("event") === "session_resume")!;
    expect([resume.get("decision"), resume.get("reason")]).toEqual(["resume", "unfinished_work"]);
    const plan = rows.find((x) => x.get("event") === "plan_loaded")!;
    expect(plan.get("source")).toBe("plan_file_resume");
    expect(plan.get("skipped_task_ids")).toEqual(["T1", "T4"]);
    expect(eventNames(rows)).not.toContain("plan_requested");
    expect(storedTasks(p).map((t) => [t.id, t.status])).toEqual([["T2", "done"], ["T3", "done"]]);
    // The saved spend carries over, as Python's cost_spent does.
    expect(JSON.parse(r.stdout).resume.decision).toBe("resume");
  }, 60_000);

  test("a non-empty saved goal that differs still starts fresh (ours records the goal)", async () => {
    const p = makeProject({ tasks: PLAN });
    pythonSession(p, ["T1"], ["T2"]);
    const text = readFileSync(join(p.sddDir, "runtime", "session.json"), "utf8").replace('"goal": ""', '"goal": "old goal"');
    await Bun.write(join(p.sddDir, "runtime", "session.json"), text);
    const r = await runToEnd(p, ["--goal", "new goal"]);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toContain("fresh because the goal changed");
    expect(readLedger(p).filter((l) => l.kind === "start")).toHaveLength(4);
  }, 60_000);

  test("goal mode without a plan file: skip re-planning, post no manager task (upstream's behaviour: nothing to do)", async () => {
    const p = makeProject({ tasks: PLAN });
    pythonSession(p, ["T1"], ["T2"]);
    const proc = Bun.spawn([binPath(), "run", "--goal", "build it", "--port", "0", "--as-json"], { cwd: p.dir, env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(err).toContain("Resuming from previous session (1 task(s) already completed — skipping re-planning)");
    expect(readLedger(p).filter((l) => l.kind === "start")).toHaveLength(0);
    const names = eventNames(journalEvents(p, runIds(p)[0]!));
    expect(names).not.toContain("plan_requested");
    expect(names).not.toContain("plan_loaded");
    expect(JSON.parse(out).resume.decision).toBe("resume");
    expect(code).toBe(0);
  }, 60_000);
});
