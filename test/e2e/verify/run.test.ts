/**
 * `bernstein verify run` writes a receipt upstream's verifier accepts: the
 * independent Python oracle (test/helpers/run_receipt_oracle.py, spec §1
 * only) verifies it, and every single-byte change to a signed part makes
 * both the oracle and the binary refuse it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { oracle, ORACLE } from "../../helpers/upstream-receipts.ts";

let cwd = "";
const env = () => ({ BERNSTEIN_AUDIT_KEY_PATH: join(cwd, "state", "audit.key") });

const ROWS = [
  { event: "run_started", plan: "plan.md", run_id: "r1" },
  { event: "agent_spawned", endpoint_adapter_name: "claude", endpoint_model: "m1", endpoint_base_url: "https://x", role: "backend" },
  { event: "dispatch_knob_selection", rate_multiplier: 1.0, tiny: 1e-5, big: 1e16, note: "тест 🚀 \u2028 \"q\" \\", nested: { z: null, a: [true, false], "é": 1 } },
  { event: "task_completed", task_id: "T-1", files: ["src/a.py"] },
  { event: "run_completed", ticks: 3 },
];

// The lineage spine of §2.2, written the way upstream writes it (CJ-raw rows with an hmac the receipt drops).
const SPINE_WRITER = `import json, hashlib, sys
rows, prev = [], ""
for i, (v, path) in enumerate([(2, "src/mod_0.py"), (1, "src/юникод_🚀.py"), (2, "docs/x.md")]):
    body = {"prev_hash": prev, "artifact_path": path, "content_hash": "sha256:" + hashlib.sha256(b"# %d\\n" % i).hexdigest(),
            "actor": "backend", "step_id": "T-%d" % i, "model": "m1", "timestamp": 1000 + i}
    if i == 2:
        body["traceparent"] = "00-abc-def-01"
    pre = ("bernstein:lineage:v2" if v == 2 else "") + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    row = dict(body, v=v, entry_hash="sha256:" + hashlib.sha256(pre.encode()).hexdigest(), hmac="00" * 32)
    prev = row["entry_hash"]
    rows.append(json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
open(sys.argv[0] if False else json.load(sys.stdin)["out"], "w", encoding="utf-8").write("\\n".join(rows) + "\\n")
print("[]")`;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), "verify-run-"));
  const rec = await bernstein(["journal", "record", "r1"], { cwd, stdin: ROWS.map((r) => JSON.stringify(r)).join("\n") + "\n" });
  expect(rec.code).toBe(0);
  expect((await bernstein(["keys", "generate", "--out-dir", "keys", "--name", "k"], { cwd })).code).toBe(0);
  mkdirSync(join(cwd, ".sdd", "lineage", "r1"), { recursive: true });
  runPython(SPINE_WRITER, { out: join(cwd, ".sdd", "lineage", "r1", "spine.jsonl") });
  mkdirSync(join(cwd, ".sdd", "audit"), { recursive: true });
  const audit = (t: string, type: string, extra: object) => JSON.stringify({ timestamp: t, event_type: type, actor: "alice", resource_type: "task", resource_id: "T-1", details: extra, prev_hmac: "0".repeat(64), hmac: "ab".repeat(32) });
  writeFileSync(
    join(cwd, ".sdd", "audit", "2026-01-01.jsonl"),
    [audit("2025-12-31T23:59:59Z", "early", {}), audit("2026-01-01T00:00:01.000000Z", "task.created", { role: "backend" }), audit("2026-01-01T00:00:02Z", "task.completed", { note: "юникод" }), audit("2026-01-02T00:00:00Z", "late", {})].join("\n") + "\n",
  );
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

async function writeReceipt(out: string, ...extra: string[]): Promise<any> {
  const r = await bernsteinJson(["verify", "run", "r1", "--signing-key-path", "keys/k.key", "-o", out, ...extra], { cwd, env: env() });
  expect([r.code, r.stderr]).toEqual([0, ""]);
  return r.json;
}

/**
 * Every single-byte change inside a signed leaf value of the receipt (the
 * rows' payload, links and hashes, the spine entries, the audit range, the
 * subject, the key and the signature; not the unauthenticated `index`,
 * `payload_hash`, `key_id`, `kid`, `alg`, `subject.name`), written as files.
 */
