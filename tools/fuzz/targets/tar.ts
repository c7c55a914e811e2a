import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { BernsteinError } from "../../../src/errors/index.ts";
import { verifyReceipt } from "../../../src/receipts/verify.ts";
import { plainDoc, runBinary } from "../binary.ts";
import { extractGnu, extractionDiffers, extractPython, readMembers } from "../extract.ts";
import type { Rng } from "../rng.ts";
import { receiptVectors } from "../seeds.ts";
import { buildTar, edited, header, padded, paxPath, readTar, type TarMember } from "../tar.ts";
import { violation, type FuzzTarget } from "../types.ts";

/**
 * (issue 29) Receipts as tar extracts them. A case is a receipt vector with
 * members added, replaced, dropped or doubled under name spellings, type
 * flags and header wrappings (PAX path, GNU long names, global headers, a
 * GNU prefix field, members past the end blocks) that GNU tar and Python's
 * tarfile may resolve to one of the receipt's files. Invariant: when
 * bernstein's verdict is ok (exit 0), `tar -xf` and
 * `tarfile.extractall(filter="data")` both write exactly the files the
 * verifier read, byte for byte; any other verdict is a named refusal or a
 * negative verdict, never a crash. The verdict is the compiled binary's when
 * one is given (`replay verify --as-json`, which must agree with the
 * library), else the library's. Python's extractions run in batches.
 */

const enc = new TextEncoder();

const NAMES = [
  "journal/000000.jsonl", "./journal/000000.jsonl", "journal//000000.jsonl", ".//journal/./000000.jsonl", "journal/000001.jsonl", "journal/000000.jsonl/",
  "journal/000000.jsonl/.", "Journal/000000.jsonl", "journal/000000.JSONL", "manifest.json", "./manifest.json", "manifest.sig", "blobs/ab12", "blobs/", "journal/",
  "journal", ".", "./", "evil", "/manifest.json", "journal/../manifest.json", "journal/x/y.jsonl", "", "journal/000000.jsonl ", "journal/000000.jsonl.",
];
const TYPES = ["0", "0", "0", "\0", "7", "1", "2", "3", "5", "6", "A", "S", "N", "K", "V"];
const WRAPS = ["none", "none", "none", "pax", "L", "pax+L", "L+L", "pax+pax", "global", "gnu-prefix", "ustar-prefix", "empty-L"] as const;



const longLink = (name: string): TarMember => ({ name: "././@LongLink", type: "L", data: enc.encode(name + "\0") });

/** A member (its header blocks and data) named `name` by one of the wrappings. */
function spelled(rng: Rng, name: string, type: string, data: Uint8Array): Uint8Array {
  const m: TarMember = { name, type, data, linkname: type === "1" || type === "2" ? rng.pick(["manifest.json", "../manifest.json", "/etc/passwd"]) : undefined };
  const plain = (members: TarMember[]) => buildTar(members, { noTrailer: true });
  const wrap = rng.pick(WRAPS);
  const other = rng.pick(NAMES);
  switch (wrap) {
    case "none":
      return plain([m]);
    case "pax":
      return plain([paxPath(name), { ...m, name: other }]);
    case "L":
      return plain([longLink(name), { ...m, name: other }]);
    case "pax+L":
      return plain(rng.chance(0.5) ? [paxPath(name), longLink(other), { ...m, name: "x" }] : [longLink(name), paxPath(other), { ...m, name: "x" }]);
    case "L+L":
      return plain([longLink(name), longLink(other), { ...m, name: "x" }]);
    case "pax+pax":
      return plain([paxPath(name), paxPath(other), { ...m, name: "x" }]);
    case "global":
      return plain([{ ...paxPath(name), type: "g" }, { ...m, name: other }]);
    case "empty-L":
      return plain([{ name: "././@LongLink", type: "L", data: new Uint8Array(0) }, m]);
    case "gnu-prefix":
    case "ustar-prefix": {
      const slash = name.lastIndexOf("/", name.length - 2);
      const [prefix, base] = slash > 0 ? [name.slice(0, slash), name.slice(slash + 1)] : [rng.pick(["journal", "."]), name];
      const h = edited({ ...m, name: base }, (h) => {
        if (wrap === "gnu-prefix") h.set(enc.encode("ustar  \0"), 257);
        h.set(enc.encode(prefix.slice(0, 154) + "\0"), 345);
      });
      return Buffer.concat([h, padded(data)]);
    }
  }
}

/** The tar blocks of a member list (no end blocks). */
const blocksOf = (members: TarMember[]) => buildTar(members, { noTrailer: true });

interface Pending {
  tar: string;
  read: Map<string, Uint8Array>;
  input: Uint8Array;
}

export interface TarTargetOptions {
  bin: string | null;
  python: boolean;
}

