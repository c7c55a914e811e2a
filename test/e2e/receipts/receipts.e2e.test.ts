import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { craftTar, listTar } from "../../receipts/tarcraft.ts";

const AJ = join(VECTORS, "agent-journal");
const EXPECT = JSON.parse(readFileSync(join(AJ, "expect.json"), "utf8"));
const HEAD = EXPECT["agent-a"].head as string;
const PUB_HEAD = EXPECT["agent-a"].published_head as string;

/** A writable copy of the vectors' sdd tree as `.sdd` in a fresh working dir. */
function workdir(): string {
  const cwd = mkdtempSync(join(tmpdir(), "receipts-e2e-"));
  cpSync(join(AJ, "sdd"), join(cwd, ".sdd"), { recursive: true });
  for (const d of [".sdd", ".sdd/runtime", ".sdd/runtime/journal"]) chmodSync(join(cwd, d), 0o755);
  dirs.push(cwd);
  return cwd;
}
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("replay export (binary)", () => {
  test("default OUT, exact JSON payload, prose", async () => {
    const cwd = workdir();
    const r = await bernsteinJson(["replay", "export", "agent-a"], { cwd });
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ ok: true, agent_id: "agent-a", output: ".sdd/runtime/receipts/agent-a.tar", head_hash: HEAD, steps: 60, signed: false });
    expect(existsSync(join(cwd, ".sdd/runtime/receipts/agent-a.tar"))).toBe(true);
    const p = await bernstein(["replay", "export", "agent-a", "out/a.tar"], { cwd });
    expect(p.code).toBe(0);
    expect(p.stdout).toBe(`Exported receipt -> out/a.tar\n  head_hash: ${HEAD}\n  steps:     60\n  signed:    False\n`);
  });

  test("refusals carry their codes and write nothing", async () => {
    const cwd = workdir();
    const cases: [string[], number, string][] = [
      [["replay", "export", "nobody"], 3, "agent_journal_missing"],
      [["replay", "export", "../x"], 2, "invalid_agent_id"],
      [["replay", "export", "agent-a", "--yes-i-want-to-publish"], 2, "flag_not_applicable"],
      [["replay", "export", "agent-a", "--head", "ab"], 2, "flag_not_applicable"],
      [["replay", "export", "agent-a", "--sign", "missing.key"], 3, "signing_key_unreadable"],
      [["replay", "export"], 2, "usage"],
    ];
    for (const [args, code, error] of cases) {
      const r = await bernsteinJson(args, { cwd });
      expect([r.code, r.json.error]).toEqual([code, error]);
      expect(r.json.ok).toBe(false);
      expect(r.json.detail.length).toBeGreaterThan(0);
    }
    const prose = await bernstein(["replay", "export", "nobody"], { cwd });
    expect(prose.stderr).toContain("no journal for agent nobody");
    expect(prose.stdout).toBe("");
    expect(existsSync(join(cwd, ".sdd/runtime/receipts"))).toBe(false);
  });

  test("a journal that does not self-verify fails export with exit 1", async () => {
    const cwd = workdir();
    const p = join(cwd, ".sdd/runtime/journal/agent-a/000000.jsonl");
    chmodSync(join(cwd, ".sdd/runtime/journal/agent-a"), 0o755);
    chmodSync(p, 0o644);
    writeFileSync(p, readFileSync(p, "utf8").replace("Step 7:", "Step 8:"));
    const r = await bernsteinJson(["replay", "export", "agent-a"], { cwd });
    expect(r.code).toBe(1);
    expect(r.json.error).toBe("export_failed");
    expect(r.json.detail).toContain("fails self-verification before export: line 8: step_hash mismatch");
  });
});