const MUTATOR = `import importlib.util, json, sys
job = json.load(sys.stdin)
spec = importlib.util.spec_from_file_location("oracle", job["oracle"])
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)
data = open(job["src"], "rb").read()
text = data.decode("utf-8")
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
UNSIGNED = {("signing", "key_id"), ("signing", "alg"), ("signing", "public_key_jwk", "alg"), ("signing", "public_key_jwk", "kid"), ("subject", "name")}
leaves = []
def value(i, path):
    c = text[i]
    if c == "{":
        i += 1
        if text[i] == "}": return i + 1
        while True:
            j = text.index('"', i + 1)
            while text[j - 1] == "\\\\": j = text.index('"', j + 1)
            key = json.loads(text[i:j + 1]); i = value(j + 2, path + (key,))
            if text[i] == "}": return i + 1
            i += 1
    if c == "[":
        i += 1; k = 0
        if text[i] == "]": return i + 1
        while True:
            i = value(i, path + (k,)); k += 1
            if text[i] == "]": return i + 1
            i += 1
    j = i
    if c == '"':
        j += 1
        while text[j] != '"': j += 2 if text[j] == "\\\\" else 1
        j += 1
    else:
        while j < len(text) and text[j] not in ",]}": j += 1
    leaves.append((path, i, j)); return j
value(0, ())
def signed(p):
    if p in UNSIGNED: return False
    if len(p) == 4 and p[:2] == ("journal", "events") and p[3] in ("index", "payload_hash"): return False
    return True
def swap(ch, b64):
    if b64 and ch in B64: return B64[B64.index(ch) ^ 0x20]
    if ch.isdigit(): return "1" if ch == "0" else "0"
    if "a" <= ch <= "z": return "b" if ch == "a" else "a"
    if "A" <= ch <= "Z": return "B" if ch == "A" else "A"
    return None
accepted, sample, n = [], [], 0
for path, s, e in leaves:
    if not signed(path) or text[s] in "tfn": continue
    b64 = path[-1] in ("signature_b64", "x")
    lo, hi = (s + 1, e - 1) if text[s] == '"' else (s, e)
    for i in range(lo, hi):
        if ord(text[i]) > 127 or text[i - 1] == "\\\\": continue
        r = swap(text[i], b64)
        if r is None: continue
        mutated = (text[:i] + r + text[i + 1:]).encode("utf-8")
        v = oracle.check(mutated)
        where = ".".join(str(x) for x in path)
        if v["status"] == "ok": accepted.append(where)
        if n % job["every"] == 0:
            f = "%s/m%05d.json" % (job["dir"], n)
            open(f, "wb").write(mutated)
            sample.append({"file": f, "path": where, "status": v["status"]})
        n += 1
print(json.dumps({"count": n, "accepted": accepted, "sample": sample}))`;

