/**
 * `bernstein verify receipt` over upstream's golden vectors (spec §1.12,
 * §1.14), through the compiled binary: every run receipt and session
 * receipt gives the expected Python status and error, divergent step,
 * bernstein-mcp verdict, failing check and (top-level vectors) the whole
 * check list, the receipt digest and the binding digests.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { generateKeyPairSync, sign } from "node:crypto";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { EXPECT, materialiseReceipts, oracle, RECEIPT_VECTORS, UPSTREAM } from "../../helpers/upstream-receipts.ts";
import { runPython } from "../../helpers/python.ts";

let dir = "";
let paths: Record<string, string> = {};
let wrapperSha: Record<string, string> = {};
const EXIT = { ok: 0, tampered: 1, malformed: 3 } as const;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "verify-receipt-"));
  ({ paths, wrapperSha } = materialiseReceipts(dir));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("upstream vectors", () => {
  test("the copied wrappers are the upstream files", () => {
    for (const name of RECEIPT_VECTORS) expect([name, wrapperSha[name]]).toEqual([name, EXPECT[name].file_sha256]);
  });

  for (const name of RECEIPT_VECTORS) {
    test(name, async () => {
      const e = EXPECT[name];
      const status = e.python_status ?? e.python_status_by_spec;
      const errors = e.python_errors ?? e.python_errors_by_spec;
      const r = await bernsteinJson(["verify", "receipt", paths[name]!]);
      expect(r.code).toBe(EXIT[status as keyof typeof EXIT]);
      const j = r.json;
      expect({ status: j.status, errors: j.errors, step: j.divergent_step, verdict: j.verdict, failing: j.failing_check, sha: j.receipt_sha256 }).toEqual({
        status,
        errors,
        step: e.divergent_step,
        verdict: e.mcp_verdict,
        failing: e.mcp_failing_check,
        sha: e.receipt_sha256,
      });
      expect(j.ok).toBe(status === "ok");
      if (status !== "ok") expect([j.error, j.detail]).toEqual([status === "tampered" ? "run_receipt_tampered" : "run_receipt_malformed", errors[0]]);
      if (e.failed_checks) expect(j.checks.filter((c: any) => c.outcome === "fail").map((c: any) => c.name)).toEqual(e.failed_checks);
      if (e.binding_bytes_sha256_recomputed) {
        expect([j.binding.sha256, j.binding.pae_sha256, j.receipt_canonical_sha256]).toEqual([e.binding_bytes_sha256_recomputed, e.pae_sha256, e.receipt_canonical_sha256]);
      }
      if (e.summary) expect(j.summary).toEqual(e.summary);
      if (name !== "valid-10000.json" && !name.startsWith("session/")) {
        const wrapper = JSON.parse(readFileSync(join(UPSTREAM, name), "utf8"));
        expect(j.checks).toEqual(wrapper.expected.checks);
        expect(j.binding.bytes_b64).toBe(wrapper.canonical.binding_bytes_b64);
      }
    });
  }
});

describe("--vector: the wrapper files themselves", () => {
  test("each vector file gives its expected verdict and digest", async () => {
    for (const name of RECEIPT_VECTORS) {
      const file = name === "valid-10000.json" ? join(dir, "wrapper-valid-10000.json") : join(UPSTREAM, name);
      const e = EXPECT[name];
      const r = await bernsteinJson(["verify", "receipt", "--vector", file]);
      expect([name, r.json.status, r.json.verdict, r.json.failing_check, r.json.divergent_step, r.json.receipt_sha256]).toEqual([
        name,
        e.python_status ?? e.python_status_by_spec,
        e.mcp_verdict,
        e.mcp_failing_check,
        e.divergent_step,
        e.receipt_sha256,
      ]);
    }
  }, 60_000);

  test("a file that is not a vector is refused", async () => {
    const r = await bernsteinJson(["verify", "receipt", "--vector", join(UPSTREAM, "public_key.pem")]);
    expect([r.code, r.json.error]).toEqual([3, "run_receipt_malformed"]);
  });
});

describe("prose and pins", () => {
  test("prose is upstream's, with the first divergent step", async () => {
    const r = await bernstein(["verify", "receipt", paths["invalid-reordered.json"]!]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      "\nRun receipt run=golden-100 journal_events=100 spine_entries=10\nTAMPER DETECTED:\n  - journal diverges at step 20: step 20: prev_hash break\n  first divergent journal step: 20\n",
    );
    const ok = await bernstein(["verify", "receipt", paths["valid-short-with-audit-range.json"]!]);
    expect([ok.code, ok.stdout]).toEqual([0, "\nRun receipt run=golden-short journal_events=3 spine_entries=2\nOK -- every head recomputes from the embedded ranges; signature valid.\n"]);
    expect(ok.stderr).toContain("trust on first use");
  });

  test("--public-key: the right key pins, another is tampered, a non-PEM is malformed", async () => {
    const good = await bernsteinJson(["verify", "receipt", paths["valid-100-stress-canonicalization.json"]!, "--public-key", join(UPSTREAM, "public_key.pem")]);
    expect([good.code, good.json.key_trust, good.json.checks.at(-1).detail]).toEqual([0, "pinned", "Ed25519 over DSSE PAE(binding) with the pinned public key"]);
    const g = await bernsteinJson(["keys", "generate", "--out-dir", dir, "--name", "other"]);
    expect(g.code).toBe(0);
    const other = await bernsteinJson(["verify", "receipt", paths["valid-100-stress-canonicalization.json"]!, "--public-key", join(dir, "other.pub")]);
    expect([other.code, other.json.status, other.json.errors]).toEqual([1, "tampered", ["embedded receipt key does not match the pinned public key"]]);
    writeFileSync(join(dir, "junk.pem"), "not a key\n");
    const junk = await bernsteinJson(["verify", "receipt", paths["valid-100-stress-canonicalization.json"]!, "--public-key", join(dir, "junk.pem")]);
    expect([junk.code, junk.json.status]).toEqual([3, "malformed"]);
    expect(junk.json.errors[0]).toStartWith("pinned public key is not valid PEM: ");
    const missing = await bernsteinJson(["verify", "receipt", paths["valid-100-stress-canonicalization.json"]!, "--public-key", join(dir, "nope.pem")]);
    expect([missing.code, missing.json.error]).toEqual([3, "public_key_unreadable"]);
  });
});

describe("malformed input", () => {
  const cases: [string, string, string][] = [
    ["not JSON", '{"a": 1,}', "receipt is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 9 (char 8)"],
    ["not UTF-8", '{"a": "\xff"}', "receipt is not valid JSON: 'utf-8' codec can't decode byte 0xff in position 7: invalid start byte"],
    ["an array", "[1, 2]", "receipt is not a JSON object"],
    ["no run id", '{"receipt_type": "x"}', "receipt.run_id missing"],
    ["wrong type", '{"run_id": "r", "receipt_type": "x"}', "unexpected receipt_type 'x'"],
    ["unknown schema", '{"run_id": "r", "receipt_type": "https://bernstein.run/attestations/run-receipt/v1", "schema_version": "2.0.0"}', 'unsupported schema_version "2.0.0"'],
    ["no journal", '{"run_id": "r", "receipt_type": "https://bernstein.run/attestations/run-receipt/v1", "schema_version": "1.0.0"}', "receipt.journal.events missing or not a list"],
  ];
  for (const [what, text, message] of cases) {
    test(what, async () => {
      const p = join(dir, `bad-${what.replace(/ /g, "-")}.json`);
      writeFileSync(p, what === "not UTF-8" ? Buffer.from(text, "latin1") : text);
      const r = await bernsteinJson(["verify", "receipt", p]);
      expect([r.code, r.json.status, r.json.errors, r.json.verdict, r.json.error]).toEqual([3, "malformed", [message], "unverifiable", "run_receipt_malformed"]);
    });
  }

  test("a missing file is exit 3, receipt_not_found", async () => {
    const r = await bernsteinJson(["verify", "receipt", join(dir, "absent.json")]);
    expect([r.code, r.json.error]).toEqual([3, "receipt_not_found"]);
  });

  test("a receipt on standard input", async () => {
    const r = await bernsteinJson(["verify", "receipt", "-"], { stdin: readFileSync(paths["session/session-valid.json"]!) });
    expect([r.code, r.json.status, r.json.receipt_sha256]).toEqual([0, "ok", EXPECT["session/session-valid.json"].receipt_sha256]);
  });
});

describe("schema 1.0.0", () => {
  test("the audit range's own values are not bound under 1.0.0: relabelling valid-short breaks the binding", async () => {
    const text = readFileSync(paths["valid-short-with-audit-range.json"]!, "utf8").replace('"schema_version":"1.1.0"', '"schema_version":"1.0.0"');
    const p = join(dir, "short-as-1.0.0.json");
    writeFileSync(p, text);
    const r = await bernsteinJson(["verify", "receipt", p]);
    expect([r.code, r.json.status, r.json.failing_check]).toEqual([1, "tampered", "subject_binding"]);
    expect(Object.keys(r.json.binding.block)).not.toContain("audit_range_head_hmac");
    expect(Object.keys(r.json.binding.block)).toContain("audit_range_head_sha256");

    // Re-sign the rebuilt 1.0.0 binding: a genuine 1.0.0 receipt verifies, here and under the oracle.
    const bytes = Buffer.from(r.json.binding.bytes_b64, "base64");
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const pae = Buffer.concat([Buffer.from(`DSSEv1 42 application/vnd.bernstein.run-receipt+json ${bytes.length} `), bytes]);
    const x = (publicKey.export({ format: "jwk" }) as { x: string }).x;
    const signed = join(dir, "genuine-1.0.0.json");
    runPython(
      `import json,sys
j = json.load(sys.stdin)
r = json.load(open(j["src"]))
r["subject"]["digest"]["sha256"] = j["digest"]
r["signing"]["public_key_jwk"]["x"] = j["x"]
r["signing"]["signature_b64"] = j["sig"]
open(j["out"], "w").write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\\n")
print("[]")`,
      { src: p, out: signed, digest: Bun.SHA256.hash(bytes, "hex"), x, sig: sign(null, pae, privateKey).toString("base64") },
    );
    const ok = await bernsteinJson(["verify", "receipt", signed]);
    expect([ok.code, ok.json.status, ok.json.verdict, ok.json.summary.schema_version]).toEqual([0, "ok", "valid", "1.0.0"]);
    expect(oracle([signed])[0]!.status).toBe("ok");
  });
});