describe("replay publish (binary)", () => {
  test("refuses without confirmation before reading anything", async () => {
    const cwd = workdir();
    for (const id of ["agent-a", "nobody", "../x"]) {
      const r = await bernsteinJson(["replay", "publish", id], { cwd });
      expect([r.code, r.json.error]).toEqual([2, "confirmation_required"]);
      expect(r.json.detail).toContain("--yes-i-want-to-publish");
    }
    const prose = await bernstein(["replay", "publish", "agent-a"], { cwd });
    expect(prose.stderr).toContain("Refusing to publish");
    expect(existsSync(join(cwd, ".sdd/runtime/receipts"))).toBe(false);
    expect((await bernstein(["replay", "publish", "agent-a", "--opt-in"], { cwd })).code).toBe(2);
  });

  test("publishes a redacted receipt that verifies against the published head only", async () => {
    const cwd = workdir();
    const r = await bernsteinJson(["replay", "publish", "agent-a", "--yes-i-want-to-publish"], { cwd });
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      ok: true,
      agent_id: "agent-a",
      output: ".sdd/runtime/receipts/agent-a.published.tar",
      original_head_hash: HEAD,
      head_hash: PUB_HEAD,
      steps: 60,
      warnings: [],
      signed: false,
    });
    const out = join(cwd, ".sdd/runtime/receipts/agent-a.published.tar");
    expect(readFileSync(out).includes("SECRET_TOKEN_DO_NOT_LEAK")).toBe(false);
    expect((await bernsteinJson(["replay", "verify", out, "--head", PUB_HEAD], { cwd })).json.ok).toBe(true);
    const against = await bernsteinJson(["replay", "verify", out, "--head", HEAD], { cwd });
    expect(against.code).toBe(1);
    // A 16-character prefix is refused up front, not reported as a mismatch of two identical-looking prefixes.
    const prefix = await bernsteinJson(["replay", "verify", out, "--head", PUB_HEAD.slice(0, 16)], { cwd });
    expect([prefix.code, prefix.json.error]).toEqual([2, "usage"]);
    expect(prefix.json.detail).toBe("--head must be a full 64-hex head (got 16 characters); a prefix is not accepted");
    const prose = await bernstein(["replay", "publish", "agent-a", "p.tar", "--yes-i-want-to-publish", "--redact", "model,tool_call"], { cwd });
    expect(prose.code).toBe(0);
    expect(prose.stdout).toContain("Published redacted receipt -> p.tar");
    expect(prose.stdout).toContain(`  original_head:  ${HEAD}`);
    expect(prose.stdout).toContain("verifies against the redacted head");
    // --redact repeated is the same as one comma-separated --redact (each occurrence counts, not only the last).
    const one = await bernsteinJson(["replay", "publish", "agent-a", "r1.tar", "--yes-i-want-to-publish", "--redact", "model,tool_call"], { cwd });
    const two = await bernsteinJson(["replay", "publish", "agent-a", "r2.tar", "--yes-i-want-to-publish", "--redact", "model", "--redact", "tool_call"], { cwd });
    const last = await bernsteinJson(["replay", "publish", "agent-a", "r3.tar", "--yes-i-want-to-publish", "--redact", "tool_call"], { cwd });
    expect([one.code, two.code, last.code]).toEqual([0, 0, 0]);
    expect(two.json.head_hash).toBe(one.json.head_hash);
    expect(last.json.head_hash).not.toBe(one.json.head_hash);
    const bad = await bernsteinJson(["replay", "publish", "agent-a", "--yes-i-want-to-publish", "--redact", "effort"], { cwd });
    expect([bad.code, bad.json.error]).toEqual([2, "usage"]);
  });
});

