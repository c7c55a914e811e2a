/**
 * A finished run sealed for both tools: with an audit key configured, the
 * run's end appends upstream's journal-head entry to its lineage spine
 * (upstream-parity §2.4), byte for byte what an independent Python
 * re-derivation of upstream's writer produces, and identity is `verified`
 * from the spine alone. Without a key nothing is created; `--no-seal`
 * writes neither seal; `journal seal RUN` seals by hand, idempotently.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { bernsteinJson } from "../../helpers/cli.ts";
import { upstreamWrite } from "../../helpers/upstream.ts";
import { cleanupProjects, makeProject, runToEnd, type Project } from "../run/fixture.ts";

afterAll(cleanupProjects);
const MASTER = "k".repeat(32);
const E2E_TIMEOUT = 120_000;

function keyed(p: Project): { env: Record<string, string>; keyPath: string } {
  const keyPath = join(p.dir, "keys", "audit.key");
  mkdirSync(join(p.dir, "keys"), { recursive: true, mode: 0o700 });
  writeFileSync(keyPath, MASTER + "\n");
  chmodSync(keyPath, 0o600);
  const state = join(p.dir, "state");
  mkdirSync(state, { recursive: true });
  return { env: { BERNSTEIN_AUDIT_KEY_PATH: keyPath, XDG_STATE_HOME: state }, keyPath };
}

/** No key anywhere: no BERNSTEIN_AUDIT_KEY_PATH, an empty state dir. */
function keyless(p: Project): Record<string, string> {
  const state = join(p.dir, "state");
  mkdirSync(state, { recursive: true });
  return { BERNSTEIN_AUDIT_KEY_PATH: "", XDG_STATE_HOME: state };
}

function onlyRun(p: Project): string {
  const runs = readdirSync(join(p.sddDir, "runs"));
  expect(runs.length).toBe(1);
  return runs[0]!;
}

describe("a finished run seals its lineage spine", () => {
  test(
    "with the audit key: one journal-head entry that an independent writer reproduces byte for byte; identity=verified from the spine alone",
    async () => {
      const p = makeProject({ tasks: [{ id: "T1" }, { id: "T2", depends_on: ["T1"] }] });
      const { env } = keyed(p);
      const r = await runToEnd(p, ["--as-json"], env);
      expect(r.code).toBe(0);
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({ ok: true, outcome: "completed", sealed: true });
      const run = onlyRun(p);
      const spineDir = join(p.sddDir, "lineage", run);
      const spine = readFileSync(join(spineDir, "spine.jsonl"), "utf8");
      const lines = spine.trimEnd().split("\n");
      expect(lines.length).toBe(1);
      const entry = JSON.parse(lines[0]!);
      expect(entry).toMatchObject({ v: 2, prev_hash: "", actor: "orchestrator", model: "", artifact_path: `.sdd/runs/${run}/journal.jsonl`, step_id: `replay-journal-head:${summary.head}` });

      // Upstream's writer, re-derived in Python from the spec, with the same inputs.
      const again = join(p.dir, "rederived");
      upstreamWrite([{ job: "spine", dir: again, master: MASTER, artifact_path: entry.artifact_path, content_path: join(p.sddDir, "runs", run, "journal.jsonl"), step_id: entry.step_id, timestamp: entry.timestamp }]);
      for (const f of ["spine.jsonl", "spine.head"]) expect(readFileSync(join(spineDir, f), "utf8")).toBe(readFileSync(join(again, f), "utf8"));

      // identity from the spine alone: seal.json moved aside
      renameSync(join(p.sddDir, "runs", run, "seal.json"), join(p.dir, "seal.json.aside"));
      const v = await bernsteinJson(["replay", run, "--verify"], { cwd: p.dir, env });
      expect([v.code, v.json.ok, v.json.identity]).toEqual([0, true, "verified"]);
      expect(v.json.spine).toMatchObject({ status: "seal_only", keyed: true, entries: 1, sealed_head: summary.head, identity: "verified", errors: [] });

      // sealing again by hand: idempotent (seal.json rewritten, no second spine entry)
      const again2 = await bernsteinJson(["journal", "seal", run], { cwd: p.dir, env });
      expect(again2.code).toBe(0);
      expect(again2.json.spine).toMatchObject({ appended: false, count: 1, entry_hash: entry.entry_hash });
      expect(readFileSync(join(spineDir, "spine.jsonl"), "utf8")).toBe(spine);
    },
    E2E_TIMEOUT,
  );

  test(
    "without a configured key nothing secret is created and no spine is written; a key path that is named but missing is created 0600",
    async () => {
      const p = makeProject({ tasks: [{ id: "T1" }] });
      const env = keyless(p);
      const r = await runToEnd(p, ["--as-json"], env);
      expect(r.code).toBe(0);
      const run = onlyRun(p);
      expect(existsSync(join(p.sddDir, "runs", run, "seal.json"))).toBe(true);
      expect(existsSync(join(p.sddDir, "lineage"))).toBe(false);
      expect(readdirSync(env.XDG_STATE_HOME!)).toEqual([]);
      const s = await bernsteinJson(["journal", "seal", run], { cwd: p.dir, env });
      expect(s.code).toBe(0);
      expect(s.json).toMatchObject({ already_sealed: true, spine: null, spine_skipped: "no_audit_key" });

      const named = join(p.dir, "new-keys", "audit.key");
      const s2 = await bernsteinJson(["journal", "seal", run], { cwd: p.dir, env: { ...env, BERNSTEIN_AUDIT_KEY_PATH: named } });
      expect(s2.code).toBe(0);
      expect(s2.json.spine).toMatchObject({ appended: true, count: 1 });
      expect(statSync(named).mode & 0o777).toBe(0o600);
      expect(statSync(join(p.dir, "new-keys")).mode & 0o777).toBe(0o700);
      expect(readFileSync(named, "utf8")).toMatch(/^[0-9a-f]{64}$/);
    },
    E2E_TIMEOUT,
  );

  test(
    "--no-seal writes neither seal; 'journal seal RUN' then writes both, and a key with loose permissions refuses before anything is written",
    async () => {
      const p = makeProject({ tasks: [{ id: "T1" }] });
      const { env, keyPath } = keyed(p);
      const r = await runToEnd(p, ["--as-json", "--no-seal"], env);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", sealed: false });
      const run = onlyRun(p);
      expect(existsSync(join(p.sddDir, "runs", run, "seal.json"))).toBe(false);
      expect(existsSync(join(p.sddDir, "lineage", run))).toBe(false);

      chmodSync(keyPath, 0o644);
      const refused = await bernsteinJson(["journal", "seal", run], { cwd: p.dir, env });
      expect([refused.code, refused.json.error]).toEqual([2, "audit_key_insecure"]);
      expect(existsSync(join(p.sddDir, "runs", run, "seal.json"))).toBe(false);
      chmodSync(keyPath, 0o600);

      const s = await bernsteinJson(["journal", "seal", run], { cwd: p.dir, env });
      expect(s.code).toBe(0);
      expect(s.json).toMatchObject({ already_sealed: false, spine: { appended: true, count: 1 } });
      const v = await bernsteinJson(["journal", "verify", run], { cwd: p.dir, env });
      expect([v.code, v.json.identity]).toEqual([0, "verified"]);
    },
    E2E_TIMEOUT,
  );
});
