/**
 * Journals and receipts in object storage, through the compiled binary,
 * against a real S3 endpoint that checks SigV4 signatures (OpenStack Swift
 * with s3api, started by test/helpers/swift-s3.ts; one server for the file).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeBigJournal } from "../../helpers/big-journal.ts";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { available } from "../../helpers/require-service.ts";
import { startSwiftS3, swiftInstalled, type SwiftS3 } from "../../helpers/swift-s3.ts";

const enabled = available("swift-s3", swiftInstalled(), "OpenStack Swift (swift-proxy, swift-object, swift-container, swift-account) and memcached are not installed");

let s3: SwiftS3;
let dir: string;
let journal: string;
let tampered: string;
/** Small ranges: a 4 MB journal is read in ~16 ranged GETs, several at once. */
const RANGES = { BERNSTEIN_S3_RANGE_BYTES: String(256 << 10) };

function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, S3_BUCKET: undefined, AWS_BUCKET: undefined, ...s3.env, ...RANGES, ...extra };
}

/** The verdict without the input's name (the same journal, local or remote). */
/** The verdict without what names the input (its path, and the run id taken from the path's directory). */
function verdict(doc: Record<string, unknown>): Record<string, unknown> {
  const { path: _path, run_id: _runId, ...rest } = doc;
  return rest;
}

