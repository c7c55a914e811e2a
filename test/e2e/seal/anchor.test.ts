/**
 * `bernstein seal publish|verify` (spec §6.2) against a local time-stamping
 * authority whose tokens come from `openssl ts -reply` (test/helpers/fake-tsa.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { available } from "../../helpers/require-service.ts";
import { hasOpenssl, startFakeTsa, type FakeTsa } from "../../helpers/fake-tsa.ts";

const ROWS = [{ event: "run_started" }, { event: "task_completed", task_id: "T-1" }, { event: "run_completed" }];

describe.skipIf(!available("openssl", hasOpenssl(), "the openssl CLI is not installed"))("seal publish / verify", () => {
  let tsa: FakeTsa;
  let cwd = "";
  let head = "";
  const anchorPath = () => join(cwd, ".sdd", "runs", "r1", "seal_anchor.json");

  beforeAll(async () => {
    tsa = startFakeTsa();
    cwd = mkdtempSync(join(tmpdir(), "seal-anchor-"));
    const rec = await bernstein(["journal", "record", "r1"], { cwd, stdin: ROWS.map((r) => JSON.stringify(r)).join("\n") + "\n" });
    expect(rec.code).toBe(0);
    const v = await bernsteinJson(["journal", "verify", join(cwd, ".sdd", "runs", "r1", "journal.jsonl")], { cwd });
    head = v.json.head;
    expect(head).toMatch(/^[0-9a-f]{64}$/);
  });
  afterAll(() => {
    tsa.stop();
    rmSync(cwd, { recursive: true, force: true });
  });

  test("publish asks the TSA and stores the record; verify with the roots says verified, without them unverifiable", async () => {
    tsa.mode = "ok";
    const p = await bernsteinJson(["seal", "publish", "r1", "--tsa-url", tsa.url], { cwd });
    expect([p.code, p.json.head_sha256, p.json.anchor_kind, p.json.rfc3161_tsa_url]).toEqual([0, head, "rfc3161", tsa.url]);
    expect(p.stderr).toContain("carries no seal");
    const text = readFileSync(anchorPath(), "utf8");
    expect(Object.keys(JSON.parse(text))).toEqual(["anchor_kind", "head_sha256", "rfc3161_token_b64", "rfc3161_tsa_url", "run_id", "schema_version"]);
    expect(text).toStartWith('{\n  "anchor_kind": "rfc3161",\n');
    expect(text).toEndWith("}\n");

    const v = await bernsteinJson(["seal", "verify", "r1", "--rfc3161-trusted-tsa-bundle", tsa.caPem], { cwd });
    expect([v.code, v.json.status, v.json.tsa_subject, v.json.errors, v.json.head_sha256]).toEqual([0, "verified", "CN=Fake TSA", [], head]);
    expect(v.json.gen_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const prose = await bernstein(["seal", "verify", "r1", "--rfc3161-trusted-tsa-bundle", tsa.caPem], { cwd });
    expect(prose.stdout).toBe(`VERIFIED anchor for r1\nwitnessed at ${v.json.gen_time} by CN=Fake TSA\n`);

    const u = await bernsteinJson(["seal", "verify", "r1"], { cwd });
    expect([u.code, u.json.status, u.json.error, u.json.errors]).toEqual([1, "unverifiable", "anchor_unverifiable", ["no trusted TSA certificates supplied - the timestamp chain was not checked"]]);
  });

  test("verify: other roots, an edited token, and a journal that moved on", async () => {
    const other = startFakeTsa();
    try {
      const w = await bernsteinJson(["seal", "verify", "r1", "--rfc3161-trusted-tsa-bundle", other.caPem], { cwd });
      expect([w.code, w.json.status, w.json.error]).toEqual([1, "invalid", "anchor_invalid"]);
      expect(w.json.errors[0]).toContain("does not chain to a trusted TSA certificate");
    } finally {
      other.stop();
    }
    const saved = readFileSync(anchorPath(), "utf8");
    const rec = JSON.parse(saved);
    const der = Buffer.from(rec.rfc3161_token_b64, "base64");
    der[der.length - 5] ^= 1; // inside the signature
    writeFileSync(anchorPath(), JSON.stringify({ ...rec, rfc3161_token_b64: der.toString("base64") }, null, 2) + "\n");
    const t = await bernsteinJson(["seal", "verify", "r1", "--rfc3161-trusted-tsa-bundle", tsa.caPem], { cwd });
    expect([t.code, t.json.status]).toEqual([1, "invalid"]);
    expect(t.json.errors).toContain("rfc3161 chain: the CMS signature does not verify with the signer's certificate");
    writeFileSync(anchorPath(), saved);

    // The same token bytes in a non-canonical text (issue 29): stray bits in the last character, or a
    // '=' after a full group. A lenient decoder reads the same token; only the canonical text is accepted.
    const b64 = rec.rfc3161_token_b64 as string;
    const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const body = b64.replace(/=+$/, "");
    const malleated = b64.endsWith("=") ? body.slice(0, -1) + A[A.indexOf(body.at(-1)!) | 1] + b64.slice(body.length) : b64 + "=";
    expect(Buffer.from(malleated, "base64").equals(Buffer.from(b64, "base64"))).toBe(true);
    for (const text of [malleated, b64 + "\n", b64.replace(/=+$/, "")]) {
      if (text === b64) continue;
      writeFileSync(anchorPath(), JSON.stringify({ ...rec, rfc3161_token_b64: text }, null, 2) + "\n");
      const n = await bernsteinJson(["seal", "verify", "r1", "--rfc3161-trusted-tsa-bundle", tsa.caPem], { cwd });
      expect([JSON.stringify(text.slice(-4)), n.code, n.json.status, n.json.error, n.json.errors]).toEqual([JSON.stringify(text.slice(-4)), 1, "invalid", "anchor_invalid", ["rfc3161 chain: the token is not Base64"]]);
    }
    writeFileSync(anchorPath(), saved);

    const moved = mkdtempSync(join(tmpdir(), "seal-moved-"));
    try {
      cpSync(join(cwd, ".sdd"), join(moved, ".sdd"), { recursive: true });
      expect((await bernstein(["journal", "record", "r1", "late_event"], { cwd: moved })).code).toBe(0);
      const m = await bernsteinJson(["seal", "verify", "r1", "--rfc3161-trusted-tsa-bundle", tsa.caPem], { cwd: moved });
      expect([m.code, m.json.status, m.json.error]).toEqual([1, "mismatched", "anchor_mismatched"]);
      expect(m.json.errors[0]).toStartWith(`anchor witnesses head ${head}, artifacts recompute to `);
    } finally {
      rmSync(moved, { recursive: true, force: true });
    }
  });

  test("publish --token: offline, checked against the head", async () => {
    const good = join(cwd, "good.tsr");
    writeFileSync(good, tsa.stampImprint(head));
    const before = tsa.requests;
    const p = await bernsteinJson(["seal", "publish", "r1", "--token", good], { cwd });
    expect([p.code, p.json.rfc3161_tsa_url, tsa.requests]).toEqual([0, null, before]);
    const v = await bernsteinJson(["seal", "verify", "r1", "--rfc3161-trusted-tsa-bundle", tsa.caPem], { cwd });
    expect(v.json.status).toBe("verified");
    const other = join(cwd, "other.tsr");
    writeFileSync(other, tsa.stampImprint("ab".repeat(32)));
    const r = await bernsteinJson(["seal", "publish", "r1", "--token", other], { cwd });
    expect([r.code, r.json.error]).toEqual([2, "anchor_refused"]);
    expect(r.json.detail).toContain(`not the journal head ${head}`);
    const junk = join(cwd, "junk.tsr");
    writeFileSync(junk, "not DER");
    expect((await bernsteinJson(["seal", "publish", "r1", "--token", junk], { cwd })).json.error).toBe("anchor_malformed");
    const missing = await bernsteinJson(["seal", "publish", "r1", "--token", join(cwd, "absent.tsr")], { cwd });
    expect([missing.code, missing.json.detail]).toEqual([3, `--token file not found: ${join(cwd, "absent.tsr")}`]);
  });

  test("publish: a TSA that refuses, echoes another nonce or fails; bad arguments", async () => {
    for (const mode of ["reject", "wrong-nonce", "http-500"] as const) {
      tsa.mode = mode;
      const r = await bernsteinJson(["seal", "publish", "r1", "--tsa-url", tsa.url], { cwd });
      expect([mode, r.code, r.json.error]).toEqual([mode, 1, "tsa_failed"]);
    }
    tsa.mode = "ok";
    expect((await bernsteinJson(["seal", "publish", "r1"], { cwd })).json.error).toBe("nothing_to_do");
    const ftp = await bernsteinJson(["seal", "publish", "r1", "--tsa-url", "ftp://x/"], { cwd });
    expect([ftp.code, ftp.json.error]).toEqual([2, "usage"]);
    const none = await bernsteinJson(["seal", "publish", "nope", "--tsa-url", tsa.url], { cwd });
    expect([none.code, none.json.error]).toEqual([3, "run_not_found"]);
    const noAnchor = await bernsteinJson(["seal", "verify", "nope"], { cwd });
    expect([noAnchor.code, noAnchor.json.error]).toEqual([3, "anchor_not_found"]);
  });

  test("publish refuses a journal that does not verify, and one that disagrees with its seal", async () => {
    const dir = mkdtempSync(join(tmpdir(), "seal-refuse-"));
    try {
      cpSync(join(cwd, ".sdd"), join(dir, ".sdd"), { recursive: true });
      const jp = join(dir, ".sdd", "runs", "r1", "journal.jsonl");
      writeFileSync(join(dir, ".sdd", "runs", "r1", "seal.json"), JSON.stringify({ head: "cd".repeat(32), event_count: 3 }));
      const sealed = await bernsteinJson(["seal", "publish", "r1", "--tsa-url", tsa.url], { cwd: dir });
      expect([sealed.code, sealed.json.error]).toEqual([2, "anchor_refused"]);
      expect(sealed.json.detail).toBe(`Refusing to anchor r1: the journal recomputes to ${head} but the run sealed ${"cd".repeat(32)}.`);
      writeFileSync(jp, readFileSync(jp, "utf8").replace("T-1", "T-2"));
      const broken = await bernsteinJson(["seal", "publish", "r1", "--tsa-url", tsa.url], { cwd: dir });
      expect([broken.code, broken.json.error]).toEqual([2, "anchor_refused"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