describe("replay verify (binary)", () => {
  test("reference receipts verify; JSON and prose", async () => {
    const r = await bernsteinJson(["replay", "verify", join(AJ, "agent-a.tar")]);
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ ok: true, head_hash: HEAD, steps: 60, errors: [], signed: false, signature: "absent", signature_checked: false, bytes_read: statSync(join(AJ, "agent-a.tar")).size });
    const p = await bernstein(["replay", "verify", join(AJ, "agent-a.published.tar"), "--head", PUB_HEAD]);
    expect(p.code).toBe(0);
    expect(p.stdout).toStartWith(`Receipt verified: head=${PUB_HEAD} steps=60\n`);
  });

  test("the WebAssembly step kernel takes the reference receipt's rows inside the binary (BERNSTEIN_VERIFY_STATS)", async () => {
    const r = await bernsteinJson(["replay", "verify", join(AJ, "agent-a.tar")], { env: { BERNSTEIN_VERIFY_STATS: "1" } });
    expect([r.code, r.json.steps]).toEqual([0, 60]);
    expect(r.stderr).toBe("verify stats: steps by kernel 60 of 60\n");
    expect((await bernsteinJson(["replay", "verify", join(AJ, "agent-a.tar")])).stderr).toBe("");
  });

  test("a broken chain exits 1 with a verdict; a non-receipt exits 3 with an error; missing exits 3", async () => {
    const cwd = workdir();
    const members = listTar(readFileSync(join(AJ, "agent-a.tar")));
    const journal = new TextDecoder().decode(members[1]!.data).replace("Step 5:", "Step 6:");
    writeFileSync(join(cwd, "bad.tar"), craftTar([{ name: "manifest.json", data: members[0]!.data }, { name: "journal/000000.jsonl", data: journal }]));
    const bad = await bernsteinJson(["replay", "verify", "bad.tar"], { cwd });
    expect(bad.code).toBe(1);
    expect(Object.keys(bad.json)).toEqual(["ok", "error", "detail", "head_hash", "steps", "errors", "signed", "signature", "signature_checked", "bytes_read"]);
    expect(bad.json.ok).toBe(false);
    expect(bad.json.error).toBe("chain_broken");
    expect(bad.json.detail).toBe(bad.json.errors[0]);
    expect(bad.json.errors[0]).toContain("journal line 6: step_hash mismatch");
    const prose = await bernstein(["replay", "verify", "bad.tar"], { cwd });
    expect(prose.stdout).toStartWith("Receipt failed verification (1 error(s)):\n  - journal line 6: step_hash mismatch");

    writeFileSync(join(cwd, "notatar.tar"), "just text\n");
    const mal = await bernsteinJson(["replay", "verify", "notatar.tar"], { cwd });
    expect(mal.code).toBe(3);
    expect(mal.json).toMatchObject({ ok: false, error: "receipt_malformed" });
    expect(mal.json.head_hash).toBeUndefined();
    const missing = await bernsteinJson(["replay", "verify", "nope.tar"], { cwd });
    expect([missing.code, missing.json.error, missing.json.detail]).toEqual([3, "receipt_not_found", "receipt not found: nope.tar"]);
    const pk = await bernsteinJson(["replay", "verify", join(AJ, "agent-a.tar"), "--public-key", "nokey.pub"], { cwd });
    expect([pk.code, pk.json.error]).toEqual([3, "public_key_unreadable"]);
    const usage = await bernsteinJson(["replay", "verify"], { cwd });
    expect(usage.code).toBe(2);
    const na = await bernsteinJson(["replay", "verify", join(AJ, "agent-a.tar"), "--sign", "k"], { cwd });
    expect([na.code, na.json.error]).toEqual([2, "flag_not_applicable"]);
  });

  test("signing round trip through keys generate; unchecked without a key; tamper detected", async () => {
    const cwd = workdir();
    const g = await bernsteinJson(["keys", "generate", "--out-dir", "keys", "--name", "ci"], { cwd });
    expect(g.code).toBe(0);
    expect(g.json).toEqual({ ok: true, private_key: "keys/ci.key", public_key: "keys/ci.pub", fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(statSync(join(cwd, "keys/ci.key")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(cwd, "keys/ci.key"), "utf8")).toStartWith("-----BEGIN PRIVATE KEY-----");
    expect(readFileSync(join(cwd, "keys/ci.pub"), "utf8")).toStartWith("-----BEGIN PUBLIC KEY-----");
    const again = await bernsteinJson(["keys", "generate", "--out-dir", "keys", "--name", "ci"], { cwd });
    expect([again.code, again.json.error]).toEqual([2, "key_exists"]);

    const e = await bernsteinJson(["replay", "export", "agent-a", "s.tar", "--sign", "keys/ci.key"], { cwd });
    expect(e.json.signed).toBe(true);
    const unchecked = await bernsteinJson(["replay", "verify", "s.tar"], { cwd });
    expect(unchecked.code).toBe(0);
    expect(unchecked.json).toMatchObject({ ok: true, signed: true, signature: "unchecked" });
    const prose = await bernstein(["replay", "verify", "s.tar"], { cwd });
    expect(prose.stdout).toContain("Signature: present but NOT checked");
    const valid = await bernsteinJson(["replay", "verify", "s.tar", "--public-key", "keys/ci.pub"], { cwd });
    expect(valid.json).toMatchObject({ ok: true, signature: "valid" });

    const m = listTar(readFileSync(join(cwd, "s.tar")));
    const forged = new TextDecoder().decode(m[0]!.data).replace('"agent_id":"agent-a"', '"agent_id":"agent-z"');
    writeFileSync(join(cwd, "forged.tar"), craftTar([{ name: "manifest.json", data: forged }, { name: "manifest.sig", data: m[1]!.data }, { name: "journal/000000.jsonl", data: m[2]!.data }]));
    const f = await bernsteinJson(["replay", "verify", "forged.tar", "--public-key", "keys/ci.pub"], { cwd });
    expect(f.code).toBe(1);
    expect(f.json).toMatchObject({ ok: false, signature: "invalid", errors: ["manifest signature failed Ed25519 verification"] });
  });

  test("a receipt with a 128 MiB journal member verifies in bounded memory", async () => {
    const cwd = workdir();
    const members = listTar(readFileSync(join(AJ, "agent-a.tar")));
    const path = join(cwd, "huge.tar");
    // manifest + journal (60 real rows, then 128 lines of 1 MiB of spaces), written in pieces.
    const blank = new Uint8Array(1 << 20).fill(0x20);
    blank[blank.length - 1] = 0x0a;
    const rows = members[1]!.data;
    const size = rows.length + 128 * blank.length;
    const head = craftTar([{ name: "manifest.json", data: members[0]!.data }], { end: false });
    const jh = craftTar([{ name: "journal/000000.jsonl", data: new Uint8Array(0), size }], { end: false }).subarray(0, 512);
    const f = Bun.file(path).writer();
    f.write(head);
    f.write(jh);
    f.write(rows);
    for (let i = 0; i < 128; i++) f.write(blank);
    f.write(new Uint8Array((512 - (size % 512)) % 512 + 1024));
    await f.end();
    // Peak RSS of this one process, measured by /usr/bin/time: Bun's
    // resourceUsage().maxRSS reports the largest of all children the test
    // process has waited for, so an earlier test's child would be blamed.
    const proc = Bun.spawn(["/usr/bin/time", "-f", "%M", process.env.BERNSTEIN_BIN!, "replay", "verify", path, "--as-json"], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, NO_COLOR: "1" },
    });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(await proc.exited).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ ok: true, steps: 60, head_hash: HEAD });
    const rssKb = Number(err.trim().split("\n").pop());
    expect(rssKb).toBeGreaterThan(0);
    expect(rssKb).toBeLessThan(200 * 1024);
    rmSync(path);
  }, 60_000);
});

