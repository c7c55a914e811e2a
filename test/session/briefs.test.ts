import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPython } from "../helpers/python.ts";
import { checkpointPath, loadCheckpoint, saveCheckpoint, type Checkpoint } from "../../src/session/checkpoint.ts";
import { loadWrapUp, saveWrapUp, wrapUpPath, type WrapUpBrief } from "../../src/session/wrapup.ts";

const dir = mkdtempSync(join(tmpdir(), "bernstein-briefs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const brief: WrapUpBrief = {
  timestamp: 1747000000.5,
  session_id: "1747000000",
  changes_summary: "- Fix login: done ✓\n- Add \"quotes\"",
  learnings: ["Task 'x' failed: boom"],
  next_session_brief: "  [1] Ship it (backend)",
  git_diff_stat: " a.ts | 2 +-\n 1 file changed",
  completed_task_ids: ["T-1", "T-2"],
};
const cp: Checkpoint = {
  timestamp: 1747000001,
  goal: "Build the thing — fast",
  completed_task_ids: ["T-1"],
  in_flight_task_ids: ["T-3"],
  next_steps: ["Write docs"],
  cost_spent: 0,
  git_sha: "abc123",
};

// One Python process renders the reference bytes of both records.
const expected = runPython(
  `import json, sys
b, c = json.load(sys.stdin)
b["timestamp"] = float(b["timestamp"])
c["timestamp"] = float(c["timestamp"]); c["cost_spent"] = float(c["cost_spent"])
print(json.dumps([json.dumps(b, indent=2), json.dumps(c, indent=2)]))`,
  [brief, cp],
) as [string, string];

describe("wrap-up brief", () => {
  test("path is <sdd>/sessions/<int(ts)>-wrapup.json and bytes equal Python json.dumps(indent=2)", () => {
    const sdd = join(dir, "w1");
    const path = saveWrapUp(sdd, brief);
    expect(path).toBe(join(sdd, "sessions", "1747000000-wrapup.json"));
    expect(path).toBe(wrapUpPath(sdd, brief.timestamp));
    expect(readFileSync(path, "utf8")).toBe(expected[0]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("round trip", () => {
    const sdd = join(dir, "w2");
    const loaded = loadWrapUp(saveWrapUp(sdd, brief));
    expect(loaded.status).toBe("ok");
    expect(loaded.value).toEqual(brief);
  });

  test("missing fields take defaults; ids are coerced to strings", () => {
    const p = join(dir, "partial-wrapup.json");
    writeFileSync(p, '{"timestamp": 5, "completed_task_ids": [1, "b"]}');
    const loaded = loadWrapUp(p);
    expect(loaded.value).toEqual({
      timestamp: 5,
      session_id: "",
      changes_summary: "",
      learnings: [],
      next_session_brief: "",
      git_diff_stat: "",
      completed_task_ids: ["1", "b"],
    });
  });

  test("missing and corrupt files load as none with a warning", () => {
    expect(loadWrapUp(join(dir, "nope.json"))).toEqual({ value: null, status: "missing" });
    const bad = join(dir, "bad-wrapup.json");
    writeFileSync(bad, "{not json");
    const r = loadWrapUp(bad);
    expect(r.status).toBe("corrupt");
    expect(r.value).toBeNull();
    expect(r.warning).toContain("Expecting property name enclosed in double quotes");
    const wrong = join(dir, "wrong-wrapup.json");
    writeFileSync(wrong, '{"learnings": "not a list"}');
    expect(loadWrapUp(wrong).warning).toContain("learnings");
    writeFileSync(wrong, "[1, 2]");
    expect(loadWrapUp(wrong).status).toBe("corrupt");
  });
});

describe("checkpoint", () => {
  test("path, bytes (cost_spent 0.0, timestamp 1747000001.0) and mode", () => {
    const sdd = join(dir, "c1");
    const path = saveCheckpoint(sdd, cp);
    expect(path).toBe(join(sdd, "sessions", "1747000001-checkpoint.json"));
    expect(path).toBe(checkpointPath(sdd, cp.timestamp));
    const bytes = readFileSync(path, "utf8");
    expect(bytes).toBe(expected[1]);
    expect(bytes).toContain('"cost_spent": 0.0');
    expect(bytes).toContain("\\u2014"); // ensure_ascii
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("round trip and defaults", () => {
    const sdd = join(dir, "c2");
    expect(loadCheckpoint(saveCheckpoint(sdd, cp)).value).toEqual(cp);
    mkdirSync(join(sdd, "x"), { recursive: true });
    const p = join(sdd, "x", "1-checkpoint.json");
    writeFileSync(p, "{}");
    expect(loadCheckpoint(p).value).toEqual({
      timestamp: 0,
      goal: "",
      completed_task_ids: [],
      in_flight_task_ids: [],
      next_steps: [],
      cost_spent: 0,
      git_sha: "",
    });
  });
});
