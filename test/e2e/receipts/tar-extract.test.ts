/**
 * Issue 29, "Receipts read as tar reads them": a victim-signed receipt with
 * a second journal (or manifest) appended under a name that GNU tar and
 * Python's tarfile resolve to the same file — `./journal/000000.jsonl`, a
 * type flag `7` or NUL, a PAX `path`, a GNU long name — verified as the
 * victim's while `tar -x` wrote the attacker's journal. Every variant is
 * verified by the compiled binary and extracted by GNU tar (`tar -xf`) and
 * Python (`tarfile.extractall(filter="data")`); the invariant: exit 0 means
 * both extractions hold exactly the files the verifier read (for the
 * victim's key, the victim's journal), and every hostile variant is refused
 * as `receipt_ambiguous` naming its member.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { buildTar, edited, header, padded, paxPath, readTar, type TarMember } from "../../../tools/fuzz/tar.ts";
import { extractGnu, extractionDiffers, extractPython, readMembers } from "../../../tools/fuzz/extract.ts";

const AJ = join(VECTORS, "agent-journal");
const enc = new TextEncoder();
let cwd = "";
let signed: Uint8Array = new Uint8Array(0);
let victimJournal: Uint8Array = new Uint8Array(0);
let evilJournal: Uint8Array = new Uint8Array(0);
let evilManifest: Uint8Array = new Uint8Array(0);

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), "tar-extract-e2e-"));
  cpSync(join(AJ, "sdd"), join(cwd, ".sdd"), { recursive: true });
  for (const d of [".sdd", ".sdd/runtime", ".sdd/runtime/journal"]) chmodSync(join(cwd, d), 0o755);
  expect((await bernsteinJson(["keys", "generate", "--out-dir", "keys", "--name", "victim"], { cwd })).code).toBe(0);
  expect((await bernsteinJson(["replay", "export", "agent-a", "signed.tar", "--sign", "keys/victim.key"], { cwd })).code).toBe(0);
  signed = new Uint8Array(readFileSync(join(cwd, "signed.tar")));
  victimJournal = readTar(signed).find((m) => m.name === "journal/000000.jsonl")!.data;
  // The attacker's journal: a valid chain of its own (the victim's first 10 steps), with a manifest for it.
  const lines = new TextDecoder().decode(victimJournal).split("\n").filter(Boolean).slice(0, 10);
  evilJournal = enc.encode(lines.join("\n") + "\n");
  const head = /"step_hash":\s*"([0-9a-f]{64})"/.exec(lines[9]!)![1]!;
  evilManifest = enc.encode(JSON.stringify({ agent_id: "agent-a", head_hash: head, steps: 10 }));
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** The signed receipt up to the end of its last member's data (no end-of-archive blocks). */
function victimBody(): Uint8Array {
  let off = 0;
  for (const m of readTar(signed)) off += 512 + Math.ceil(m.data.length / 512) * 512;
  return signed.subarray(0, off);
}



/** The victim's members, then `extra` (members or raw bytes), then the end blocks. */
function appended(extra: (TarMember | Uint8Array)[]): Uint8Array {
  const parts: Uint8Array[] = [victimBody()];
  for (const e of extra) {
    if (e instanceof Uint8Array) parts.push(e);
    else parts.push(buildTar([e], { noTrailer: true }));
  }
  parts.push(new Uint8Array(1024));
  return Buffer.concat(parts);
}

const file = (name: string, data: Uint8Array, type = "0"): TarMember => ({ name, type, data });
const paxRec = (key: string, value: string): TarMember => {
  const p = paxPath(value);
  return { ...p, data: enc.encode(new TextDecoder().decode(p.data).replace(" path=", ` ${key}=`).replace(/^\d+/, (n) => String(Number(n) + key.length - 4))) };
};

interface Case {
  name: string;
  bytes: () => Uint8Array;
  /** The member the refusal must name; null: must verify (exit 0). */
  member: string | null;
}

