import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { generateKeyPairSync } from "node:crypto";
import { BernsteinError } from "../../src/errors/index.ts";
import { exportReceipt, generateKeyPair, publishReceipt, redactionPolicy, verifyReceipt } from "../../src/receipts/index.ts";
import { VERSION } from "../../src/version.ts";
import { VECTORS, ROOT } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";
import { craftTar, listTar, paxRecord } from "./tarcraft.ts";

const AJ = join(VECTORS, "agent-journal");
const EXPECT = JSON.parse(readFileSync(join(AJ, "expect.json"), "utf8"));
const HEAD = EXPECT["agent-a"].head as string;
const PUB_HEAD = EXPECT["agent-a"].published_head as string;
const tmp = mkdtempSync(join(tmpdir(), "receipts-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const sdd = join(tmp, "sdd");
cpSync(join(AJ, "sdd"), sdd, { recursive: true });
chmodSync(sdd, 0o755);
const f = (name: string) => join(tmp, name);

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof BernsteinError) return `${err.code}/${err.exitCode}: ${err.message}`;
    throw err;
  }
  return "no error";
}

const memberOf = (tarPath: string, name: string) => listTar(readFileSync(tarPath)).find((m) => m.name === name)!;

describe("export", () => {
  test("receipt layout, manifest and journal bytes match the Python reference", async () => {
    const r = await exportReceipt({ sddDir: sdd, agentId: "agent-a", out: f("out/nested/a.tar") });
    expect(r).toEqual({ path: f("out/nested/a.tar"), head_hash: HEAD, steps: 60, signed: false });
    const bytes = readFileSync(f("out/nested/a.tar"));
    expect(bytes.length % 10240).toBe(0);
    const members = listTar(bytes);
    expect(members.map((m) => m.name)).toEqual(["manifest.json", "journal/000000.jsonl"]);
    for (const m of members) expect([m.mode, m.uid, m.gid, m.type, m.uname]).toEqual([0o600, 0, 0, "0", ""]);
    const ref = listTar(readFileSync(join(AJ, "agent-a.tar")));
    expect(Buffer.from(members[1]!.data).equals(Buffer.from(ref[1]!.data))).toBe(true);
    const ours = JSON.parse(new TextDecoder().decode(members[0]!.data));
    const theirs = JSON.parse(new TextDecoder().decode(ref[0]!.data));
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect({ ...ours, bernstein_version: "x", created_at: "x" }).toEqual({ ...theirs, bernstein_version: "x", created_at: "x" });
    expect(ours.bernstein_version).toBe(VERSION);
    expect(ours.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(new TextDecoder().decode(members[0]!.data)).not.toContain(" ");
  });

  test("refusals: missing agent, empty journal, broken chain, unreadable key", async () => {
    expect(await code(exportReceipt({ sddDir: sdd, agentId: "nobody", out: f("x.tar") }))).toBe("agent_journal_missing/3: no journal for agent nobody");
    expect(await code(exportReceipt({ sddDir: sdd, agentId: "../x", out: f("x.tar") }))).toStartWith("invalid_agent_id/2");
    const e = join(sdd, "runtime", "journal", "empty");
    cpSync(join(sdd, "runtime", "journal", "agent-a"), e, { recursive: true });
    writeFileSync(join(e, "000000.jsonl"), "\n");
    expect(await code(exportReceipt({ sddDir: sdd, agentId: "empty", out: f("x.tar") }))).toStartWith("export_failed/1: refusing to export empty journal at ");
    const lines = readFileSync(join(sdd, "runtime", "journal", "agent-a", "000000.jsonl"), "utf8").split("\n");
    lines[3] = lines[3]!.replace("Step 3", "Step Z");
    writeFileSync(join(e, "000000.jsonl"), lines.join("\n"));
    const msg = await code(exportReceipt({ sddDir: sdd, agentId: "empty", out: f("x.tar") }));
    expect(msg).toContain("fails self-verification before export: line 4: step_hash mismatch");
    // a row deleted: every row after it is an error; five are named, the others counted
    const rows = lines.filter((l) => l !== "");
    writeFileSync(join(e, "000000.jsonl"), [rows[0], ...rows.slice(2)].join("\n") + "\n");
    const many = await code(exportReceipt({ sddDir: sdd, agentId: "empty", out: f("x.tar") }));
    const [named, counted] = many.split(" fails self-verification before export: ")[1]!.split(/; (?=and \d+ more error\(s\)$)/);
    expect(named!.split("; ")).toEqual([
      "line 2: seq mismatch (expected 1, got 2)",
      expect.stringMatching(/^line 2: prev_hash mismatch /),
      "line 3: seq mismatch (expected 2, got 3)",
      expect.stringMatching(/^line 3: step_hash mismatch /), // the row edited above
      "line 4: seq mismatch (expected 3, got 4)",
    ]);
    // every later row's seq, and nothing else: all the errors but the five named
    expect(counted).toBe(`and ${rows.length - 5} more error(s)`);
    expect(await code(exportReceipt({ sddDir: sdd, agentId: "agent-a", out: f("x.tar"), signingKeyPath: f("nokey") }))).toBe(
      `signing_key_unreadable/3: signing key not found: ${f("nokey")}`,
    );
    expect(() => readFileSync(f("x.tar"))).toThrow();
  });
});

describe("publish", () => {
  test("redacts, re-chains to the reference head, and leaks no canary", async () => {
    const r = await publishReceipt({ sddDir: sdd, agentId: "agent-a", out: f("pub.tar") });
    expect(r).toMatchObject({ path: f("pub.tar"), original_head_hash: HEAD, head_hash: PUB_HEAD, steps: 60, signed: false });
    const bytes = readFileSync(f("pub.tar"));
    expect(bytes.includes("SECRET_TOKEN_DO_NOT_LEAK")).toBe(false);
    const ref = listTar(readFileSync(join(AJ, "agent-a.published.tar")));
    expect(Buffer.from(memberOf(f("pub.tar"), "journal/000000.jsonl").data).equals(Buffer.from(ref[1]!.data))).toBe(true);
    const manifest = JSON.parse(new TextDecoder().decode(memberOf(f("pub.tar"), "manifest.json").data));
    expect(manifest.blob_digests).toEqual([]);
    expect(manifest.head_hash).toBe(PUB_HEAD);
    expect(await verifyReceipt(f("pub.tar"), { expectedHead: PUB_HEAD })).toMatchObject({ ok: true, steps: 60 });
    // The local journal is untouched.
    expect(readFileSync(join(sdd, "runtime", "journal", "agent-a", "000000.jsonl"))).toEqual(
      readFileSync(join(AJ, "sdd", "runtime", "journal", "agent-a", "000000.jsonl")),
    );
  });

  test("--redact adds model/tool_call; load-bearing fields are refused", async () => {
    const r = await publishReceipt({ sddDir: sdd, agentId: "agent-a", out: f("pub2.tar"), redact: ["model", "tool_call"] });
    expect(r.head_hash).not.toBe(PUB_HEAD);
    const journal = new TextDecoder().decode(memberOf(f("pub2.tar"), "journal/000000.jsonl").data);
    for (const line of journal.trim().split("\n")) {
      const row = JSON.parse(line.replace(/NaN|-?Infinity/g, "0"));
      expect(row.tool_call === null || row.tool_call === "<<redacted>>").toBe(true);
      expect(row.model === null || row.model === "<<redacted>>").toBe(true);
    }
    expect((await verifyReceipt(f("pub2.tar"))).ok).toBe(true);
    expect(() => redactionPolicy(["effort", "seq"])).toThrow(
      "cannot redact fields ['effort', 'seq']; only ['model', 'prompt', 'tool_call', 'tool_result'] may be redacted (others are load-bearing for chain semantics)",
    );
  });
});

describe("§5 redaction vectors", () => {
  test("the three-step chain publishes to the spec's redacted hashes", async () => {
    const { StepJournal } = await import("../../src/steps/index.ts");
    const small = join(tmp, "small-sdd");
    const j = StepJournal.open(small, "three");
    for (let i = 0; i < 3; i++) j.append({ input_hash: `a${i}`, model: "m1", prompt: `p${i}` });
    j.close();
    const r = await publishReceipt({ sddDir: small, agentId: "three", out: f("three.tar") });
    expect(r.original_head_hash).toBe("fabfc7f3d8d41a7f2a433455e4d0ab3b1f700ddab69e20f9a40520ad9854bd10");
    const rows = new TextDecoder().decode(memberOf(f("three.tar"), "journal/000000.jsonl").data).trim().split("\n").map((l) => JSON.parse(l));
    expect(rows.map((x) => x.step_hash)).toEqual([
      "f79748f4a3588612ad7eadc461e0138cdaa159e35bad3028288af0a784af5369",
      "b8993da443ceec7b9490b1dd13a79f0ccd606e8bdbc5920fa3b928aa1a3d95ab",
      "d0ef30547ce8077737139ae7a2dc3320549dc55bdf5f41fcc3f49044732952d9",
    ]);
    expect(rows.every((x) => x.prompt === "<<redacted>>" && x.tool_result === null && x.blob_refs.length === 0)).toBe(true);
    expect(r.head_hash).toBe(rows[2].step_hash);
  });

  test("a failed write leaves neither the receipt nor a temp file", async () => {
    writeFileSync(f("plainfile"), "x");
    expect(await code(exportReceipt({ sddDir: sdd, agentId: "agent-a", out: join(f("plainfile"), "r.tar") }))).toStartWith(
      "export_failed/1: receipt write failed: ",
    );
    mkdirSync(f("outdir/r.tar"), { recursive: true });
    // a directory under the output name is refused before anything is written
    expect(await code(exportReceipt({ sddDir: sdd, agentId: "agent-a", out: f("outdir/r.tar") }))).toStartWith("output_forbidden/2: ");
    expect(readdirSync(f("outdir"))).toEqual(["r.tar"]);
  });
});

describe("Python cross-check (one batched process)", () => {
  test("our receipts verify under the stdlib reference, and its receipts verify here", async () => {
    await exportReceipt({ sddDir: sdd, agentId: "agent-b", out: f("b.tar") });
    await publishReceipt({ sddDir: sdd, agentId: "agent-c", out: f("c.pub.tar") });
    const out = runPython(
      `import json, sys
sys.path.insert(0, ${JSON.stringify(join(ROOT, "test", "reference"))})
import verify_receipt as vr
job = json.load(sys.stdin)
res = {"verdicts": [vr.verify(p) for p in job["verify"]]}
res["exported"] = vr.export(job["journal"], "agent-c", job["py_out"])
print(json.dumps(res))`,
      { verify: [f("b.tar"), f("c.pub.tar"), f("pub.tar")], journal: join(sdd, "runtime", "journal", "agent-c", "000000.jsonl"), py_out: f("py.tar") },
    ) as { verdicts: { ok: boolean; head_hash: string; steps: number }[]; exported: { head_hash: string } };
    expect(out.verdicts.map((v) => v.ok)).toEqual([true, true, true]);
    expect(out.verdicts[0]!.head_hash).toBe(HEAD);
    expect(out.verdicts[2]!.head_hash).toBe(PUB_HEAD);
    const mine = await verifyReceipt(f("py.tar"));
    expect(mine).toMatchObject({ ok: true, steps: 60, head_hash: out.exported.head_hash, signature: "absent" });
    expect((await verifyReceipt(f("c.pub.tar"))).head_hash).toBe(out.verdicts[1]!.head_hash);
  });
});

describe("signing", () => {
  test("PEM and raw keys round trip; tamper and wrong key fail; no key reports unchecked", async () => {
    const pair = generateKeyPair(f("keys"), "k");
    await exportReceipt({ sddDir: sdd, agentId: "agent-a", out: f("signed.tar"), signingKeyPath: pair.private_key });
    expect(listTar(readFileSync(f("signed.tar"))).map((m) => m.name)).toEqual(["manifest.json", "manifest.sig", "journal/000000.jsonl"]);
    expect(await verifyReceipt(f("signed.tar"), { publicKeyPath: pair.public_key })).toMatchObject({ ok: true, signed: true, signature: "valid" });
    expect(await verifyReceipt(f("signed.tar"))).toMatchObject({ ok: true, signed: true, signature: "unchecked", errors: [] });

    // Raw 32-byte keys (with a trailing newline, stripped like the reference).
    // The file is strip()ped as a whole, so a seed that itself begins or ends
    // with an ASCII whitespace byte cannot be stored this way: draw another.
    const isAsciiSpace = (b: number) => b === 0x20 || (b >= 0x09 && b <= 0x0d);
    let privateKey, publicKey, seed: Buffer;
    do {
      ({ privateKey, publicKey } = generateKeyPairSync("ed25519"));
      seed = (privateKey.export({ format: "der", type: "pkcs8" }) as Buffer).subarray(-32);
    } while (isAsciiSpace(seed[0]!) || isAsciiSpace(seed[31]!));
    const raw = (publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(-32);
    writeFileSync(f("raw.key"), Buffer.concat([seed, Buffer.from("\n")]));
    writeFileSync(f("raw.pub"), raw);
    await publishReceipt({ sddDir: sdd, agentId: "agent-a", out: f("signed-pub.tar"), signingKeyPath: f("raw.key") });
    expect(await verifyReceipt(f("signed-pub.tar"), { publicKeyPath: f("raw.pub") })).toMatchObject({ ok: true, signature: "valid" });
    const wrong = await verifyReceipt(f("signed-pub.tar"), { publicKeyPath: pair.public_key });
    expect(wrong).toMatchObject({ ok: false, signature: "invalid", errors: ["manifest signature failed Ed25519 verification"] });

    // Tamper: change created_at in the manifest after signing (chain still fine).
    const members = listTar(readFileSync(f("signed.tar")));
    const manifest = new TextDecoder().decode(members[0]!.data).replace(/"created_at":"[^"]+"/, '"created_at":"2000-01-01T00:00:00Z"');
    writeFileSync(f("tampered.tar"), craftTar([{ name: "manifest.json", data: manifest }, { name: "manifest.sig", data: members[1]!.data }, { name: "journal/000000.jsonl", data: members[2]!.data }]));
    expect(await verifyReceipt(f("tampered.tar"), { publicKeyPath: pair.public_key })).toMatchObject({
      ok: false,
      signature: "invalid",
      errors: ["manifest signature failed Ed25519 verification"],
      head_hash: HEAD,
    });
  });

  test("key errors name the problem", async () => {
    writeFileSync(f("short.key"), new Uint8Array(16));
    expect(await code(exportReceipt({ sddDir: sdd, agentId: "agent-a", out: f("y.tar"), signingKeyPath: f("short.key") }))).toBe(
      `signing_key_unreadable/3: raw Ed25519 private key must be 32 bytes (got 16 from ${f("short.key")})`,
    );
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 });
    writeFileSync(f("rsa.pem"), rsa.privateKey.export({ format: "pem", type: "pkcs8" }) as string);
    writeFileSync(f("rsa.pub"), rsa.publicKey.export({ format: "pem", type: "spki" }) as string);
    expect(await code(exportReceipt({ sddDir: sdd, agentId: "agent-a", out: f("y.tar"), signingKeyPath: f("rsa.pem") }))).toBe(
      `signing_key_unreadable/3: private key ${f("rsa.pem")} is not Ed25519`,
    );
    expect(await code(verifyReceipt(join(AJ, "agent-a.tar"), { publicKeyPath: f("rsa.pub") }))).toBe(
      `public_key_unreadable/3: public key ${f("rsa.pub")} is not Ed25519`,
    );
    writeFileSync(f("bad.pem"), "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n");
    expect(await code(verifyReceipt(join(AJ, "agent-a.tar"), { publicKeyPath: f("bad.pem") }))).toStartWith(`public_key_unreadable/3: invalid PEM public key ${f("bad.pem")}: `);
    expect(() => generateKeyPair(f("keys"), "k")).toThrow("refusing to overwrite existing key file");
  });
});

