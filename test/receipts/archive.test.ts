import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildTar, paxPath, type TarMember } from "../../tools/fuzz/tar.ts";
import { Rng } from "../../tools/fuzz/rng.ts";
import { DEFAULT_ARCHIVE_LIMITS, walkArchive, walkArchiveStreamed, type ArchiveLimits, type MemberVisitor } from "../../src/receipts/archive.ts";
import { gzipSync } from "node:zlib";
import { walkArchiveTarStream } from "../helpers/tar-stream-oracle.ts";

/**
 * The plain-tar fast path of walkArchive (header pass + readSync) against
 * the tar-stream walk: for every archive, the same members (index, name,
 * size, type), the same bytes, and the same error (class and message) at
 * the same point. Archives the fast path does not fully understand are
 * handed to tar-stream, so either way the two must agree exactly.
 */
const dir = mkdtempSync(join(tmpdir(), "bernstein-archive-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const enc = new TextEncoder();

type Walk = (path: string, visit: MemberVisitor, limits?: ArchiveLimits) => Promise<number>;

async function record(walk: Walk, path: string, limits: ArchiveLimits, skip: (name: string) => boolean, throwAt: number): Promise<string[]> {
  const events: string[] = [];
  try {
    const n = await walk(
      path,
      (m) => {
        events.push(`member ${m.index} ${JSON.stringify(m.name)} ${m.size} ${m.type}`);
        if (m.index === throwAt) throw new Error(`visitor refused ${m.index}`);
        if (skip(m.name)) return null;
        const parts: number[] = [];
        return {
          data(chunk: Uint8Array) {
            for (const b of chunk) parts.push(b);
          },
          end() {
            events.push(`data ${m.index} ${parts.length} ${Bun.hash(new Uint8Array(parts)).toString(16)}`);
          },
        };
      },
      limits,
    );
    events.push(`count ${n}`);
  } catch (err) {
    events.push(`error ${(err as Error).constructor.name} ${(err as Error).message}`);
  }
  return events;
}

let caseNo = 0;
async function expectSameWalk(bytes: Uint8Array, opts: { maxMembers?: number; throwAt?: number; skipJournal?: boolean } = {}): Promise<void> {
  const path = join(dir, `case-${caseNo++}.tar`);
  writeFileSync(path, bytes);
  const limits = { ...DEFAULT_ARCHIVE_LIMITS, maxMembers: opts.maxMembers ?? DEFAULT_ARCHIVE_LIMITS.maxMembers };
  const skip = (name: string) => opts.skipJournal === true && name.startsWith("journal/");
  const fast = await record(walkArchive, path, limits, skip, opts.throwAt ?? -1);
  const slow = await record(walkArchiveStreamed, path, limits, skip, opts.throwAt ?? -1);
  expect(fast).toEqual(slow);
  rmSync(path);
}

const journal = enc.encode('{"seq":0}\n{"seq":1}\n'.repeat(40));
const base: TarMember[] = [
  { name: "manifest.json", type: "0", data: enc.encode('{"head_hash":"x","steps":1}') },
  { name: "journal/000000.jsonl", type: "0", data: journal },
  { name: "journal/", type: "5", data: new Uint8Array(0) },
  { name: "journal/000001.jsonl", type: "0", data: new Uint8Array(0) },
];

function setChecksum(h: Uint8Array, style: number): void {
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += h[i]!;
  const o = sum.toString(8);
  const text = [o.padStart(6, "0") + "\0 ", o.padStart(7, "0") + "\0", " " + o.padStart(6, "0") + "\0", o + " ", "  " + o + "\0", "+" + o][style % 6]!;
  h.fill(0, 148, 156);
  h.set(enc.encode(text).subarray(0, 8), 148);
}

/** A header-aware mutation of a small archive (fields the readers interpret). */
function mutant(rng: Rng): Uint8Array {
  let members = base.map((m) => ({ ...m }));
  if (rng.chance(0.3)) members.splice(rng.int(members.length + 1), 0, paxPath(rng.pick(["journal/000000.jsonl", "x/", ""])));
  if (rng.chance(0.2)) members.push({ name: rng.pick(["a/b", "../x", "/abs", "link"]), type: rng.pick(["1", "2", "3", "5", "6", "7", "L", "g", "K", "A"]), data: rng.chance(0.5) ? new Uint8Array(0) : enc.encode("zz") });
  if (rng.chance(0.15)) members = members.concat(members);
  let tar = buildTar(members, { noTrailer: rng.chance(0.2) });
  tar = tar.slice();
  const headers: number[] = [];
  for (let off = 0, i = 0; i < members.length; i++) {
    headers.push(off);
    off += 512 + Math.ceil(members[i]!.data.length / 512) * 512;
  }
  const edits = rng.smallSize(4);
  for (let e = 0; e < edits; e++) {
    const h = tar.subarray(rng.pick(headers), rng.pick(headers) + 512);
    if (h.length < 512) continue;
    switch (rng.int(12)) {
      case 0: // name bytes
        h[rng.int(100)] = rng.pick([0x00, 0x2f, 0x2e, 0x41, 0x80, 0xc3, 0xff, 0x20, 0x0a]);
        break;
      case 1: // ustar prefix
        h.set(enc.encode(rng.pick(["journal", "..", "/x", "a\u00e9", ""]) + "\0"), 345);
        break;
      case 2: // GNU magic
        h.set(enc.encode("ustar  \0"), 257);
        break;
      case 3: // unknown magic
        h.set(enc.encode(rng.pick(["\0\0\0\0\0\0", "ustar\0"])), 257);
        break;
      case 4: // typeflag
        h[156] = rng.pick([0x00, 0x30, 0x35, 0x37, 0x31, 0x32, 0x78, 0x67, 0x4c, 0x41]);
        break;
      case 5: {
        // size field spellings
        const size = rng.pick([0, 1, 27, 511, 512, 513, journal.length, 1 << 20]);
        const spelled = rng.pick([size.toString(8).padStart(11, "0") + "\0", " " + size.toString(8) + " ", size.toString(8) + "\0junk", "\0\0" + size.toString(8), "-1", "8", "", "  "]);
        h.fill(0, 124, 136);
        h.set(enc.encode(spelled).subarray(0, 12), 124);
        break;
      }
      case 6: // base-256 size
        h.fill(0, 124, 136);
        h[124] = 0x80;
        h[135] = rng.int(256);
        break;
      case 7: // random header byte
        h[rng.int(512)] = rng.int(256);
        break;
      case 8: // all-zero header block
        h.fill(0);
        break;
      default:
        break;
    }
    if (rng.chance(0.85)) setChecksum(h, rng.int(6));
  }
  const tail = rng.int(6);
  if (tail === 0) tar = tar.subarray(0, rng.int(tar.length + 1));
  else if (tail === 1) tar = Buffer.concat([tar, new Uint8Array(rng.pick([1, 100, 511, 512, 1024, 5000]))]);
  else if (tail === 2) tar = Buffer.concat([tar, rng.bytes(rng.pick([1, 512, 1024]))]);
  return tar;
}

describe("plain-tar fast path agrees with the tar-stream walk", () => {
  test("well-formed archives, skipped members, visitor errors, member limit", async () => {
    const tar = buildTar(base);
    await expectSameWalk(tar);
    await expectSameWalk(tar, { skipJournal: true });
    await expectSameWalk(tar, { throwAt: 1 });
    await expectSameWalk(tar, { maxMembers: 2 });
    await expectSameWalk(tar, { maxMembers: 4 });
    await expectSameWalk(new Uint8Array(0));
    await expectSameWalk(new Uint8Array(10240));
    // A large member read in several chunks.
    const big = new Uint8Array(3 * (1 << 20) + 77).fill(0x61);
    await expectSameWalk(buildTar([{ name: "journal/000000.jsonl", type: "0", data: big }]));
  });

  test("a base-256 size field tar-stream reads as null is refused, not waited on forever", async () => {
    for (const skipJournal of [false, true]) {
      const tar = buildTar(base).slice();
      const h = tar.subarray(512 + 512, 512 + 1024); // journal/000000.jsonl's header
      h.fill(0, 124, 136);
      h[124] = 0x81;
      setChecksum(h, 0);
      await expectSameWalk(tar, { skipJournal });
      const path = join(dir, "null-size.tar");
      writeFileSync(path, tar);
      let error = "";
      await walkArchive(path, () => null).catch((err: Error) => (error = err.message));
      expect(error).toBe('receipt is not a valid tar archive: member "journal/000000.jsonl" has an unreadable size field');
    }
  });

  test("hostile and unusual headers (seeded mutants)", async () => {
    const rng = new Rng(0x7a5);
    for (let i = 0; i < 600; i++) {
      const r = rng.fork();
      await expectSameWalk(mutant(r), { skipJournal: r.chance(0.2), throwAt: r.chance(0.1) ? r.int(4) : -1, maxMembers: r.chance(0.1) ? r.int(6) : undefined });
    }
  }, 60_000);

  test("the fast path reads into the sink's buffer for a plain receipt", async () => {
    const path = join(dir, "plain.tar");
    writeFileSync(path, buildTar(base));
    const buffer = new Uint8Array(4096);
    let viewsOfBuffer = 0;
    await walkArchive(path, (m) =>
      m.name === "journal/000000.jsonl"
        ? {
            buffer,
            data(chunk: Uint8Array) {
              if (chunk.buffer === buffer.buffer) viewsOfBuffer++;
            },
            end() {},
          }
        : null,
    );
    expect(viewsOfBuffer).toBeGreaterThan(0);
  });
});

/**
 * The one reader (src/receipts/plaintar.ts) against the walk it replaced
 * (tar-stream with tarfile's long names, kept as test/helpers/tar-stream-oracle.ts):
 * the same members, bytes and refusals, in the same order, plain and gzip.
 */
const PREMATURE = "receipt is not a valid tar archive: Premature close";
const FORMAT_ERROR = /^error ArchiveError receipt is not a valid tar archive: (Invalid tar header\. Maybe the tar is corrupted or it needs to be gunzipped\?|Invalid tar header: unknown format\.|Invalid header|Header exceeds max size)$/;

async function expectOracleWalk(bytes: Uint8Array, opts: { maxMembers?: number; throwAt?: number; skipJournal?: boolean } = {}): Promise<void> {
  const path = join(dir, `oracle-${caseNo++}.tar`);
  writeFileSync(path, bytes);
  const limits = { ...DEFAULT_ARCHIVE_LIMITS, maxMembers: opts.maxMembers ?? DEFAULT_ARCHIVE_LIMITS.maxMembers };
  const skip = (name: string) => opts.skipJournal === true && name.startsWith("journal/");
  const ours = await record(walkArchive, path, limits, skip, opts.throwAt ?? -1);
  const oracle = await record(walkArchiveTarStream, path, limits, skip, opts.throwAt ?? -1);
  // Where tar-stream found a format error after the walk had begun, streamx
  // replaced it by "Premature close"; the reader names the error, at the same point.
  const last = oracle.length - 1;
  if (oracle[last] === `error ArchiveError ${PREMATURE}` && FORMAT_ERROR.test(ours[last] ?? "")) oracle[last] = ours[last]!;
  expect({ case: caseNo, ours }).toEqual({ case: caseNo, ours: oracle });
  rmSync(path);
}

describe("the one tar reader agrees with the tar-stream walk it replaced", () => {
  test("well-formed, empty, large, gzip and not-gzip archives", async () => {
    const tar = buildTar(base);
    for (const bytes of [tar, new Uint8Array(0), new Uint8Array(10240), gzipSync(tar), gzipSync(tar).subarray(0, 40), Buffer.concat([gzipSync(tar), enc.encode("junk")])]) {
      await expectOracleWalk(bytes);
      await expectOracleWalk(bytes, { skipJournal: true, throwAt: 2 });
    }
    const big = new Uint8Array(3 * (1 << 20) + 77).fill(0x61);
    await expectOracleWalk(buildTar([{ name: "journal/000000.jsonl", type: "0", data: big }]));
    await expectOracleWalk(gzipSync(buildTar([{ name: "journal/000000.jsonl", type: "0", data: big }, ...base])));
  });

  test("hostile and unusual headers (the seeded mutants, plain and gzip)", async () => {
    const rng = new Rng(0x7a5);
    for (let i = 0; i < 600; i++) {
      const r = rng.fork();
      const bytes = mutant(r);
      const opts = { skipJournal: r.chance(0.2), throwAt: r.chance(0.1) ? r.int(4) : -1, maxMembers: r.chance(0.1) ? r.int(6) : undefined };
      await expectOracleWalk(bytes, opts);
      if (i % 4 === 0) await expectOracleWalk(gzipSync(bytes), opts);
    }
  }, 120_000);
});