const CASES: Case[] = [
  // Controls: these verify, and extract to what was read.
  { name: "pristine signed export", bytes: () => signed, member: null },
  { name: "gzip of the export", bytes: () => gzipSync(signed), member: null },
  { name: "a blob appended", bytes: () => appended([file("blobs/abc123", enc.encode("blob"))]), member: null },
  // The red-team finding and its spellings.
  { name: "./journal/000000.jsonl appended", bytes: () => appended([file("./journal/000000.jsonl", evilJournal)]), member: "./journal/000000.jsonl" },
  { name: "type flag 7", bytes: () => appended([file("journal/000000.jsonl", evilJournal, "7")]), member: "journal/000000.jsonl" },
  { name: "type flag NUL", bytes: () => appended([file("journal/000000.jsonl", evilJournal, "\0")]), member: "journal/000000.jsonl" },
  { name: "PAX path", bytes: () => appended([paxPath("journal/000000.jsonl"), file("evil", evilJournal)]), member: "journal/000000.jsonl" },
  { name: "GNU long name L", bytes: () => appended([file("././@LongLink", enc.encode("journal/000000.jsonl\0"), "L"), file("evil", evilJournal)]), member: "journal/000000.jsonl" },
  { name: "./manifest.json and ./journal appended", bytes: () => appended([file("./manifest.json", evilManifest), file("./journal/000000.jsonl", evilJournal)]), member: "./manifest.json" },
  { name: "journal//000000.jsonl", bytes: () => appended([file("journal//000000.jsonl", evilJournal)]), member: "journal//000000.jsonl" },
  { name: "journal/./000000.jsonl", bytes: () => appended([file("journal/./000000.jsonl", evilJournal)]), member: "journal/./000000.jsonl" },
  { name: "case variant on a case-insensitive disk", bytes: () => appended([file("journal/000000.JSONL", evilJournal)]), member: "journal/000000.JSONL" },
  { name: "member after the end-of-archive blocks", bytes: () => Buffer.concat([signed, buildTar([file("journal/000001.jsonl", evilJournal)])]), member: "journal/000001.jsonl" },
  // Links, devices, directories where files belong, undefined members.
  { name: "symlink", bytes: () => appended([{ name: "journal/000001.jsonl", type: "2", data: new Uint8Array(0), linkname: "../manifest.json" }]), member: "journal/000001.jsonl" },
  { name: "hard link", bytes: () => appended([{ name: "journal/000001.jsonl", type: "1", data: new Uint8Array(0), linkname: "manifest.json" }]), member: "journal/000001.jsonl" },
  { name: "FIFO", bytes: () => appended([file("journal/000001.jsonl", new Uint8Array(0), "6")]), member: "journal/000001.jsonl" },
  { name: "directory where the journal is", bytes: () => appended([file("journal/000001.jsonl/", new Uint8Array(0), "5")]), member: "journal/000001.jsonl/" },
  { name: "a file named like a directory", bytes: () => appended([file("journal/000001.jsonl/", evilJournal)]), member: "journal/000001.jsonl/" },
  { name: "undefined member", bytes: () => appended([file("evil.sh", enc.encode("echo pwned\n"))]), member: "evil.sh" },
  { name: "unknown type flag A", bytes: () => appended([file("journal/000001.jsonl", evilJournal, "A")]), member: "journal/000001.jsonl" },
  { name: "directory with data", bytes: () => appended([{ name: "journal/", type: "5", data: buildTar([file("journal/000000.jsonl", evilJournal)], { noTrailer: true }) }]), member: "journal/" },
  // Headers GNU tar and tarfile read differently.
  { name: "two GNU long names", bytes: () => appended([file("././@LongLink", enc.encode("journal/000000.jsonl\0"), "L"), file("././@LongLink", enc.encode("evil\0"), "L"), file("x", evilJournal)]), member: "journal/000000.jsonl" },
  { name: "GNU long name and PAX path", bytes: () => appended([file("././@LongLink", enc.encode("evil\0"), "L"), paxPath("journal/000000.jsonl"), file("x", evilJournal)]), member: "evil" },
  { name: "PAX global path", bytes: () => appended([{ ...paxPath("journal/000000.jsonl"), type: "g" }, file("evil", evilJournal)]), member: "PaxHeader" },
  { name: "PAX linkpath", bytes: () => appended([paxRec("linkpath", "manifest.json"), file("journal/000001.jsonl", evilJournal)]), member: "journal/000001.jsonl" },
  {
    name: "GNU header with a prefix field",
    bytes: () => appended([edited(file("000001.jsonl", evilJournal), (h) => (h.set(enc.encode("ustar  \0"), 257), h.set(enc.encode("journal\0"), 345))), padded(evilJournal)]),
    member: "000001.jsonl",
  },
  { name: "old GNU N header before a member", bytes: () => appended([file("journal/000001.jsonl", evilJournal, "N"), file("x", enc.encode("x"))]), member: "journal/000001.jsonl" },
  {
    name: "an end block with a checksum",
    bytes: () => Buffer.concat([victimBody(), (() => { const h = new Uint8Array(512); h.set(enc.encode("000400\0 "), 148); return h; })(), new Uint8Array(1024)]),
    member: "",
  },
  { name: "old GNU N header at the end", bytes: () => appended([file("journal/000000.jsonl", evilJournal, "N")]), member: "journal/000000.jsonl" },
];

