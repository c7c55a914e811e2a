import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPython } from "../helpers/python.ts";
import { clearLatchedFlags, latchedFlagsPath, loadLatchedFlags, saveLatchedFlags } from "../../src/session/latched-flags.ts";
import { bridgeLineagePath, readBridgeLineage, recordBridgeEvent } from "../../src/session/bridge-lineage.ts";
import { notifyTask, readTaskNotifications, taskNotificationsPath } from "../../src/session/task-notifications.ts";
import { buildGateCheckpoint, isStaleCache, loadStartupGates, saveStartupGates, startupGatesPath } from "../../src/session/startup-gates.ts";
import { countYamlTickets, localIsoSeconds, stopFallbackPath, writeStopFallback } from "../../src/session/stop-fallback.ts";
import { PyNum } from "../../src/pyjson/index.ts";

const dir = mkdtempSync(join(tmpdir(), "bernstein-runtime-records-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshSdd = () => join(dir, `sdd${n++}`);

// Reference bytes from Python's json module, all in one process.
const PY = `import json, sys
jobs = json.load(sys.stdin)
out = {}
# latched flags: json.dumps(obj, default=str), no indent, default separators
out["latched"] = json.dumps({"latched_at": float(jobs["latched_at"]), "flags": jobs["flags"]}, default=str)
# jsonl rows: json.dumps(row) + "\\n"
b = dict(jobs["bridge"]); b["ts"] = float(b["ts"]); b["credential_expiry"] = float(b["credential_expiry"])
out["bridge"] = json.dumps(b) + "\\n"
t = dict(jobs["notif"]); t["ts"] = float(t["ts"])
out["notif"] = json.dumps(t) + "\\n"
gates = []
for g in jobs["gates"]:
    g = dict(g); g["captured_at"] = float(g["captured_at"]); g["cache_age_seconds"] = float(g["cache_age_seconds"]); gates.append(g)
out["gates"] = json.dumps(gates, indent=2)
out["fallback"] = json.dumps(jobs["fallback"], indent=2)
print(json.dumps(out))`;

const flags = { fast_mode: true, max_agents: 4, ratio: 0.5, label: "naïve €", nested: { a: [1, null, "x"] } };
const bridgeRow = {
  session_id: "S-1",
  event_type: "connect",
  reason: "credential_refresh",
  ts: 1747000000.25,
  remote_url: "https://example.invalid/bridge",
  credential_expiry: 1747003600,
  gap_seconds: null,
};
const notifRow = { task_id: "T-1", session_id: "S-1", status: "completed", summary: "did it ✓", result: "ok", usage: { tokens: 12, cost_usd: 0.01 }, ts: 1747000002 };
const gatesIn = [
  { captured_at: 1747000000, gate_name: "lint", status: "enabled", cached: false, cache_age_seconds: 0, provenance: "env", config_hash: "h1" },
  { captured_at: 1747000000, gate_name: "tests", status: "cached", cached: true, cache_age_seconds: 12.5, provenance: "seed", config_hash: "h2" },
];
const fallbackIn = { stopped_at: "2026-05-01T12:34:56", open_tasks: 2, claimed_tasks: 1 };
const py = runPython(PY, { latched_at: 1747000000, flags, bridge: bridgeRow, notif: notifRow, gates: gatesIn, fallback: fallbackIn }) as Record<string, string>;

describe("latched flags", () => {
  test("one line with Python's spaced separators, no newline, 0600", () => {
    const sdd = freshSdd();
    const path = saveLatchedFlags(sdd, flags, 1747000000);
    expect(path).toBe(latchedFlagsPath(sdd));
    expect(readFileSync(path, "utf8")).toBe(py.latched!);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("round trip keeps values (numbers keep their spelling)", () => {
    const sdd = freshSdd();
    saveLatchedFlags(sdd, flags, 1747000000);
    const r = loadLatchedFlags(sdd);
    expect(r.status).toBe("ok");
    expect(r.latchedAt).toBe(1747000000);
    expect(Object.keys(r.flags)).toEqual(Object.keys(flags));
    expect(r.flags.fast_mode).toBe(true);
    expect((r.flags.ratio as PyNum).raw).toBe("0.5");
    // re-saving the loaded flags reproduces the same bytes
    const sdd2 = freshSdd();
    saveLatchedFlags(sdd2, r.flags, 1747000000);
    expect(readFileSync(latchedFlagsPath(sdd2), "utf8")).toBe(py.latched!);
  });

  test("non-JSON values are stored as their string (Python default=str)", () => {
    const sdd = freshSdd();
    saveLatchedFlags(sdd, { when: new Date(0), big: 10n ** 20n }, 1);
    expect(readFileSync(latchedFlagsPath(sdd), "utf8")).toBe(
      `{"latched_at": 1.0, "flags": {"when": ${JSON.stringify(String(new Date(0)))}, "big": 100000000000000000000}}`,
    );
  });

  test("missing, invalid JSON, and non-object flags all load as {} (with a warning when damaged)", () => {
    const sdd = freshSdd();
    expect(loadLatchedFlags(sdd)).toEqual({ flags: {}, latchedAt: null, status: "missing" });
    mkdirSync(join(sdd, "runtime"), { recursive: true });
    writeFileSync(latchedFlagsPath(sdd), '{"latched_at": 1.0, "flags": {"a": tru');
    let r = loadLatchedFlags(sdd);
    expect(r.flags).toEqual({});
    expect(r.status).toBe("corrupt");
    expect(r.warning).toContain("not JSON");
    writeFileSync(latchedFlagsPath(sdd), '{"latched_at": 1.0, "flags": ["a"]}');
    r = loadLatchedFlags(sdd);
    expect(r.flags).toEqual({});
    expect(r.warning).toContain("'flags' is not an object");
    clearLatchedFlags(sdd);
    expect(existsSync(latchedFlagsPath(sdd))).toBe(false);
    clearLatchedFlags(sdd); // idempotent
  });
});

describe("bridge lineage", () => {
  test("row bytes equal Python json.dumps(row) + newline; read back", () => {
    const sdd = freshSdd();
    recordBridgeEvent(sdd, bridgeRow as never);
    expect(readFileSync(bridgeLineagePath(sdd), "utf8")).toBe(py.bridge!);
    expect(statSync(bridgeLineagePath(sdd)).mode & 0o777).toBe(0o600);
    const r = readBridgeLineage(sdd);
    expect(r.rows).toEqual([bridgeRow as never]);
    expect(r.warning).toBeUndefined();
  });

  test("defaults, unknown reason reads back as 'unknown', session filter, torn line skipped with a warning", () => {
    const sdd = freshSdd();
    const written = recordBridgeEvent(sdd, { session_id: "A", event_type: "disconnect", ts: 5 });
    expect(written).toEqual({ session_id: "A", event_type: "disconnect", reason: "unknown", ts: 5, remote_url: "", credential_expiry: null, gap_seconds: null });
    recordBridgeEvent(sdd, { session_id: "B", event_type: "rebuild", reason: "timeout", gap_seconds: 3, ts: 6 });
    appendFileSync(bridgeLineagePath(sdd), '{"session_id": "A", "event_type": "connect", "reason": "cosmic_rays", "ts": 7.0}\n{"session_id": "A", "ev');
    const all = readBridgeLineage(sdd);
    expect(all.rows.map((r) => [r.session_id, r.reason])).toEqual([["A", "unknown"], ["B", "timeout"], ["A", "unknown"]]);
    expect(all.skipped).toBe(1);
    expect(all.warning).toContain("skipped 1 malformed line");
    expect(readBridgeLineage(sdd, "B").rows).toHaveLength(1);
    expect(readBridgeLineage(freshSdd()).rows).toEqual([]);
  });

  test("rotates to <name>.1 when larger than the threshold (one backup, overwritten)", () => {
    const sdd = freshSdd();
    const path = bridgeLineagePath(sdd);
    const limit = 300;
    for (let i = 0; i < 3; i++) recordBridgeEvent(sdd, { session_id: `S${i}`, event_type: "connect", ts: i }, { rotateBytes: limit });
    expect(existsSync(`${path}.1`)).toBe(false);
    expect(statSync(path).size).toBeGreaterThan(limit);
    recordBridgeEvent(sdd, { session_id: "S3", event_type: "connect", ts: 3 }, { rotateBytes: limit });
    expect(readFileSync(`${path}.1`, "utf8").trim().split("\n")).toHaveLength(3);
    expect(readBridgeLineage(sdd).rows.map((r) => r.session_id)).toEqual(["S3"]);
    for (let i = 4; i < 8; i++) recordBridgeEvent(sdd, { session_id: `S${i}`, event_type: "connect", ts: i }, { rotateBytes: limit });
    // the second rotation replaced the backup
    expect(readFileSync(`${path}.1`, "utf8")).toContain('"S3"');
    expect(readFileSync(`${path}.1`, "utf8")).not.toContain('"S0"');
    expect(existsSync(`${path}.2`)).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe("task notifications", () => {
  test("row bytes equal Python's; unknown status reads back as failed; task filter", () => {
    const sdd = freshSdd();
    notifyTask(sdd, notifRow as never);
    expect(readFileSync(taskNotificationsPath(sdd), "utf8")).toBe(py.notif!);
    appendFileSync(taskNotificationsPath(sdd), '{"task_id": "T-2", "session_id": "S", "status": "exploded", "ts": 9.0}\n\nnot json\n');
    const r = readTaskNotifications(sdd);
    expect(r.rows).toHaveLength(2);
    expect(r.rows[0]).toEqual(notifRow as never);
    expect(r.rows[1]!.status).toBe("failed");
    expect(r.skipped).toBe(1);
    expect(readTaskNotifications(sdd, "T-2").rows.map((x) => x.task_id)).toEqual(["T-2"]);
  });

  test("rotation at a small injected threshold", () => {
    const sdd = freshSdd();
    for (let i = 0; i < 5; i++) notifyTask(sdd, { task_id: `T${i}`, session_id: "S", status: "killed", ts: i }, { rotateBytes: 200 });
    expect(existsSync(`${taskNotificationsPath(sdd)}.1`)).toBe(true);
    const live = readTaskNotifications(sdd).rows.map((x) => x.task_id);
    const backup = readFileSync(`${taskNotificationsPath(sdd)}.1`, "utf8").trim().split("\n").length;
    expect(live.length + backup).toBeLessThanOrEqual(5);
    expect(live.at(-1)).toBe("T4");
  });
});

describe("startup gate checkpoints", () => {
  test("array bytes equal Python json.dumps(indent=2); round trip", () => {
    const sdd = freshSdd();
    const path = saveStartupGates(sdd, gatesIn as never);
    expect(path).toBe(startupGatesPath(sdd));
    expect(readFileSync(path, "utf8")).toBe(py.gates!);
    const r = loadStartupGates(sdd);
    expect(r.status).toBe("ok");
    expect(r.gates).toEqual(gatesIn as never);
  });

  test("builder precedence env > seed > default; cached overrides enabled; stale after an hour", () => {
    const base = { gateName: "g", now: 1, configHash: "h" };
    expect(buildGateCheckpoint({ ...base, defaultEnabled: true })).toMatchObject({ status: "enabled", provenance: "default" });
    expect(buildGateCheckpoint({ ...base, defaultEnabled: true, seedEnabled: false })).toMatchObject({ status: "disabled", provenance: "seed" });
    expect(buildGateCheckpoint({ ...base, defaultEnabled: false, seedEnabled: false, envValue: "yes" })).toMatchObject({ status: "enabled", provenance: "env" });
    expect(buildGateCheckpoint({ ...base, defaultEnabled: true, seedEnabled: true, envValue: "0" })).toMatchObject({ status: "disabled", provenance: "env" });
    expect(buildGateCheckpoint({ ...base, defaultEnabled: true, seedEnabled: false, envValue: "maybe" })).toMatchObject({ status: "disabled", provenance: "seed" });
    const cached = buildGateCheckpoint({ ...base, defaultEnabled: true, cached: true, cacheAgeSeconds: 3600 });
    expect(cached).toMatchObject({ status: "cached", cached: true, cache_age_seconds: 3600 });
    expect(isStaleCache(cached)).toBe(false);
    expect(isStaleCache({ ...cached, cache_age_seconds: 3600.5 })).toBe(true);
    expect(buildGateCheckpoint({ ...base, defaultEnabled: false, cached: true })).toMatchObject({ status: "disabled", cached: false });
  });

  test("unknown enum values read back as defaults; corrupt/missing/non-array load as [] with a warning", () => {
    const sdd = freshSdd();
    expect(loadStartupGates(sdd)).toEqual({ gates: [], status: "missing" });
    mkdirSync(join(sdd, "runtime"), { recursive: true });
    writeFileSync(startupGatesPath(sdd), '[{"gate_name": "a", "status": "weird", "provenance": "cosmic"}, {"no_name": 1}]');
    const r = loadStartupGates(sdd);
    expect(r.gates).toEqual([{ captured_at: 0, gate_name: "a", status: "enabled", cached: false, cache_age_seconds: 0, provenance: "default", config_hash: "" }]);
    expect(r.warning).toContain("item 1");
    writeFileSync(startupGatesPath(sdd), '{"gate_name": "a"}');
    expect(loadStartupGates(sdd)).toMatchObject({ gates: [], status: "corrupt" });
    writeFileSync(startupGatesPath(sdd), "[");
    expect(loadStartupGates(sdd)).toMatchObject({ gates: [], status: "corrupt" });
  });
});

describe("stop fallback (session_state.json)", () => {
  test("counts *.yaml tickets in backlog/open and backlog/claimed; bytes equal Python's", () => {
    const sdd = freshSdd();
    mkdirSync(join(sdd, "backlog", "open"), { recursive: true });
    mkdirSync(join(sdd, "backlog", "claimed"), { recursive: true });
    for (const f of ["1-a.yaml", "2-b.yaml", "3-c.md"]) writeFileSync(join(sdd, "backlog", "open", f), "x");
    writeFileSync(join(sdd, "backlog", "claimed", "4-d.yaml"), "x");
    const when = new Date(2026, 4, 1, 12, 34, 56);
    const { path, state } = writeStopFallback(sdd, when);
    expect(path).toBe(stopFallbackPath(sdd));
    expect(state).toEqual(fallbackIn);
    expect(readFileSync(path, "utf8")).toBe(py.fallback!);
  });

  test("zero counts when the backlog dirs are missing", () => {
    const sdd = freshSdd();
    expect(writeStopFallback(sdd).state).toMatchObject({ open_tasks: 0, claimed_tasks: 0 });
    expect(countYamlTickets(join(sdd, "nowhere"))).toBe(0);
  });

  test("local time has Python's %Y-%m-%dT%H:%M:%S shape", () => {
    expect(localIsoSeconds(new Date(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02T03:04:05");
  });
});
