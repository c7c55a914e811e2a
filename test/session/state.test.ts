import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSession, saveSession, sessionFromTasks, sessionPath, sessionText, type SessionState } from "../../src/session/state.ts";
import { decideResume } from "../../src/session/resume.ts";
import { runPython } from "../helpers/python.ts";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "bern-session-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NOW = 1_747_000_000.123;

function state(over: Partial<SessionState> = {}): SessionState {
  return {
    saved_at: NOW,
    goal: "build it",
    completed_task_ids: ["T-done-1"],
    pending_task_ids: [],
    open_task_ids: [],
    cost_spent: 0,
    ...over,
  };
}

describe("session.json", () => {
  test("bytes equal Python json.dumps(obj, indent=2) and the Python loader reads them", () => {
    const cases: SessionState[] = [
      state(),
      state({ goal: "ünïcode 🚀 \"q\"", pending_task_ids: ["a", "b"], open_task_ids: ["c"], cost_spent: 1.5, saved_at: 1_747_000_000 }),
      state({ completed_task_ids: [], cost_spent: 0.1 + 0.2, saved_at: 1e16 }),
    ];
    const texts = cases.map(sessionText);
    const py = runPython(
      `
import json, sys
jobs = json.load(sys.stdin)
out = []
for j in jobs:
    obj = json.loads(j["text"])
    # the reference loader: saved_at required -> float, rest defaulted
    loaded = {"saved_at": float(obj["saved_at"]), "goal": obj.get("goal", ""), "completed": list(obj.get("completed_task_ids", [])), "pending": list(obj.get("pending_task_ids", [])), "cost": float(obj.get("cost_spent", 0.0))}
    out.append({"same": json.dumps(obj, indent=2) == j["text"], "loaded": loaded})
print(json.dumps(out))
`,
      texts.map((text) => ({ text })),
    ) as { same: boolean; loaded: any }[];
    py.forEach((r, i) => {
      expect(r.same).toBe(true);
      expect(r.loaded.goal).toBe(cases[i]!.goal);
      expect(r.loaded.pending).toEqual(cases[i]!.pending_task_ids);
    });
    expect(texts[0]).toBe(
      '{\n  "saved_at": 1747000000.123,\n  "goal": "build it",\n  "completed_task_ids": [\n    "T-done-1"\n  ],\n  "pending_task_ids": [],\n  "open_task_ids": [],\n  "cost_spent": 0.0\n}',
    );
    expect(texts[1]).toContain('"saved_at": 1747000000.0');
  });

  test("saveSession writes 0600 atomically; loadSession round-trips", () => {
    const dir = tempDir();
    const s = state({ open_task_ids: ["x"] });
    saveSession(dir, s);
    expect(statSync(sessionPath(dir)).mode & 0o777).toBe(0o600);
    expect(readFileSync(sessionPath(dir), "utf8")).toBe(sessionText(s));
    expect(loadSession(dir, { now: NOW + 10 })).toEqual({ state: s, status: "ok" });
  });

  test("missing, corrupt, missing saved_at, array, stale (strictly older)", () => {
    const dir = tempDir();
    expect(loadSession(dir).status).toBe("missing");
    mkdirSync(join(dir, "runtime"), { recursive: true });
    for (const bad of ["{", "[]", '{"goal": "x"}', '{"saved_at": "soon"}']) {
      writeFileSync(sessionPath(dir), bad);
      const r = loadSession(dir);
      expect(r.status).toBe("corrupt");
      expect(r.state).toBeNull();
      expect(r.warning).toBeTruthy();
    }
    // Python files have no open_task_ids: read as []
    writeFileSync(sessionPath(dir), JSON.stringify({ saved_at: NOW, goal: "", completed_task_ids: ["a"], pending_task_ids: [], cost_spent: 0.0 }));
    expect(loadSession(dir, { now: NOW }).state!.open_task_ids).toEqual([]);
    expect(loadSession(dir, { now: NOW + 30 * 60, staleAfterMinutes: 30 }).status).toBe("ok");
    const stale = loadSession(dir, { now: NOW + 30 * 60 + 0.001, staleAfterMinutes: 30 });
    expect(stale.status).toBe("stale");
    expect(stale.warning).toContain("older than 30 minute(s)");
  });

  test("sessionFromTasks maps done/claimed/in_progress/open and ignores the rest", () => {
    const s = sessionFromTasks(
      [
        { id: "a", status: "done" },
        { id: "b", status: "closed" },
        { id: "c", status: "claimed" },
        { id: "d", status: "in_progress" },
        { id: "e", status: "open" },
        { id: "f", status: "failed" },
      ],
      "g",
      0.5,
      NOW,
    );
    expect(s).toEqual({ saved_at: NOW, goal: "g", completed_task_ids: ["a"], pending_task_ids: ["c", "d"], open_task_ids: ["e"], cost_spent: 0.5 });
  });
});

describe("decideResume", () => {
  const base = { goal: "build it", fresh: false, resumeEnabled: true, staleAfterMinutes: 30, now: NOW + 60 };

  test("each decision and its one-line message", () => {
    const dir = tempDir();
    expect(decideResume({ ...base, sddDir: dir })).toMatchObject({ action: "fresh", reason: "no_session", message: "fresh: no saved session" });
    saveSession(dir, state({ open_task_ids: ["x"], pending_task_ids: ["y"] }));
    expect(decideResume({ ...base, sddDir: dir })).toMatchObject({ action: "resume", message: "resumed: 1 done previously, 1 pending, 1 open" });
    expect(decideResume({ ...base, sddDir: dir, fresh: true })).toMatchObject({ action: "fresh", message: "fresh because --fresh" });
    expect(decideResume({ ...base, sddDir: dir, resumeEnabled: false })).toMatchObject({ action: "fresh", message: "fresh because session.resume is false" });
    expect(decideResume({ ...base, sddDir: dir, goal: "other" })).toMatchObject({ action: "fresh", message: "fresh because the goal changed" });
    const stale = decideResume({ ...base, sddDir: dir, now: NOW + 31 * 60 });
    expect(stale.action).toBe("fresh");
    expect(stale.message).toStartWith("fresh because stale");
    saveSession(dir, state({ completed_task_ids: ["a", "b", "c"] }));
    expect(decideResume({ ...base, sddDir: dir })).toMatchObject({ action: "drained", message: "resumed: 3 done previously, nothing left to do" });
    writeFileSync(sessionPath(dir), "not json");
    expect(decideResume({ ...base, sddDir: dir })).toMatchObject({ action: "fresh", reason: "corrupt" });
  });
});
