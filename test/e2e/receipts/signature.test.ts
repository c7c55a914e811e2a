/**
 * The signature rule of `replay verify` (issue 15): a key given means a
 * signature required, over the exact manifest bytes stored in the archive.
 * Every case goes through the compiled binary.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { craftTar, listTar } from "../../receipts/tarcraft.ts";

const AJ = join(VECTORS, "agent-journal");
const HEAD = JSON.parse(readFileSync(join(AJ, "expect.json"), "utf8"))["agent-a"].head as string;

let cwd = "";
const dec = new TextDecoder();

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), "signature-e2e-"));
  cpSync(join(AJ, "sdd"), join(cwd, ".sdd"), { recursive: true });
  for (const d of [".sdd", ".sdd/runtime", ".sdd/runtime/journal"]) chmodSync(join(cwd, d), 0o755);
  for (const name of ["victim", "attacker"]) {
    const g = await bernsteinJson(["keys", "generate", "--out-dir", "keys", "--name", name], { cwd });
    expect(g.code).toBe(0);
  }
  const signed = await bernsteinJson(["replay", "export", "agent-a", "signed.tar", "--sign", "keys/victim.key"], { cwd });
  expect([signed.code, signed.json.signed]).toEqual([0, true]);
  const unsigned = await bernsteinJson(["replay", "export", "agent-a", "unsigned.tar"], { cwd });
  expect([unsigned.code, unsigned.json.signed]).toEqual([0, false]);
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** The signed receipt's members, by name. */
function signedMembers(): Record<string, Uint8Array> {
  return Object.fromEntries(listTar(readFileSync(join(cwd, "signed.tar"))).map((m) => [m.name, m.data]));
}

function writeReceipt(name: string, members: [string, Uint8Array | string][]): string {
  writeFileSync(join(cwd, name), craftTar(members.map(([n, data]) => ({ name: n, data }))));
  return name;
}

async function verifyWithKey(receipt: string, key = "keys/victim.pub") {
  return bernsteinJson(["replay", "verify", receipt, "--public-key", key], { cwd });
}

/** Every negative verdict: exit 1, ok false, the code, a one-line detail, the verdict facts kept. */
function expectNegative(r: { code: number; json: any }, error: string) {
  expect(r.code).toBe(1);
  expect(r.json.ok).toBe(false);
  expect(r.json.error).toBe(error);
  expect(typeof r.json.detail).toBe("string");
  expect(r.json.detail.length).toBeGreaterThan(0);
  expect(r.json.detail).not.toContain("\n");
  expect(r.json.signature_checked).toBe(true);
  // The chain itself is intact in every case here: the walked head is still reported.
  expect(r.json.head_hash).toBe(HEAD);
}