describe.skipIf(!enabled)("object storage (Swift s3api, SigV4 checked)", () => {
  beforeAll(async () => {
    s3 = await startSwiftS3();
    await s3.createBucket("public", true);
    dir = mkdtempSync(join(tmpdir(), "s3-e2e-"));
    journal = join(dir, "journal.jsonl");
    writeBigJournal(journal, 6000, 400);
    // One payload byte changed in the middle: the same divergent_index from either place.
    const bytes = readFileSync(journal);
    const at = bytes.indexOf("nnnn", Math.floor(bytes.length * 0.6));
    bytes[at] = "m".charCodeAt(0);
    tampered = join(dir, "tampered.jsonl");
    writeFileSync(tampered, bytes);
    await s3.putObject(s3.bucket, "runs/r1/journal.jsonl", Bun.file(journal));
    await s3.putObject(s3.bucket, "runs/r1/tampered.jsonl", Bun.file(tampered));
    await s3.putObject("public", "journal.jsonl", Bun.file(journal));
  }, 120_000);

  afterAll(async () => {
    await s3?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("journal verify s3:// gives the local verdict, read by parallel ranged GETs", async () => {
    const local = await bernsteinJson(["journal", "verify", journal, "--threads", "1"]);
    const remote = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/runs/r1/journal.jsonl`], { env: env({ BERNSTEIN_VERIFY_STATS: "1" }) });
    expect(local.code).toBe(0);
    expect(remote.code).toBe(0);
    expect(remote.json.path).toBe(`s3://${s3.bucket}/runs/r1/journal.jsonl`);
    expect(verdict(remote.json)).toEqual(verdict(local.json));
    expect(remote.json.count).toBe(6000);
    const stats = /ranged GETs (\d+), at most (\d+) in flight/.exec(remote.stderr);
    expect(stats).not.toBeNull();
    expect(Number(stats![1])).toBeGreaterThan(8);
    expect(Number(stats![2])).toBeGreaterThanOrEqual(2);
  });

  test("a tampered copy: the same divergent_index from s3:// as from the file, and nothing written locally", async () => {
    const cwd = mkdtempSync(join(dir, "cwd-"));
    const local = await bernsteinJson(["journal", "verify", tampered]);
    const remote = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/runs/r1/tampered.jsonl`], { env: env(), cwd });
    expect(local.code).toBe(1);
    expect(remote.code).toBe(1);
    expect(remote.json.divergent_index).toBe(local.json.divergent_index);
    expect(remote.json.divergent_index).toBeGreaterThan(1000);
    expect(verdict(remote.json)).toEqual(verdict(local.json));
    expect(readdirSync(cwd)).toEqual([]);
  });

  describe("--threads 2: every thread's ranges read by parallel ranged GETs of one fetcher", () => {
    /** 256 KiB verify ranges: the 4 MB journal is split into ~16, claimed by two threads. */
    const SPLIT = { BERNSTEIN_FAST_VERIFY_MIN_RANGE: String(256 << 10), BERNSTEIN_VERIFY_STATS: "1" };

    test("the same verdict JSON as the local file verified with two threads", async () => {
      const local = await bernsteinJson(["journal", "verify", journal, "--threads", "2"], { env: SPLIT });
      const remote = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/runs/r1/journal.jsonl`, "--threads", "2"], { env: env(SPLIT) });
      expect([local.code, remote.code]).toEqual([0, 0]);
      expect(local.stderr).toContain("; threads 2");
      expect(verdict(remote.json)).toEqual(verdict(local.json));
      expect(remote.json.bytes_read).toBe(readFileSync(journal).length);
      const stats = /threads (\d+); ranged GETs (\d+), at most (\d+) in flight/.exec(remote.stderr);
      expect(stats).not.toBeNull();
      // Both threads read, through the process's one fetcher (its statistics count both): a GET per range at least, two at once.
      expect(Number(stats![1])).toBe(2);
      expect(Number(stats![2])).toBeGreaterThanOrEqual(12);
      expect(Number(stats![3])).toBeGreaterThanOrEqual(2);
    });

    test("a tampered copy: the same divergent_index as the local file", async () => {
      const local = await bernsteinJson(["journal", "verify", tampered, "--threads", "2"], { env: SPLIT, cwd: mkdtempSync(join(dir, "cwd-")) });
      const remote = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/runs/r1/tampered.jsonl`, "--threads", "2"], { env: env(SPLIT) });
      expect([local.code, remote.code]).toEqual([1, 1]);
      expect(remote.json.divergent_index).toBe(local.json.divergent_index);
      expect(remote.json.divergent_index).toBeGreaterThan(1000);
      expect(verdict(remote.json)).toEqual(verdict(local.json));
    });

    test("through Bun.s3 and fetch (BERNSTEIN_S3_CLIENT=bun: the https path) as well", async () => {
      const local = await bernsteinJson(["journal", "verify", journal, "--threads", "2"], { env: SPLIT });
      for (const target of [`s3://${s3.bucket}/runs/r1/journal.jsonl`, s3.publicUrl("public", "journal.jsonl")]) {
        const remote = await bernsteinJson(["journal", "verify", target, "--threads", "2"], { env: env({ ...SPLIT, BERNSTEIN_S3_CLIENT: "bun" }) });
        expect(remote.code).toBe(0);
        expect(verdict(remote.json)).toEqual(verdict(local.json));
      }
      const denied = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/runs/r1/journal.jsonl`], { env: env({ BERNSTEIN_S3_CLIENT: "bun", S3_SECRET_ACCESS_KEY: "wrong" }) });
      expect([denied.code, denied.json.error]).toEqual([3, "s3_access_denied"]);
    });

    test("a key that needs encoding in the signed path (space, plus, parentheses, non-ASCII)", async () => {
      const key = "runs/a b+c/jöurnal (1)*.jsonl";
      await s3.putObject(s3.bucket, key, Bun.file(journal));
      const remote = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/${key}`, "--threads", "2"], { env: env(SPLIT) });
      expect(remote.code).toBe(0);
      expect(remote.json.count).toBe(6000);
      const capped = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/${key}`, "--threads", "9"], { env: env() });
      expect([capped.code, capped.json.count]).toEqual([0, 6000]);
      expect(capped.stderr).toContain("--threads 9 capped at 4");
    });
  });

  test("a public URL (plain ranged GETs) gives the same verdict", async () => {
    const local = await bernsteinJson(["journal", "verify", journal]);
    const remote = await bernsteinJson(["journal", "verify", s3.publicUrl("public", "journal.jsonl")], { env: RANGES });
    expect(remote.code).toBe(0);
    expect(verdict(remote.json)).toEqual(verdict(local.json));
    const missing = await bernsteinJson(["journal", "verify", s3.publicUrl("public", "nope.jsonl")], { env: RANGES });
    expect([missing.code, missing.json.error]).toEqual([3, "s3_not_found"]);
  });

  test("an empty object reads as an empty file does (no empty range is ever asked for)", async () => {
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    await s3.putObject(s3.bucket, "empty.jsonl", "");
    const local = await bernsteinJson(["journal", "verify", empty, "--allow-empty"]);
    const remote = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/empty.jsonl`, "--allow-empty"], { env: env() });
    expect(remote.code).toBe(local.code);
    expect(verdict(remote.json)).toEqual(verdict(local.json));
    // Without --allow-empty both are refused alike (input_empty, exit 3): an empty object is no green.
    const refused = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/empty.jsonl`], { env: env() });
    expect([refused.code, refused.json.error]).toEqual([3, "input_empty"]);
  });

  test("the bucket is the URL's, even with S3_BUCKET / AWS_BUCKET set", async () => {
    const r = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/runs/r1/journal.jsonl`], { env: env({ S3_BUCKET: "elsewhere", AWS_BUCKET: "elsewhere" }) });
    expect(r.code).toBe(0);
    expect(r.json.count).toBe(6000);
  });

  test("typed errors: wrong secret, missing key or bucket, unreachable endpoint, malformed URL", async () => {
    const url = `s3://${s3.bucket}/runs/r1/journal.jsonl`;
    const denied = await bernsteinJson(["journal", "verify", url], { env: env({ S3_SECRET_ACCESS_KEY: "wrong" }) });
    expect([denied.code, denied.json.ok, denied.json.error]).toEqual([3, false, "s3_access_denied"]);
    expect(denied.json).toMatchObject({ endpoint: s3.endpoint, bucket: s3.bucket, key: "runs/r1/journal.jsonl" });
    expect(denied.stdout).not.toContain("wrong");

    const missing = await bernsteinJson(["journal", "verify", `s3://${s3.bucket}/runs/nope.jsonl`], { env: env() });
    expect([missing.code, missing.json.error, missing.json.key, missing.json.endpoint]).toEqual([3, "s3_not_found", "runs/nope.jsonl", s3.endpoint]);
    const noBucket = await bernsteinJson(["journal", "verify", "s3://no-such-bucket/j.jsonl"], { env: env() });
    expect([noBucket.code, noBucket.json.error]).toEqual([3, "s3_not_found"]);

    const unreachable = await bernsteinJson(["journal", "verify", url, "--s3-endpoint", "http://127.0.0.1:9"], { env: env() });
    expect([unreachable.code, unreachable.json.error, unreachable.json.endpoint]).toEqual([3, "s3_unreachable", "http://127.0.0.1:9"]);

    const prose = await bernstein(["journal", "verify", `s3://${s3.bucket}/runs/nope.jsonl`], { env: env() });
    expect(prose.code).toBe(3);
    expect(prose.stderr).toContain(`object not found: s3://${s3.bucket}/runs/nope.jsonl (endpoint ${s3.endpoint})`);
    expect(prose.stderr).not.toContain("    at ");

    const bad = await bernsteinJson(["journal", "verify", "s3://only-a-bucket"], { env: env() });
    expect([bad.code, bad.json.error]).toEqual([2, "storage_url_invalid"]);
    const badRegion = await bernsteinJson(["journal", "verify", url, "--s3-region", "us east"], { env: env() });
    expect([badRegion.code, badRegion.json.error]).toEqual([2, "storage_url_invalid"]);
  });

  test("journal seal --out s3:// puts a copy of seal.json, never replacing a different one", async () => {
    const sdd = join(dir, "seal-sdd");
    for (const run of ["s1", "s2"]) {
      await bernstein(["journal", "record", run, "--sdd-dir", sdd], { stdin: `{"event": "run_started"}\n{"event": "tick_start", "tick": ${run === "s1" ? 1 : 2}}\n` });
    }
    const url = `s3://${s3.bucket}/seals/s1.json`;
    const bad = await bernsteinJson(["journal", "seal", "s1", "--sdd-dir", sdd, "--out", "https://example.com/x"], { env: env() });
    expect([bad.code, bad.json.error]).toEqual([2, "storage_url_invalid"]);
    const first = await bernsteinJson(["journal", "seal", "s1", "--sdd-dir", sdd, "--out", url], { env: env() });
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ ok: true, out: url, uploaded: true, event_count: 2 });
    const again = await bernsteinJson(["journal", "seal", "s1", "--sdd-dir", sdd, "--out", url], { env: env() });
    expect(again.json).toMatchObject({ ok: true, already_sealed: true, uploaded: false });
    const other = await bernsteinJson(["journal", "seal", "s2", "--sdd-dir", sdd, "--out", url], { env: env() });
    expect([other.code, other.json.error]).toEqual([2, "output_exists"]);
    const client = new Bun.S3Client({ endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
    expect(await client.file("seals/s1.json").text()).toBe(readFileSync(join(sdd, "runs", "s1", "seal.json"), "utf8"));
  });

  describe("receipts", () => {
    let cwd: string;
    beforeAll(() => {
      cwd = mkdtempSync(join(dir, "receipts-"));
      cpSync(join(VECTORS, "agent-journal", "sdd"), join(cwd, ".sdd"), { recursive: true });
      for (const d of [".sdd", ".sdd/runtime", ".sdd/runtime/journal"]) chmodSync(join(cwd, d), 0o755);
    });

    test("export to s3:// then replay verify s3:// passes; no overwrite without --force", async () => {
      const url = `s3://${s3.bucket}/receipts/agent-a.tar`;
      const exp = await bernsteinJson(["replay", "export", "agent-a", url], { cwd, env: env() });
      expect(exp.code).toBe(0);
      expect(exp.json).toMatchObject({ ok: true, output: url, steps: 60 });
      const v = await bernsteinJson(["replay", "verify", url], { cwd, env: env() });
      expect(v.code).toBe(0);
      expect(v.json).toMatchObject({ ok: true, head_hash: exp.json.head_hash, steps: 60 });
      const again = await bernsteinJson(["replay", "export", "agent-a", url], { cwd, env: env() });
      expect([again.code, again.json.error]).toEqual([2, "output_exists"]);
      const forced = await bernsteinJson(["replay", "export", "agent-a", url, "--force"], { cwd, env: env() });
      expect(forced.code).toBe(0);
      // Nothing of the upload stays on this machine.
      expect(existsSync(join(cwd, "s3:"))).toBe(false);
    });

    test("publish to s3://, diff-journal between storage and the local agent journal", async () => {
      const url = `s3://${s3.bucket}/receipts/agent-a.published.tar`;
      const pub = await bernsteinJson(["replay", "publish", "agent-a", url, "--yes-i-want-to-publish"], { cwd, env: env() });
      expect(pub.code).toBe(0);
      const v = await bernsteinJson(["replay", "verify", url], { cwd, env: env() });
      expect([v.code, v.json.head_hash]).toEqual([0, pub.json.head_hash]);
      const exported = `s3://${s3.bucket}/receipts/agent-a.tar`;
      await bernsteinJson(["replay", "export", "agent-a", exported, "--force"], { cwd, env: env() });
      const d = await bernsteinJson(["replay", "diff-journal", exported, "agent-a"], { cwd, env: env() });
      expect([d.code, d.json.ok]).toEqual([0, true]);
    });

    test("receipt errors are typed too; the storage flags are refused where they do not apply", async () => {
      const missing = await bernsteinJson(["replay", "verify", `s3://${s3.bucket}/receipts/none.tar`], { cwd, env: env() });
      expect([missing.code, missing.json.error]).toEqual([3, "s3_not_found"]);
      const denied = await bernsteinJson(["replay", "export", "agent-a", `s3://${s3.bucket}/receipts/x.tar`], { cwd, env: env({ S3_SECRET_ACCESS_KEY: "wrong" }) });
      expect([denied.code, denied.json.error]).toEqual([3, "s3_access_denied"]);
      const list = await bernsteinJson(["replay", "list", "--s3-region", "us-east-1"], { cwd, env: env() });
      expect([list.code, list.json.error]).toEqual([2, "flag_not_applicable"]);
    });
  });
});
