/**
 * Issue 29, strict encodings: a signature or key has exactly one accepted
 * text (canonical Base64 of the exact length), and a run receipt's `alg`,
 * `key_id` and `kid` must belong to the embedded key. Every case goes
 * through the compiled binary, over upstream's own receipts (named key and
 * bernstein-attest's derived ids) and over an exported agent receipt.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { oracle, UPSTREAM } from "../../helpers/upstream-receipts.ts";
import { runPython } from "../../helpers/python.ts";
import { craftTar, listTar } from "../../receipts/tarcraft.ts";

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strict-encodings-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** `text` with the unused low bits of its last data character set (the same bytes to a lenient decoder). */
function strayBits(text: string, alphabet: string): string {
  const body = text.replace(/=+$/, "");
  const pad = text.slice(body.length);
  const last = alphabet.indexOf(body.at(-1)!);
  const unused = body.length % 4 === 2 ? 4 : body.length % 4 === 3 ? 2 : 0;
  expect(unused).toBeGreaterThan(0);
  return body.slice(0, -1) + alphabet[last | ((1 << unused) - 1)]! + pad;
}

/** Every malleation of a valid padded standard-Base64 signature. */
function signatureMalleations(sig: string): Record<string, string> {
  return {
    "trailing newline": sig + "\n",
    "missing padding": sig.replace(/=+$/, ""),
    "non-zero unused bits": strayBits(sig, B64),
    "too long": sig.replace(/=+$/, "") + "AA==",
    "too short": sig.slice(4),
    "whitespace inside": sig.slice(0, 40) + " " + sig.slice(40),
    "newline inside": sig.slice(0, 64) + "\n" + sig.slice(64),
    // A signature without '+' or '/' (a fresh key's, now and then) is the same in both alphabets.
    ...(/[+/]/.test(sig) ? { "base64url alphabet": sig.replace(/\+/g, "-").replace(/\//g, "_") } : {}),
    "a foreign character": "-" + sig.slice(1),
  };
}

/**
 * Write the receipt of an upstream vector, then one file per edit: each
 * edit is [name, JSON path, new value] (null value: delete the member).
 * Python writes them (CJ + "\n", as upstream's json does).
 */
function writeVariants(vector: string, edits: [string, string[], unknown][]): Record<string, string> {
  const out: Record<string, string> = {};
  const jobs = [["original", [], undefined] as [string, string[], unknown], ...edits].map(([name, path, value], i) => {
    out[name] = join(dir, `${vector.replace(/\W/g, "_")}-${i}.json`);
    return { path, value, del: value === null, out: out[name] };
  });
  runPython(
    `import json,sys
j = json.load(sys.stdin)
d = json.load(open(j["src"], encoding="utf-8"))["input"]
base = json.loads(d["receipt_text"]) if "receipt_text" in d else d
for e in j["jobs"]:
    r = json.loads(json.dumps(base))
    if e["path"]:
        o = r
        for k in e["path"][:-1]: o = o[k]
        if e["del"]: del o[e["path"][-1]]
        else: o[e["path"][-1]] = e["value"]
    open(e["out"], "wb").write((json.dumps(r, sort_keys=True, separators=(",", ":")) + "\\n").encode())
print("[]")`,
    { src: join(UPSTREAM, vector), jobs },
  );
  return out;
}

function upstreamSigning(vector: string): any {
  const input = JSON.parse(readFileSync(join(UPSTREAM, vector), "utf8")).input;
  return (input.receipt_text ? JSON.parse(input.receipt_text) : input).signing;
}

async function expectRefused(file: string, what: string, error: string, exit: number) {
  const r = await bernsteinJson(["verify", "receipt", file]);
  expect([what, r.code, r.json.ok, r.json.error]).toEqual([what, exit, false, error]);
  expect(typeof r.json.detail).toBe("string");
  expect(r.json.detail).not.toContain("\n");
  expect(r.stderr).not.toContain("    at ");
}

describe("run receipts: one text per signature and key", () => {
  const VECTOR = "valid-short-with-audit-range.json";

  test("each malleation of signature_b64 is refused as signature_invalid; the untouched receipt verifies", async () => {
    const sig = upstreamSigning(VECTOR).signature_b64 as string;
    const m = signatureMalleations(sig);
    const files = writeVariants(VECTOR, Object.entries(m).map(([name, s]) => [name, ["signing", "signature_b64"], s]));
    const ok = await bernsteinJson(["verify", "receipt", files.original!]);
    expect([ok.code, ok.json.ok, ok.json.status, ok.json.verdict]).toEqual([0, true, "ok", "valid"]);
    // Python's lenient decoder accepts the stray bits: the malleation is real.
    expect(oracle([files["non-zero unused bits"]!])[0]!.status).toBe("ok");
    for (const name of Object.keys(m)) await expectRefused(files[name]!, name, "signature_invalid", 1);
    const prose = await bernsteinJson(["verify", "receipt", files["non-zero unused bits"]!]);
    expect(prose.json.detail).toContain("not canonical Base64 of a 64-byte Ed25519 signature");
    expect(prose.json.failing_check).toBe("signature");
  });

  test("a JWK x that is not canonical unpadded base64url of 32 bytes is a malformed key", async () => {
    const x = upstreamSigning(VECTOR).public_key_jwk.x as string;
    const m: Record<string, string> = {
      "non-zero unused bits": strayBits(x, URL64),
      padded: x + "=",
      "trailing newline": x + "\n",
      "standard alphabet": "+" + x.slice(1),
      "too long": x + "AA",
    };
    const files = writeVariants(VECTOR, Object.entries(m).map(([name, v]) => [name, ["signing", "public_key_jwk", "x"], v]));
    expect(oracle([files["non-zero unused bits"]!])[0]!.status).toBe("ok");
    for (const name of Object.keys(m)) await expectRefused(files[name]!, name, "run_receipt_malformed", 3);
  });

  test("signing.alg, signing.key_id, public_key_jwk.alg and public_key_jwk.kid must belong to the key", async () => {
    const edits: [string, string[], unknown][] = [
      ["signing.alg", ["signing", "alg"], "ES256"],
      ["signing.alg missing", ["signing", "alg"], null],
      ["signing.key_id", ["signing", "key_id"], "someone-else"],
      ["signing.key_id missing", ["signing", "key_id"], null],
      ["public_key_jwk.alg", ["signing", "public_key_jwk", "alg"], "none"],
      ["public_key_jwk.alg missing", ["signing", "public_key_jwk", "alg"], null],
      ["public_key_jwk.kid", ["signing", "public_key_jwk", "kid"], "someone-else"],
      ["public_key_jwk.kid missing", ["signing", "public_key_jwk", "kid"], null],
    ];
    const files = writeVariants(VECTOR, edits);
    // Each still verifies under Python's rules: these members are outside the signed binding.
    expect(oracle(edits.map(([name]) => files[name]!)).map((o) => o.status)).toEqual(edits.map(() => "ok"));
    for (const [name] of edits) await expectRefused(files[name]!, name, "signature_invalid", 1);
  });

  test("bernstein-attest's derived ids (kid = RFC 7638 thumbprint, key_id = name-<sha256(x)>) verify, and changing either is refused", async () => {
    const VECTOR = "session/session-valid.json";
    const s = upstreamSigning(VECTOR);
    expect(s.key_id).not.toBe(s.public_key_jwk.kid);
    const edits: [string, string[], unknown][] = [
      ["signing.key_id", ["signing", "key_id"], "bernstein-attest-00000000"],
      ["signing.key_id without its name", ["signing", "key_id"], s.key_id.slice(s.key_id.lastIndexOf("-") + 1)],
      ["public_key_jwk.kid", ["signing", "public_key_jwk", "kid"], "A" + s.public_key_jwk.kid.slice(1)],
      ["public_key_jwk.alg", ["signing", "public_key_jwk", "alg"], "Ed25519"],
    ];
    const files = writeVariants(VECTOR, edits);
    const ok = await bernsteinJson(["verify", "receipt", files.original!]);
    expect([ok.code, ok.json.status, ok.json.verdict]).toEqual([0, "ok", "valid"]);
    for (const [name] of edits) await expectRefused(files[name]!, name, "signature_invalid", 1);
  });
});

describe("agent receipts: manifest.sig is canonical Base64 of 64 bytes", () => {
  test("each malleation of a valid manifest.sig fails verification; the untouched receipt verifies", async () => {
    const cwd = join(dir, "agent");
    cpSync(join(VECTORS, "agent-journal", "sdd"), join(cwd, ".sdd"), { recursive: true });
    for (const d of [".sdd", ".sdd/runtime", ".sdd/runtime/journal"]) chmodSync(join(cwd, d), 0o755);
    expect((await bernsteinJson(["keys", "generate", "--out-dir", "keys", "--name", "k"], { cwd })).code).toBe(0);
    const exported = await bernsteinJson(["replay", "export", "agent-a", "signed.tar", "--sign", "keys/k.key"], { cwd });
    expect([exported.code, exported.json.signed]).toEqual([0, true]);
    const members = listTar(readFileSync(join(cwd, "signed.tar")));
    const sig = new TextDecoder().decode(members.find((m) => m.name === "manifest.sig")!.data);
    const good = await bernsteinJson(["replay", "verify", "signed.tar", "--public-key", "keys/k.pub"], { cwd });
    expect([good.code, good.json.signature]).toEqual([0, "valid"]);
    for (const [name, text] of Object.entries(signatureMalleations(sig))) {
      const file = `sig-${name.replace(/\W/g, "_")}.tar`;
      writeFileSync(join(cwd, file), craftTar(members.map((m) => ({ name: m.name, data: m.name === "manifest.sig" ? text : m.data }))));
      const r = await bernsteinJson(["replay", "verify", file, "--public-key", "keys/k.pub"], { cwd });
      expect([name, r.code, r.json.ok, r.json.error, r.json.signature]).toEqual([name, 1, false, "signature_invalid", "invalid"]);
    }
  });
});

/** Malleations of a valid one-line Ed25519 SPKI PEM that OpenSSL's reader still takes as the same key. */
function pemMalleations(pem: string): Record<string, string> {
  const [begin, body, end] = pem.trim().split("\n") as [string, string, string];
  expect(body.length).toBe(60);
  return {
    "non-zero unused bits": `${begin}\n${strayBits(body, B64)}\n${end}\n`,
    "body split in two lines": `${begin}\n${body.slice(0, 30)}\n${body.slice(30)}\n${end}\n`,
    "space inside the body": `${begin}\n${body.slice(0, 30)} ${body.slice(30)}\n${end}\n`,
    "missing padding": `${begin}\n${body.replace(/=+$/, "")}\n${end}\n`,
  };
}

describe("PEM public keys: the one canonical text of the 44-byte SPKI", () => {
  test("replay verify --public-key and verify receipt --public-key refuse a malleated PEM as an unreadable / malformed key", async () => {
    const pem = readFileSync(join(UPSTREAM, "public_key.pem"), "utf8");
    const m = pemMalleations(pem);
    const files = writeVariants("valid-short-with-audit-range.json", []);
    const good = await bernsteinJson(["verify", "receipt", files.original!, "--public-key", join(UPSTREAM, "public_key.pem")]);
    expect([good.code, good.json.status, good.json.key_trust]).toEqual([0, "ok", "pinned"]);
    const agent = join(VECTORS, "agent-journal", "agent-a.tar");
    for (const [name, text] of Object.entries(m)) {
      const keyFile = join(dir, `key-${name.replace(/\W/g, "_")}.pem`);
      writeFileSync(keyFile, text);
      const r = await bernsteinJson(["verify", "receipt", files.original!, "--public-key", keyFile]);
      expect([name, r.code, r.json.error, r.json.status]).toEqual([name, 3, "run_receipt_malformed", "malformed"]);
      expect(r.json.detail).toStartWith("pinned public key is not valid PEM: ");
      const t = await bernsteinJson(["replay", "verify", agent, "--public-key", keyFile]);
      expect([name, t.code, t.json.error]).toEqual([name, 3, "public_key_unreadable"]);
      expect(t.json.detail).toStartWith(`invalid PEM public key ${keyFile}: `);
    }
  });
});