describe("replay verify --public-key: a key given means a signature required", () => {
  test("a good signed receipt passes, and only with the signer's key", async () => {
    const r = await verifyWithKey("signed.tar");
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      ok: true,
      head_hash: HEAD,
      steps: 60,
      errors: [],
      signed: true,
      signature: "valid",
      signature_checked: true,
      bytes_read: statSync(join(cwd, "signed.tar")).size,
    });
    const prose = await bernstein(["replay", "verify", "signed.tar", "--public-key", "keys/victim.pub"], { cwd });
    expect(prose.code).toBe(0);
    expect(prose.stdout).toContain("Signature: valid");
  });

  test("an unsigned receipt fails with signature_missing (the attacker's own export)", async () => {
    const r = await verifyWithKey("unsigned.tar");
    expectNegative(r, "signature_missing");
    expect(r.json).toMatchObject({ signed: false, signature: "absent" });
    expect(r.json.errors).toEqual([r.json.detail]);
    const prose = await bernstein(["replay", "verify", "unsigned.tar", "--public-key", "keys/victim.pub"], { cwd });
    expect(prose.code).toBe(1);
    expect(prose.stdout).toContain("Receipt failed verification");
    expect(prose.stdout).toContain("Signature: MISSING");
  });

  test("a signed receipt with manifest.sig removed fails with signature_missing", async () => {
    const m = signedMembers();
    const name = writeReceipt("stripped.tar", [
      ["manifest.json", m["manifest.json"]!],
      ["journal/000000.jsonl", m["journal/000000.jsonl"]!],
    ]);
    expectNegative(await verifyWithKey(name), "signature_missing");
  });

  test("a receipt signed by another key fails with signature_invalid", async () => {
    const r = await verifyWithKey("signed.tar", "keys/attacker.pub");
    expectNegative(r, "signature_invalid");
    expect(r.json).toMatchObject({ signed: true, signature: "invalid" });
  });

  test("one byte of the manifest changed after signing fails", async () => {
    const m = signedMembers();
    const bytes = new Uint8Array(m["manifest.json"]!);
    // A digit of created_at: still valid JSON, same head and steps, so only the signature can notice.
    const at = dec.decode(bytes).indexOf('"created_at":"') + '"created_at":"'.length;
    bytes[at] = bytes[at] === 0x31 ? 0x32 : 0x31;
    const name = writeReceipt("byte.tar", [
      ["manifest.json", bytes],
      ["manifest.sig", m["manifest.sig"]!],
      ["journal/000000.jsonl", m["journal/000000.jsonl"]!],
    ]);
    expectNegative(await verifyWithKey(name), "signature_invalid");
  });

  test("an extra field added to a signed manifest fails (the signature covers the stored bytes, not re-encoded fields)", async () => {
    const m = signedMembers();
    const text = dec.decode(m["manifest.json"]!);
    expect(text.startsWith('{"agent_id"')).toBe(true);
    const name = writeReceipt("extra.tar", [
      ["manifest.json", text.replace('{"agent_id"', '{"admin":true,"agent_id"')],
      ["manifest.sig", m["manifest.sig"]!],
      ["journal/000000.jsonl", m["journal/000000.jsonl"]!],
    ]);
    expectNegative(await verifyWithKey(name), "signature_invalid");
    // Whitespace the parser ignores changes the bytes too.
    const spaced = writeReceipt("spaced.tar", [
      ["manifest.json", text + " "],
      ["manifest.sig", m["manifest.sig"]!],
      ["journal/000000.jsonl", m["journal/000000.jsonl"]!],
    ]);
    expectNegative(await verifyWithKey(spaced), "signature_invalid");
  });

  test("a signature failure is reported before chain errors; every error is listed", async () => {
    const m = signedMembers();
    const journal = dec.decode(m["journal/000000.jsonl"]!).replace("Step 5:", "Step 6:");
    const name = writeReceipt("both.tar", [
      ["manifest.json", m["manifest.json"]!],
      ["journal/000000.jsonl", journal],
    ]);
    const r = await verifyWithKey(name);
    expect(r.code).toBe(1);
    expect(r.json.error).toBe("signature_missing");
    expect(r.json.errors.length).toBeGreaterThanOrEqual(2);
    expect(r.json.errors.some((e: string) => e.includes("step_hash mismatch"))).toBe(true);
    expect(r.json.detail).toContain("more error(s)");
  });

  test("a receipt signed the way the Python exporter signs (its json.dumps bytes, Ed25519 via cryptography) verifies", async () => {
    const m = signedMembers();
    const out = runPython(
      `
import base64, io, json, sys, tarfile
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
job = json.load(sys.stdin)
key = Ed25519PrivateKey.generate()
manifest = {"agent_id": "agent-a", "head_hash": job["head"], "steps": 60, "bernstein_version": "1.9.3",
            "created_at": "2026-05-20T12:00:00Z", "blob_digests": [], "format_version": 1,
            "unauthenticated_fields": ["ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"]}
body = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
sig = base64.b64encode(key.sign(body))
with tarfile.open(job["out"], "w") as tar:
    for name, data in (("manifest.json", body), ("manifest.sig", sig), ("journal/000000.jsonl", open(job["journal"], "rb").read())):
        info = tarfile.TarInfo(name); info.size = len(data); info.mode = 0o600
        tar.addfile(info, io.BytesIO(data))
pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
open(job["pub"], "wb").write(pub)
print(json.dumps({"ok": True}))`,
      { head: HEAD, out: join(cwd, "python.tar"), pub: join(cwd, "python.pub"), journal: writeJournal(m) },
    ) as { ok: boolean };
    expect(out.ok).toBe(true);
    const r = await verifyWithKey("python.tar", "python.pub");
    expect([r.code, r.json.ok, r.json.signature]).toEqual([0, true, "valid"]);
    expectNegative(await verifyWithKey("python.tar"), "signature_invalid");
  });
});

function writeJournal(m: Record<string, Uint8Array>): string {
  const p = join(cwd, "journal.jsonl");
  writeFileSync(p, m["journal/000000.jsonl"]!);
  return p;
}

describe("replay verify without --public-key: nothing is claimed about the origin", () => {
  test("signed and unsigned receipts pass with signature_checked false, and the prose says NOT checked", async () => {
    for (const [receipt, signature] of [["signed.tar", "unchecked"], ["unsigned.tar", "absent"]] as const) {
      const r = await bernsteinJson(["replay", "verify", receipt], { cwd });
      expect(r.code).toBe(0);
      expect(r.json).toMatchObject({ ok: true, signature, signature_checked: false });
      expect(r.json.error).toBeUndefined();
      const prose = await bernstein(["replay", "verify", receipt], { cwd });
      expect(prose.stdout).toContain("NOT checked (no --public-key given)");
    }
  });
});