describe("receipts are read as tar extracts them (issue 29)", () => {
  test("every variant: exit 0 only when GNU tar and tarfile extract exactly what was verified; hostile ones are receipt_ambiguous naming the member", async () => {
    const dir = join(cwd, "cases");
    rmSync(dir, { recursive: true, force: true });
    const runs: { c: Case; tar: string; code: number; json: any }[] = [];
    CASES.forEach((c, i) => {
      const tar = join(cwd, `case-${i}.tar`);
      writeFileSync(tar, c.bytes());
      runs.push({ c, tar, code: -1, json: null });
    });
    for (const r of runs) {
      const v = await bernsteinJson(["replay", "verify", r.tar, "--public-key", "keys/victim.pub"], { cwd });
      r.code = v.code;
      r.json = v.json;
    }
    const py = await extractPython(runs.map((r, i) => ({ tar: r.tar, dest: join(dir, `py-${i}`) })));
    const problems: string[] = [];
    for (const [i, r] of runs.entries()) {
      const gnu = extractGnu(r.tar, join(dir, `gnu-${i}`));
      if (r.c.member === null) {
        if (r.code !== 0 || r.json.signature !== "valid") problems.push(`${r.c.name}: expected to verify, got exit ${r.code} ${r.json.error}: ${r.json.detail}`);
      } else if (r.code !== 1 || r.json.error !== "receipt_ambiguous" || !(r.c.member === "" || String(r.json.detail).includes(JSON.stringify(r.c.member))) || r.json.member !== r.c.member) {
        problems.push(`${r.c.name}: expected receipt_ambiguous naming ${JSON.stringify(r.c.member)}, got exit ${r.code} ${r.json.error}: ${r.json.detail}`);
      }
      if (r.code === 0) {
        const read = await readMembers(r.tar);
        if (read === null) problems.push(`${r.c.name}: verified, but the receipt walk refuses it`);
        else {
          if (Buffer.compare(Buffer.from(read.get("journal/000000.jsonl")!), Buffer.from(victimJournal)) !== 0) problems.push(`${r.c.name}: verified another journal`);
          for (const [who, ex] of [["GNU tar", gnu], ["tarfile", py[i]!]] as const) {
            const why = extractionDiffers(read, ex, who);
            if (why !== null) problems.push(`${r.c.name}: ${why}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  test("the same refusal through diff-journal; a receipt Python wrote verifies, one GNU tar repacked with ./ names is refused", async () => {
    const tar = join(cwd, "dup.tar");
    writeFileSync(tar, appended([file("./journal/000000.jsonl", evilJournal)]));
    const d = await bernsteinJson(["replay", "diff-journal", "signed.tar", tar], { cwd });
    expect([d.code, d.json.ok, d.json.error, d.json.member]).toEqual([1, false, "receipt_ambiguous", "./journal/000000.jsonl"]);
    // The Python reference's own receipt (test/fixtures/vectors/agent-journal/agent-a.tar).
    const py = await bernsteinJson(["replay", "verify", join(AJ, "agent-a.tar")], { cwd });
    expect([py.code, py.json.ok]).toEqual([0, true]);
    // Extracted and packed again with `tar -C d -cf r.tar .`: ./ names, which Python's verifier does not read as the receipt's.
    const gnu = extractGnu(join(cwd, "signed.tar"), join(cwd, "repack"));
    expect(gnu.error).toBeNull();
    expect(Bun.spawnSync(["tar", "-C", join(cwd, "repack"), "-cf", join(cwd, "repacked.tar"), "."]).exitCode).toBe(0);
    const re = await bernsteinJson(["replay", "verify", "repacked.tar", "--public-key", "keys/victim.pub"], { cwd });
    expect([re.code, re.json.error]).toEqual([1, "receipt_ambiguous"]);
    expect(re.json.member).toStartWith("./");
    expect(re.json.detail).toContain("is spelled otherwise than the receipt format names it");
    // Packed with the receipt's own names, it verifies.
    expect(Bun.spawnSync(["tar", "-C", join(cwd, "repack"), "-cf", join(cwd, "repacked2.tar"), "manifest.json", "manifest.sig", "journal"]).exitCode).toBe(0);
    const re2 = await bernsteinJson(["replay", "verify", "repacked2.tar", "--public-key", "keys/victim.pub"], { cwd });
    expect([re2.code, re2.json.ok, re2.json.signature]).toEqual([0, true, "valid"]);
  }, 60_000);
});