export function tarTarget(opts: TarTargetOptions): FuzzTarget {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-fuzz-tar-"));
  let caseNo = 0;
  let pending: Pending[] = [];
  const stats = { ok: 0, ambiguous: 0, malformed: 0, negative: 0, gnu_checked: 0, python_checked: 0, binary_checked: 0 };

  /** bernstein's verdict: exit code and error code (the binary's, held to the library's). */
  const verdict = async (tar: string): Promise<{ code: number; error: string | null }> => {
    let lib: { code: number; error: string | null };
    try {
      const v = await verifyReceipt(tar);
      lib = { code: v.ok ? 0 : 1, error: v.error };
    } catch (err) {
      if (!(err instanceof BernsteinError)) throw err;
      lib = { code: err.exitCode, error: err.code };
    }
    if (opts.bin === null) return lib;
    const r = await runBinary({ bin: opts.bin, args: ["replay", "verify", tar, "--as-json"], allowed: [0, 1, 3] });
    const doc = plainDoc(r.doc) as Record<string, unknown>;
    stats.binary_checked++;
    const bin = { code: r.code, error: (doc.error as string | undefined) ?? null };
    if (bin.code !== lib.code || bin.error !== lib.error) throw violation("binary_vs_library", `library exit ${lib.code} ${lib.error}, binary exit ${bin.code} ${bin.error}`);
    return bin;
  };

  return {
    name: "tar",
    seeds: () => receiptVectors().map((r) => r.bytes),
    mutate(rng: Rng, seeds) {
      const base = readTar(rng.pick(seeds));
      const journal = base.find((m) => m.name.startsWith("journal/"))?.data ?? new Uint8Array(0);
      const lines = new TextDecoder().decode(journal).split("\n").filter(Boolean);
      const datas = [journal, enc.encode(lines.slice(0, 1 + rng.int(Math.max(1, lines.length))).join("\n") + "\n"), base[0]!.data, new Uint8Array(0), enc.encode("{}")];
      const members = base.map((m) => blocksOf([m]));
      const edits = 1 + rng.int(3);
      let tail: Uint8Array = new Uint8Array(0);
      for (let e = 0; e < edits; e++) {
        const added = spelled(rng, rng.pick(NAMES), rng.pick(TYPES), rng.pick(datas));
        switch (rng.int(6)) {
          case 0: // insert somewhere
            members.splice(rng.int(members.length + 1), 0, added);
            break;
          case 1: // replace a member
            members[rng.int(members.length)] = added;
            break;
          case 2: // past the end blocks
            tail = Buffer.concat([tail, added]);
            break;
          case 3: // a member doubled
            members.push(members[rng.int(members.length)]!);
            break;
          case 4: // a member respelled (same data)
            {
              const i = rng.int(base.length);
              members[i] = spelled(rng, rng.pick(NAMES), "0", base[i]!.data);
            }
            break;
          default: // a no-op edit keeps controls in the mix
            break;
        }
      }
      let tar: Uint8Array = Buffer.concat([...members, new Uint8Array(1024), tail, tail.length > 0 ? new Uint8Array(1024) : new Uint8Array(0)]);
      if (rng.chance(0.1)) tar = gzipSync(tar, { level: 1 });
      return tar;
    },
    async run(input) {
      caseNo++;
      const tar = join(dir, `case-${caseNo}.tar`);
      writeFileSync(tar, input);
      const v = await verdict(tar);
      if (v.code === 0) stats.ok++;
      else if (v.error === "receipt_ambiguous") stats.ambiguous++;
      else if (v.code === 3) stats.malformed++;
      else stats.negative++;
      if (v.code !== 0) {
        rmSync(tar, { force: true });
        return;
      }
      const read = await readMembers(tar);
      if (read === null) throw violation("verified_unreadable", "verified, but the receipt walk refuses it");
      const gnu = extractGnu(tar, join(dir, "gnu"));
      stats.gnu_checked++;
      const why = extractionDiffers(read, gnu, "GNU tar");
      if (why !== null) throw violation("extract_differs", why);
      if (opts.python) pending.push({ tar, read, input });
      else rmSync(tar, { force: true });
    },
    async flush() {
      if (pending.length === 0) return [];
      const batch = pending;
      pending = [];
      const out: { input: Uint8Array; error: Error }[] = [];
      const results = await extractPython(batch.map((p, i) => ({ tar: p.tar, dest: join(dir, `py-${i}`) })));
      batch.forEach((p, i) => {
        stats.python_checked++;
        const why = extractionDiffers(p.read, results[i]!, "tarfile");
        if (why !== null) out.push({ input: p.input, error: violation("extract_differs", why) });
        rmSync(p.tar, { force: true });
        rmSync(join(dir, `py-${i}`), { recursive: true, force: true });
      });
      return out;
    },
    stats: () => ({ ...stats }),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