describe("verify run", () => {
  test("the receipt verifies here and under the independent oracle, with the spine, endpoints and audit range", async () => {
    const out = join(cwd, "with-audit.json");
    const built = await writeReceipt(out, "--include-audit-range", "--audit-since", "2026-01-01T00:00:00Z", "--audit-until", "2026-01-02T00:00:00Z");
    expect([built.journal_events, built.spine_entries, built.audit_events]).toEqual([5, 3, 2]);
    const v = await bernsteinJson(["verify", "receipt", out, "--public-key", join(cwd, "keys", "k.pub")]);
    expect([v.code, v.json.status, v.json.verdict, v.json.receipt_sha256]).toEqual([0, "ok", "valid", built.receipt_sha256]);
    expect(v.json.binding.block.endpoints).toEqual([{ adapter: "claude", model: "m1", base_url: "https://x", profile: "" }]);
    const o = oracle([out])[0]!;
    expect([o.status, o.errors, o.receipt_sha256]).toEqual(["ok", [], built.receipt_sha256]);
    // The file is CJ + "\\n": its own SHA-256 is the receipt digest.
    expect(Bun.SHA256.hash(readFileSync(out), "hex")).toBe(built.receipt_sha256);
  });

  test("every single-byte change to a signed part fails under the oracle; a sample fails through the binary with the oracle's verdict", async () => {
    const out = join(cwd, "plain.json");
    await writeReceipt(out, "--include-audit-range", "--audit-since", "2026-01-01T00:00:00Z", "--audit-until", "2026-01-02T00:00:00Z");
    const mdir = join(cwd, "mutants");
    mkdirSync(mdir);
    const m = runPython(MUTATOR, { src: out, dir: mdir, oracle: ORACLE, every: 97 }) as { count: number; accepted: string[]; sample: { file: string; path: string; status: string }[] };
    expect(m.count).toBeGreaterThan(1000);
    expect(m.accepted).toEqual([]);
    expect(m.sample.length).toBeGreaterThan(10);
    for (const s of m.sample) {
      const r = await bernsteinJson(["verify", "receipt", s.file]);
      // Stricter than the oracle (issue 29): a JWK x that is not base64url is a malformed key here,
      // where Python's lenient decoder reads it as another key (tampered).
      const notUrl = s.path === "signing.public_key_jwk.x" && /[+/]/.test(JSON.parse(readFileSync(s.file, "utf8")).signing.public_key_jwk.x);
      const status = notUrl ? "malformed" : s.status;
      expect([s.path, r.json.status, r.code]).toEqual([s.path, status, status === "malformed" ? 3 : 1]);
    }
  }, 120_000);

  test("refusals: no key, two keys, audit bounds, a broken chain, a missing run", async () => {
    const none = await bernsteinJson(["verify", "run", "r1"], { cwd, env: { BERNSTEIN_RUN_RECEIPT_SIGNING_KEY_PATH: "", BERNSTEIN_RUN_RECEIPT_SIGNING_ENV_VAR: "" } });
    expect([none.code, none.json.error]).toEqual([2, "signing_key_missing"]);
    const both = await bernsteinJson(["verify", "run", "r1", "--signing-key-path", "keys/k.key", "--signing-env-var", "K"], { cwd });
    expect([both.code, both.json.detail]).toEqual([2, "--signing-key-path and --signing-env-var are mutually exclusive."]);
    const bounds = await bernsteinJson(["verify", "run", "r1", "--signing-key-path", "keys/k.key", "--include-audit-range", "--audit-since", "2026-01-01T00:00:00Z"], { cwd });
    expect([bounds.code, bounds.json.detail]).toEqual([2, "--include-audit-range requires --audit-since and --audit-until."]);
    const missing = await bernsteinJson(["verify", "run", "nope", "--signing-key-path", "keys/k.key"], { cwd });
    expect([missing.code, missing.json.error]).toEqual([3, "run_not_found"]);

    const broken = join(cwd, ".sdd", "runs", "r2");
    mkdirSync(broken, { recursive: true });
    const lines = readFileSync(join(cwd, ".sdd", "runs", "r1", "journal.jsonl"), "utf8").split("\n");
    writeFileSync(join(broken, "journal.jsonl"), [lines[0], lines[1]!.replace('"role": "backend"', '"role": "frontend"'), ...lines.slice(2)].join("\n"));
    const chain = await bernsteinJson(["verify", "run", "r2", "--signing-key-path", "keys/k.key"], { cwd });
    expect([chain.code, chain.json.error, chain.json.detail]).toEqual([2, "run_receipt_refused", "refusing to sign run 'r2': journal chain fails at step 1: step 1: event_hash mismatch"]);
    writeFileSync(join(broken, "journal.jsonl"), lines[0] + "\nnot json\n");
    const partial = await bernsteinJson(["verify", "run", "r2", "--signing-key-path", "keys/k.key"], { cwd });
    expect([partial.code, partial.json.detail]).toEqual([2, "refusing to sign run 'r2': journal line 2 is not valid JSON (Expecting value: line 1 column 1 (char 0)); a receipt is never signed over a partial journal"]);
  });

  test("the audit key: created 0600 when missing (and reused), refused when group or others can read it", async () => {
    const keyPath = join(cwd, "fresh-state", "audit.key");
    const window = ["--include-audit-range", "--audit-since", "2026-01-01T00:00:00Z", "--audit-until", "2026-01-02T00:00:00Z"];
    const run = (out: string) => bernsteinJson(["verify", "run", "r1", "--signing-key-path", "keys/k.key", "-o", join(cwd, out), ...window], { cwd, env: { BERNSTEIN_AUDIT_KEY_PATH: keyPath } });
    const first = await run("k1.json");
    expect(first.code).toBe(0);
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyPath, "utf8");
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const again = await run("k2.json");
    expect([again.code, readFileSync(keyPath, "utf8")]).toEqual([0, key]);
    // Same key, same window: the re-chained audit range is the same.
    expect(JSON.parse(readFileSync(join(cwd, "k2.json"), "utf8")).audit_range).toEqual(JSON.parse(readFileSync(join(cwd, "k1.json"), "utf8")).audit_range);
    chmodSync(keyPath, 0o644);
    const loose = await run("k3.json");
    expect([loose.code, loose.json.error]).toEqual([2, "audit_key_insecure"]);
  });

  test("the key from the environment: a key path, or a variable holding the PEM; the kid is recorded", async () => {
    const pem = readFileSync(join(cwd, "keys", "k.key"), "utf8");
    const out = join(cwd, "env.json");
    const r = await bernsteinJson(["verify", "run", "r1", "-o", out], { cwd, env: { BERNSTEIN_RUN_RECEIPT_SIGNING_ENV_VAR: "MY_PEM", MY_PEM: pem, BERNSTEIN_RUN_RECEIPT_SIGNING_KID: "ops-2026" } });
    expect([r.code, r.json.key_id]).toEqual([0, "ops-2026"]);
    const v = await bernsteinJson(["verify", "receipt", out]);
    expect([v.code, v.json.summary.key_id]).toEqual([0, "ops-2026"]);
    const p = await bernstein(["verify", "run", "r1"], { cwd, env: { BERNSTEIN_RUN_RECEIPT_SIGNING_KEY_PATH: join(cwd, "keys", "k.key") } });
    expect(p.code).toBe(0);
    expect(p.stdout).toContain("Run Receipt: WRITTEN");
    expect(p.stdout).toContain(`Receipt           ${join(cwd, ".sdd", "runs", "r1", "run-receipt.json")}`);
  });
});