describe("hostile receipts", () => {
  const journal = readFileSync(join(AJ, "sdd", "runtime", "journal", "agent-a", "000000.jsonl"));
  const manifest = listTar(readFileSync(join(AJ, "agent-a.tar")))[0]!.data;
  const good = [
    { name: "manifest.json", data: manifest },
    { name: "journal/000000.jsonl", data: journal },
  ];
  const write = (name: string, bytes: Uint8Array) => {
    writeFileSync(f(name), bytes);
    return f(name);
  };
  const malformed = async (p: string, limits = {}) => code(verifyReceipt(p, { limits }));

  test("traversal and absolute names are malformed; links and devices are ambiguous", async () => {
    const cases: [string, object, string, string][] = [
      ["dotdot", { name: "journal/../../etc/x", data: "x" }, "receipt_malformed/3: ", "contains '..'"],
      ["abs", { name: "/etc/passwd", data: "x" }, "receipt_malformed/3: ", "has an absolute path"],
      ["symlink", { name: "journal/link", type: "2", linkname: "/etc/passwd" }, "receipt_ambiguous/1: ", "is a symlink"],
      ["hardlink", { name: "journal/hard", type: "1", linkname: "manifest.json" }, "receipt_ambiguous/1: ", "is a link"],
      ["chardev", { name: "dev", type: "3" }, "receipt_ambiguous/1: ", "is a character-device"],
      ["fifo", { name: "fifo", type: "6" }, "receipt_ambiguous/1: ", "is a fifo"],
    ];
    for (const [name, entry, prefix, why] of cases) {
      const msg = await malformed(write(`${name}.tar`, craftTar([...good, entry as never])));
      expect(msg).toStartWith(prefix);
      expect(msg).toContain(why);
    }
  });

  test("not a tar, empty, truncated, compressed with bzip2: malformed", async () => {
    expect(await malformed(write("text.tar", new TextEncoder().encode("hello, not a tar\n".repeat(100))))).toStartWith(
      "receipt_malformed/3: receipt is not a valid tar archive: ",
    );
    expect(await malformed(write("empty.tar", new Uint8Array(0)))).toStartWith("receipt_malformed/3: receipt missing manifest");
    const full = craftTar([{ name: "manifest.json", data: manifest }, { name: "journal/000000.jsonl", data: journal, size: journal.length + 100_000 }], { end: false });
    expect(await malformed(write("trunc.tar", full))).toBe("receipt_malformed/3: receipt is not a valid tar archive: Unexpected end of data");
    expect(await malformed(write("bz.tar", new TextEncoder().encode("BZh91AY&SY....")))).toContain("bzip2-compressed");
    expect(await malformed(write("nomani.tar", craftTar([good[1]!])))).toStartWith("receipt_malformed/3: receipt missing manifest: ");
    expect(await malformed(write("nojournal.tar", craftTar([good[0]!])))).toStartWith("receipt_malformed/3: receipt missing journal payload: ");
    expect(await malformed(write("badmani.tar", craftTar([{ name: "manifest.json", data: "{" }, good[1]!])))).toStartWith(
      "receipt_malformed/3: manifest is not valid JSON: Expecting property name enclosed in double quotes",
    );
    expect(await malformed(write("mani-fields.tar", craftTar([{ name: "manifest.json", data: '{"agent_id":"a"}' }, good[1]!])))).toBe(
      "receipt_malformed/3: manifest missing required fields: 'head_hash'",
    );
    expect(await malformed(write("bigmani.tar", craftTar([{ name: "manifest.json", data: "x".repeat(1024 * 1024 + 1) }, good[1]!])))).toContain(
      "manifest.json is 1048577 bytes (limit 1048576)",
    );
  });

  test("gzip receipts verify; a gzip bomb is refused by the ratio cap", async () => {
    expect(await verifyReceipt(write("gz.tar.gz", gzipSync(craftTar(good))))).toMatchObject({ ok: true, head_hash: HEAD });
    const bomb = craftTar([...good, { name: "blobs/padding", data: new Uint8Array(8 * 1024 * 1024) }]);
    const msg = await malformed(write("bomb.tar.gz", gzipSync(bomb, { level: 9 })), { gzipFloorBytes: 1024 * 1024, gzipMaxRatio: 50 });
    expect(msg).toContain("refusing a likely gzip bomb");
  });

  test("member count cap; many unrelated members are fine", async () => {
    const many = Array.from({ length: 3000 }, (_, i) => ({ name: `blobs/${i}`, data: "" }));
    expect(await verifyReceipt(write("many.tar", craftTar([...good, ...many])))).toMatchObject({ ok: true });
    expect(await malformed(write("toomany.tar", craftTar([...good, ...many])), { maxMembers: 2000 })).toContain("more than 2000 members");
  });

  test("PAX headers rename members; a PAX path is read as tar extracts it", async () => {
    const pax = (path: string) => ({ name: "PaxHeader/x", type: "x", data: paxRecord("path", path) });
    expect(await verifyReceipt(write("pax.tar", craftTar([pax("manifest.json"), { name: "ignored-name", data: manifest }, good[1]!])))).toMatchObject({ ok: true });
    // Renamed ./manifest.json: tar extracts it as manifest.json, Python's verifier finds no manifest: refused.
    expect(await malformed(write("pax2.tar", craftTar([pax("./manifest.json"), { name: "manifest.json", data: manifest }, good[1]!])))).toStartWith(
      'receipt_ambiguous/1: receipt member "./manifest.json" is spelled otherwise than the receipt format names it ("manifest.json")',
    );
    // ./manifest.json and manifest.json are one file on extraction: refused, never the first or the last silently.
    expect(await malformed(write("pax3.tar", craftTar([{ name: "manifest.json", data: manifest }, pax("./manifest.json"), { name: "x", data: "{}" }, good[1]!])))).toStartWith(
      'receipt_ambiguous/1: receipt member "./manifest.json" names the same file as the earlier member "manifest.json" (both are "manifest.json")',
    );
  });

  test("journal members are read sorted by name; a duplicate manifest is ambiguous", async () => {
    const text = journal.toString("utf8");
    const cut = text.indexOf("\n", text.length / 2) + 1;
    const split = craftTar([{ name: "journal/b", data: text.slice(cut) }, { name: "journal/a", data: text.slice(0, cut - 1) }, { name: "manifest.json", data: manifest }]);
    expect(await verifyReceipt(write("split.tar", split))).toMatchObject({ ok: true, steps: 60, head_hash: HEAD });
    const twice = craftTar([{ name: "manifest.json", data: "garbage" }, good[1]!, { name: "manifest.json", data: manifest }]);
    expect(await malformed(write("twice.tar", twice))).toStartWith('receipt_ambiguous/1: receipt member "manifest.json" names the same file');
  });

  test("non-UTF-8 and overlong journal lines are malformed; a bad seq is a chain error", async () => {
    const bad = Buffer.concat([journal, Buffer.from([0xff, 0xfe, 0x0a])]);
    expect(await malformed(write("utf8.tar", craftTar([good[0]!, { name: "journal/000000.jsonl", data: bad }])))).toBe(
      "receipt_malformed/3: journal line 61 is not valid UTF-8",
    );
    // Past the row limit: the input is refused as row_too_large (still exit 3), not read.
    expect(await malformed(write("long.tar", craftTar(good)), { maxLineBytes: 100 })).toBe(
      "row_too_large/3: journal line 1 is longer than 100 bytes (the row limit); refusing to read it",
    );
    const lines = journal.toString("utf8").split("\n");
    lines[0] = lines[0]!.replace('"seq":0', '"seq":"zero"');
    const v = await verifyReceipt(write("seq.tar", craftTar([good[0]!, { name: "journal/000000.jsonl", data: lines.join("\n") }])));
    expect(v).toMatchObject({ ok: false, steps: 60, head_hash: HEAD, errors: ["journal line 1: seq is not an integer (got 'zero')"] });
  });

  test("chain tamper, manifest mismatch and expected head are verdicts, not errors", async () => {
    const lines = journal.toString("utf8").split("\n");
    lines[9] = lines[9]!.replace("Step 9", "Step 0");
    const v = await verifyReceipt(write("tamper.tar", craftTar([good[0]!, { name: "journal/000000.jsonl", data: lines.join("\n") }])), { expectedHead: "ab".repeat(32) });
    expect(v.ok).toBe(false);
    expect(v.errors[0]).toMatch(/^journal line 10: step_hash mismatch \(expected [0-9a-f]{16}\.\.\., got [0-9a-f]{16}\.\.\.\)$/);
    expect(v.errors[1]).toBe(`expected head abababababababab... but walked ${HEAD.slice(0, 16)}...`);
    const short = journal.toString("utf8").split("\n").slice(0, 10).join("\n");
    const m = await verifyReceipt(write("short.tar", craftTar([good[0]!, { name: "journal/000000.jsonl", data: short }])));
    expect(m.errors).toEqual([expect.stringMatching(/^manifest head mismatch: 0bf4d0f192bed588\.\.\. vs walked [0-9a-f]{16}\.\.\.$/), "manifest step count mismatch: 60 vs walked 10"]);
    expect(await code(verifyReceipt(f("does-not-exist.tar")))).toBe(`receipt_not_found/3: receipt not found: ${f("does-not-exist.tar")}`);
  });
});