describe("replay diff-journal and the agent view (binary)", () => {
  test("divergence, match, lengths and refusals", async () => {
    const cwd = workdir();
    const d = await bernsteinJson(["replay", "diff-journal", "agent-a", "agent-c"], { cwd });
    expect(d.code).toBe(1);
    expect(d.json).toEqual({
      ok: false,
      error: "divergence",
      detail: "field(s) differ: model",
      diverged: true,
      seq: 17,
      fields_changed: ["model"],
      left_values: { model: null },
      right_values: { model: "changed-model" },
      reason: "field(s) differ: model",
    });
    const prose = await bernstein(["replay", "diff-journal", "agent-a", "agent-c"], { cwd });
    expect(prose.stdout).toBe("Divergence at step 17: field(s) differ: model\n  model:\n    left:  None\n    right: 'changed-model'\n");
    const same = await bernsteinJson(["replay", "diff-journal", "agent-a", join(AJ, "agent-a.tar")], { cwd });
    expect([same.code, same.json]).toEqual([0, { ok: true, diverged: false }]);
    expect((await bernstein(["replay", "diff-journal", "agent-a", "agent-b"], { cwd })).stdout).toBe("No divergence; chains match end-to-end.\n");
    const missing = await bernsteinJson(["replay", "diff-journal", "agent-a", "nobody"], { cwd });
    expect([missing.code, missing.json.error]).toEqual([3, "agent_journal_missing"]);
    expect((await bernsteinJson(["replay", "diff-journal", "agent-a"], { cwd })).code).toBe(2);
  });

  test("replay <AGENT_ID> shows the verified steps", async () => {
    const cwd = workdir();
    const raw = await bernstein(["replay", "agent-a", "--limit", "2", "--as-json"], { cwd });
    expect(raw.code).toBe(0);
    // Python-json output: the vectors' tool calls hold NaN / 1e-05 (valid for Python, not for JSON.parse).
    const j = { json: JSON.parse(raw.stdout.replace(/: (NaN|-?Infinity)/g, ": null")) };
    expect(j.json.agent_id).toBe("agent-a");
    expect(j.json.head_hash).toBe(HEAD);
    expect(j.json.steps).toBe(60);
    expect(j.json.entries).toHaveLength(2);
    expect(j.json.entries[0].seq).toBe(0);
    const p = await bernstein(["replay", "agent-a"], { cwd });
    expect(p.code).toBe(0);
    expect(p.stdout).toStartWith(`Replay for agent-a\nhead_hash: ${HEAD}\nsteps: 60\n`);
    expect(p.stdout).toContain("0      e811dd7ab84f9b2b... 0000000000000000... -                        edit");
    expect(p.stdout).toContain("Use 'bernstein replay export agent-a' to produce an offline-verifiable receipt.");
    mkdirSync(join(cwd, ".sdd/runtime/journal/fresh"));
    // An agent with no steps yet: refused (input_empty, exit 3) unless --allow-empty shows the empty view.
    const refused = await bernstein(["replay", "fresh"], { cwd });
    expect([refused.code, refused.stdout]).toEqual([3, ""]);
    expect(refused.stderr).toContain("fresh is empty");
    const empty = await bernstein(["replay", "fresh", "--allow-empty"], { cwd });
    expect([empty.code, empty.stdout]).toEqual([0, "Journal for fresh is empty\n"]);
  });

  test("a broken agent chain is a negative verdict", async () => {
    const cwd = workdir();
    const p = join(cwd, ".sdd/runtime/journal/agent-a/000000.jsonl");
    chmodSync(join(cwd, ".sdd/runtime/journal/agent-a"), 0o755);
    chmodSync(p, 0o644);
    writeFileSync(p, readFileSync(p, "utf8").replace("Step 2:", "Step 9:"));
    const r = await bernsteinJson(["replay", "agent-a"], { cwd });
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: "chain_verification_failed", steps: 60 });
    expect(r.json.errors[0]).toContain("line 3: step_hash mismatch");
  });
});

describe("help", () => {
  test("keys and keys generate help", async () => {
    const k = await bernstein(["keys", "--help"]);
    expect(k.code).toBe(0);
    expect(k.stdout).toMatchSnapshot();
    const g = await bernstein(["keys", "generate", "--help"]);
    expect(g.code).toBe(0);
    expect(g.stdout).toMatchSnapshot();
  });
});
