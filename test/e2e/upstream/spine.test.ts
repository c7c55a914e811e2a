/**
 * Lineage-spine seals (spec upstream-parity §2) as the identity source of
 * `replay <RUN> --verify` and `journal verify`, through the binary, on
 * spines written per the spec (test/reference/upstream_writers.py, checked
 * against the spec's worked example) and on the spine of upstream's golden
 * run receipt.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { UPSTREAM_VERDICTS, upstreamWrite } from "../../helpers/upstream.ts";
import { tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("spine21");
afterAll(() => dirs.cleanup());
const MASTER = "k".repeat(32);
const CHAIN4_HEAD = "beb8b92285cb2d3e5f1a4fc30b1024fb9848da6105bbada9fa19fb0933847f71";

interface Tree {
  cwd: string;
  sdd: string;
  keyPath: string;
  /** Environment with the audit key; `noKey` has none anywhere (an empty XDG state dir). */
  withKey: Record<string, string | undefined>;
  noKey: Record<string, string | undefined>;
  journal(run: string): string;
  spine(run: string): string;
}

function tree(): Tree {
  const cwd = dirs.make();
  const sdd = join(cwd, ".sdd");
  const keyPath = join(cwd, "audit.key");
  writeFileSync(keyPath, MASTER + "\n");
  chmodSync(keyPath, 0o600);
  const state = join(cwd, "state");
  mkdirSync(state);
  return {
    cwd,
    sdd,
    keyPath,
    withKey: { BERNSTEIN_AUDIT_KEY_PATH: keyPath, XDG_STATE_HOME: state },
    noKey: { BERNSTEIN_AUDIT_KEY_PATH: undefined, XDG_STATE_HOME: state },
    journal: (run) => join(sdd, "runs", run, "journal.jsonl"),
    spine: (run) => join(sdd, "lineage", run),
  };
}

/** Seal `run`'s journal into its spine as the orchestrator does at the end of a run (§2.4). */
function seal(t: Tree, run: string, head: string, timestamp = 1727000003000000000): void {
  upstreamWrite([
    { job: "spine", dir: t.spine(run), master: MASTER, artifact_path: `.sdd/runs/${run}/journal.jsonl`, content_path: t.journal(run), step_id: `replay-journal-head:${head}`, timestamp },
  ]);
}

function events(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({ event: i === 0 ? "run_started" : "task_completed", task_id: `T-${i}`, summary: "résumé ✓" }));
}

describe("the spec's worked example (§2.4)", () => {
  test("the Python writer reproduces the spec's spine line and head byte for byte", () => {
    const t = tree();
    mkdirSync(join(t.sdd, "runs", "run-1"), { recursive: true });
    copyFileSync(join(VECTORS, "run-journal", "chain-4.jsonl"), t.journal("run-1"));
    seal(t, "run-1", CHAIN4_HEAD);
    for (const f of ["spine.jsonl", "spine.head"]) {
      expect(readFileSync(join(t.spine("run-1"), f), "utf8")).toBe(readFileSync(join(UPSTREAM_VERDICTS, "spine-worked-example", f), "utf8"));
    }
  });

  test("with the audit key: identity=verified from the spine seal, in replay --verify and journal verify", async () => {
    const t = tree();
    mkdirSync(join(t.sdd, "runs", "run-1"), { recursive: true });
    copyFileSync(join(VECTORS, "run-journal", "chain-4.jsonl"), t.journal("run-1"));
    mkdirSync(t.spine("run-1"), { recursive: true });
    for (const f of ["spine.jsonl", "spine.head"]) copyFileSync(join(UPSTREAM_VERDICTS, "spine-worked-example", f), join(t.spine("run-1"), f));
    for (const argv of [["replay", "run-1", "--verify"], ["journal", "verify", "run-1"]]) {
      const r = await bernsteinJson(argv, { cwd: t.cwd, env: t.withKey });
      expect([argv.join(" "), r.code, r.json.ok, r.json.identity]).toEqual([argv.join(" "), 0, true, "verified"]);
      expect(r.json.spine).toMatchObject({ status: "seal_only", keyed: true, entries: 1, sealed_head: CHAIN4_HEAD, seal_line: 1, identity: "verified", content_hash_matches: true, errors: [] });
      expect(r.json.spine.checked).toContain("entry HMAC tags");
      expect(r.json.spine.checked).toContain("spine.head tag");
    }
    const prose = await bernstein(["replay", "run-1", "--verify"], { cwd: t.cwd, env: t.withKey });
    expect(prose.stdout).toContain("identity=verified");
    expect(prose.stdout).toContain(`tags checked with the audit key ${t.keyPath}`);
  });

  test("without the key: unverifiable, and the output says the tags were NOT checked", async () => {
    const t = tree();
    mkdirSync(join(t.sdd, "runs", "run-1"), { recursive: true });
    copyFileSync(join(VECTORS, "run-journal", "chain-4.jsonl"), t.journal("run-1"));
    seal(t, "run-1", CHAIN4_HEAD);
    const r = await bernsteinJson(["replay", "run-1", "--verify"], { cwd: t.cwd, env: t.noKey });
    expect([r.code, r.json.identity]).toEqual([0, "unverifiable"]);
    expect(r.json.spine).toMatchObject({ keyed: false, status: "seal_only", identity: "unverifiable", sealed_head: CHAIN4_HEAD });
    expect(r.json.spine.checked).toEqual(["prev_hash links", "entry hashes", "spine.head count and head", "sealed content_hash against the journal bytes"]);
    expect(r.json.spine.not_checked[0]).toStartWith("HMAC tags (no audit key at ");
    const prose = await bernstein(["replay", "run-1", "--verify"], { cwd: t.cwd, env: t.noKey });
    expect(prose.stdout).toContain("NOT checked: HMAC tags");
    expect(prose.stdout).toContain("identity stays unverifiable");
  });
});

describe("appended, truncated, tampered (upstream's test_replay_verify_cli cases)", () => {
  function sealedRun(t: Tree, rows: number): string {
    const [w] = upstreamWrite([{ job: "journal", path: t.journal("r"), events: events(rows) }]);
    seal(t, "r", w.head);
    return w.head;
  }

  test("appended after sealing: non-zero exit, 'mismatch' and not 'unverifiable'", async () => {
    const t = tree();
    sealedRun(t, 4);
    upstreamWrite([{ job: "journal", path: t.journal("r"), events: events(5) }]); // the same four rows plus one
    const r = await bernstein(["replay", "r", "--verify"], { cwd: t.cwd, env: t.withKey });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("mismatch");
    expect(r.stdout).not.toContain("unverifiable");
    const j = await bernsteinJson(["replay", "r", "--verify"], { cwd: t.cwd, env: t.withKey });
    expect([j.json.error, j.json.identity, j.json.spine.content_hash_matches]).toEqual(["seal_mismatch", "mismatched", false]);
    expect(j.json.errors[0]).toContain("does not match the head");
  });

  test("truncated after sealing: non-zero exit, mismatch (also without the key: a consistent spine naming another head)", async () => {
    const t = tree();
    sealedRun(t, 5);
    upstreamWrite([{ job: "journal", path: t.journal("r"), events: events(4) }]);
    for (const env of [t.withKey, t.noKey]) {
      const r = await bernstein(["replay", "r", "--verify"], { cwd: t.cwd, env });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("mismatch");
    }
  });

  test("a tampered spine is mismatched: a rewritten tag (with the key), a rewritten seal head (with or without it)", async () => {
    const t = tree();
    const head = sealedRun(t, 4);
    const spine = join(t.spine("r"), "spine.jsonl");
    const original = readFileSync(spine, "utf8");
    writeFileSync(spine, original.replace(/"hmac":"[0-9a-f]/, (m) => m.slice(0, -1) + (m.endsWith("0") ? "1" : "0")));
    const tag = await bernsteinJson(["replay", "r", "--verify"], { cwd: t.cwd, env: t.withKey });
    expect([tag.code, tag.json.identity, tag.json.spine.status]).toEqual([1, "mismatched", "tampered"]);
    expect(tag.json.spine.errors).toEqual(["line 1: hmac mismatch"]);
    // The same edit is invisible without the key: exactly what §2.8 says a keyless reader cannot check.
    expect((await bernsteinJson(["replay", "r", "--verify"], { cwd: t.cwd, env: t.noKey })).json.spine.status).toBe("seal_only");
    writeFileSync(spine, original.replace(head, "f".repeat(64)));
    for (const env of [t.withKey, t.noKey]) {
      const r = await bernsteinJson(["replay", "r", "--verify"], { cwd: t.cwd, env });
      expect([r.code, r.json.identity]).toEqual([1, "mismatched"]);
      expect(r.json.spine.errors).toContain("line 1: entry_hash mismatch");
    }
  });

  test("the wrong key: every tag fails; an insecure key is refused (exit 2), a named missing key is missing input (exit 3)", async () => {
    const t = tree();
    sealedRun(t, 3);
    writeFileSync(t.keyPath, "another-key");
    const wrong = await bernsteinJson(["replay", "r", "--verify"], { cwd: t.cwd, env: t.withKey });
    expect([wrong.code, wrong.json.spine.errors]).toEqual([1, ["line 1: hmac mismatch", "spine.head: hmac mismatch"]]);
    chmodSync(t.keyPath, 0o644);
    const loose = await bernsteinJson(["replay", "r", "--verify"], { cwd: t.cwd, env: t.withKey });
    expect([loose.code, loose.json.error]).toEqual([2, "audit_key_insecure"]);
    expect(loose.json.detail).toBe(`Audit key ${t.keyPath} has insecure permissions 0644; required 0600 (owner-only).`);
    const gone = await bernsteinJson(["journal", "verify", "r"], { cwd: t.cwd, env: { ...t.withKey, BERNSTEIN_AUDIT_KEY_PATH: join(t.cwd, "nope.key") } });
    expect([gone.code, gone.json.error]).toEqual([3, "audit_key_unreadable"]);
  });

  test("several seals (a resumed, re-finalised run): the last one decides", async () => {
    const t = tree();
    const first = sealedRun(t, 3);
    const [w] = upstreamWrite([{ job: "journal", path: t.journal("r"), events: events(6) }]);
    expect(w.head).not.toBe(first);
    seal(t, "r", w.head, 1727000009000000000);
    const r = await bernsteinJson(["replay", "r", "--verify"], { cwd: t.cwd, env: t.withKey });
    expect([r.code, r.json.identity, r.json.spine.seal_line, r.json.spine.entries]).toEqual([0, "verified", 2, 2]);
  });
});

describe("the spine of upstream's golden run receipt (valid-100-stress)", () => {
  function golden(): Tree {
    const t = tree();
    const src = join(UPSTREAM_VERDICTS, "golden-100");
    mkdirSync(join(t.sdd, "runs", "golden-100"), { recursive: true });
    mkdirSync(t.spine("golden-100"), { recursive: true });
    copyFileSync(join(src, "journal.jsonl"), t.journal("golden-100"));
    copyFileSync(join(src, "spine.jsonl"), join(t.spine("golden-100"), "spine.jsonl"));
    return t;
  }
  const want = JSON.parse(readFileSync(join(UPSTREAM_VERDICTS, "golden-100", "expect.json"), "utf8"));

  test("keyless: upstream's entry hashes (raw UTF-8 path) and head recompute; no journal-head seal, so unverifiable", async () => {
    const t = golden();
    const r = await bernsteinJson(["journal", "verify", "golden-100"], { cwd: t.cwd, env: t.noKey });
    expect([r.code, r.json.head, r.json.count]).toEqual([0, want.journal_head, want.journal_event_count]);
    expect(r.json.spine).toMatchObject({ status: "ok", keyed: false, entries: want.spine_entry_count, head_hash: want.spine_head, sealed_head: null, identity: "unverifiable", errors: [] });
    expect(r.json.spine.notes[0]).toContain("no replay-journal-head: seal entry");
  });

  test("a receipt's spine carries no tags: with the key it does not pass as an authenticated spine", async () => {
    const t = golden();
    const r = await bernsteinJson(["journal", "verify", "golden-100"], { cwd: t.cwd, env: t.withKey });
    expect(r.code).toBe(1);
    expect(r.json.spine.status).toBe("tampered");
    expect(r.json.spine.errors[0]).toBe("line 1: missing fields ['hmac']");
  });
});
