import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGzip, gzipSync } from "node:zlib";
import { BernsteinError, InputError, NegativeError, RefusalError, UsageError } from "../../../src/errors/index.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../../../src/fsutil/input.ts";
import { exportReceipt, publishReceipt } from "../../../src/receipts/export.ts";
import { verifyReceipt, type ReceiptVerdict } from "../../../src/receipts/verify.ts";
import { setStepKernelEnabled } from "../../../src/steps/kernel.ts";
import { StepJournal } from "../../../src/steps/writer.ts";
import { verifyAgentJournal, verifyStepJournal } from "../../../src/steps/verify.ts";
import { writeAgentEntriesJson } from "../../../src/replay/agent-json.ts";
import { SpanRecords } from "../../../src/steps/records.ts";
import { plainDoc, runBinary } from "../binary.ts";
import { concatBytes, mutateBytes, mutateLines } from "../mutate.ts";
import { runPythonBatch } from "../python.ts";
import type { Rng } from "../rng.ts";
import { receiptVectors, stepJournalVectors } from "../seeds.ts";
import { buildTar, header, paxPath, readTar, type TarMember } from "../tar.ts";
import { violation, type FuzzTarget } from "../types.ts";

/**
 * (c) The step journal, the receipt verifier and the tar reader. An input
 * is one mode byte and a payload:
 *   0 + tar bytes   -> `verifyReceipt` (streaming tar reader + chain walk);
 *   1 + bucket bytes -> on-disk step-journal verify, writer recovery
 *                       (open/append), and an export/publish round trip.
 * Invariants: verifyReceipt returns a verdict or throws `InputError`
 * (`receipt_malformed`) or `receipt_ambiguous`; step verify never throws; the writer either
 * recovers (and the journal then verifies with one more step) or refuses
 * with a named error; a journal that exports/publishes yields a receipt
 * that verifies with the same head and step count, and publish's fast
 * path (the step kernel) writes the exact path's receipt; the agent view's
 * verdict and entries are the same with the step kernel on and off. The sampled binary
 * cases check `replay verify` agrees with the library.
 */

const enc = new TextEncoder();

/** `replay fuzz-agent --as-json`'s verdict and entries, with the step kernel on or off (or the error it stops with). */
async function agentView(sdd: string, kernel: boolean): Promise<string> {
  setStepKernelEnabled(kernel);
  const records = new SpanRecords();
  const parts: Buffer[] = [];
  const keep = (b: Uint8Array) => void parts.push(Buffer.from(b));
  try {
    const v = await verifyAgentJournal(sdd, "fuzz-agent", records);
    await writeAgentEntriesJson(v.bucket, null, { write: async (b) => keep(b), writeSync: keep }, undefined, records);
    return `${v.ok} ${v.head_hash} ${v.steps} ${v.entries} ${v.errors.join("|")}\n${Buffer.concat(parts).toString("latin1")}`;
  } catch (err) {
    if (err instanceof BernsteinError) return `${err.code}: ${err.message}`;
    throw err;
  } finally {
    records.close();
    setStepKernelEnabled(true);
  }
}
const TAR_TOKENS = ["ustar\0", "ustar  \0", "00", "journal/", "journal/000000.jsonl", "manifest.json", "manifest.sig", "../", "/etc/passwd", "\0\0\0\0", "0000644\0", "77777777777\0", "2", "1", "5", "x", "L"].map((t) => enc.encode(t));

/** Manifest field values that break coercions. */
const MANIFEST_VALUES = ['"x"', "null", "-1", "1e400", "1.5", '"3"', "true", "[]", "{}", "123456789012345678901234567890", '"\\ud800"', "NaN"];
const RECEIPT_NAMES = ["journal/000000.jsonl", "journal/000001.jsonl", "journal/a", "journal/", "../journal/000000.jsonl", "/journal/000000.jsonl", "journal/../x", "journal\\..\\x", "manifest.json", "manifest.sig", "blobs/abc", "C:/x", "./journal/000000.jsonl"];

function structural(rng: Rng, seed: Uint8Array, journals: readonly Uint8Array[]): Uint8Array {
  let members = readTar(seed);
  const ops = 1 + rng.int(3);
  for (let o = 0; o < ops; o++) {
    const i = rng.int(Math.max(1, members.length));
    const m = members[i];
    switch (rng.int(12)) {
      case 0:
        if (m) members[i] = { ...m, data: mutateLines(rng, m.data, { corpus: journals }) };
        break;
      case 1: {
        const man = members.find((x) => x.name === "manifest.json");
        if (man) {
          const text = new TextDecoder().decode(man.data);
          const field = rng.pick(["steps", "head_hash", "agent_id", "format_version", "blob_digests", "unauthenticated_fields", "created_at"]);
          const edited = text.replace(new RegExp(`"${field}":("[^"]*"|[^,}]*)`), `"${field}":${rng.pick(MANIFEST_VALUES)}`);
          man.data = rng.chance(0.3) ? mutateBytes(rng, enc.encode(edited)) : enc.encode(edited);
        }
        break;
      }
      case 2:
        if (m) members.splice(i, 0, { ...m });
        break;
      case 3:
        if (m) members.splice(i, 1);
        break;
      case 4:
        if (members.length > 1) {
          const j = rng.int(members.length);
          [members[i], members[j]] = [members[j]!, members[i]!];
        }
        break;
      case 5:
        if (m) members[i] = { ...m, name: rng.pick(RECEIPT_NAMES) };
        break;
      case 6:
        members.splice(i, 0, { name: rng.pick(RECEIPT_NAMES), type: rng.pick(["1", "2", "3", "4", "5", "6", "7", "g", "L", "K", "S"]), data: new Uint8Array(0), linkname: rng.pick(["/etc/passwd", "../../x", "journal/000000.jsonl"]) });
        break;
      case 7:
        members.splice(i, 0, paxPath(rng.pick(RECEIPT_NAMES)));
        break;
      case 8:
        members.splice(i, 0, { name: "manifest.sig", type: "0", data: rng.chance(0.5) ? enc.encode(Buffer.from(rng.bytes(rng.pick([0, 63, 64, 65]))).toString("base64")) : rng.bytes(rng.smallSize(200)) });
        break;
      case 9:
        if (m) members[i] = { ...m, declaredSize: m.data.length + rng.pick([1, 511, 512, 1 << 20, 2 ** 33 - 1]) };
        break;
      case 10:
        // Many small journal members out of order.
        for (let k = 0; k < rng.smallSize(80); k++) members.push({ name: `journal/${String(rng.int(1000)).padStart(6, "0")}.jsonl`, type: "0", data: rng.chance(0.5) ? new Uint8Array(0) : rng.pick(journals) });
        break;
      default:
        if (m) members[i] = { ...m, data: mutateBytes(rng, m.data, { dictionary: TAR_TOKENS }) };
    }
    members = members.slice(0, 20_000);
  }
  let tar = buildTar(members, { badChecksumAt: rng.chance(0.05) ? rng.int(members.length) : undefined, noTrailer: rng.chance(0.1) });
  if (rng.chance(0.1)) tar = tar.subarray(0, rng.int(tar.length));
  return tar;
}

export interface ReceiptTargetOptions {
  bin?: string | null;
  /** The Python reference receipt verifier (null: no cross-check). */
  reference?: string | null;
  /** Fraction of tar cases kept for the cross-check. */
  referenceSample?: number;
}

/** Verify a batch of receipts with the reference module in one python3 process. */
const PY_BATCH = `
import json, sys, tarfile, importlib.util
spec = importlib.util.spec_from_file_location("vr", sys.argv[1])
vr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vr)
def padded_lines(f):
    # A non-blank journal line with whitespace around it: strip() decides
    # blankness, but whether the stripped text or the line is parsed is not
    # settled by the spec (see the receipt target's note).
    try:
        with tarfile.open(f) as tar:
            for m in tar.getmembers():
                if m.isfile() and m.name.startswith("journal/"):
                    for line in tar.extractfile(m).read().decode("utf-8", "replace").splitlines():
                        if line.strip() and line != line.strip():
                            return True
    except Exception:
        return False
    return False
out = []
for f in json.load(sys.stdin):
    try:
        v = vr.verify(f, None)
        v["padded_lines"] = padded_lines(f)
        out.append(v)
    except vr.Malformed as e:
        out.append({"malformed": str(e)})
    except Exception as e:
        out.append({"python_error": type(e).__name__})
print(json.dumps(out))
`;

export function receiptTarget(opts: ReceiptTargetOptions = {}): FuzzTarget {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-fuzz-receipt-"));
  const tarPath = join(dir, "receipt.tar");
  let caseNo = 0;
  let batch: { file: string; ours: ReceiptVerdict; input: Uint8Array }[] = [];
  const stats = { receipts: 0, receipts_ok: 0, receipts_malformed: 0, receipts_ambiguous: 0, buckets: 0, recovered: 0, refused: 0, exported: 0, python_checked: 0, python_compared: 0, python_strip_ambiguity: 0 };

  /** A verdict, or the named refusal (InputError, or NegativeError `receipt_ambiguous`). */
  const verifyTar = async (path: string): Promise<ReceiptVerdict | BernsteinError> => {
    try {
      const v = await verifyReceipt(path);
      if (v.ok !== (v.errors.length === 0)) throw violation("receipt_ok_inconsistent", JSON.stringify(v).slice(0, 200));
      if (v.signature !== "absent" && v.signature !== "unchecked") throw violation("receipt_signature_state", `signature ${v.signature} without a key`);
      return v;
    } catch (err) {
      if (err instanceof InputError && (err.code === "receipt_malformed" || err.code === "receipt_not_found" || err.code === "row_too_large")) return err;
      if (err instanceof NegativeError && err.code === "receipt_ambiguous") return err;
      throw err;
    }
  };

  const runTar = async (payload: Uint8Array, keep: boolean): Promise<void> => {
    stats.receipts++;
    writeFileSync(tarPath, payload);
    const r = await verifyTar(tarPath);
    if (r instanceof InputError) stats.receipts_malformed++;
    else if (r instanceof BernsteinError) stats.receipts_ambiguous++;
    else if (r.ok) stats.receipts_ok++;
    if (keep && !(r instanceof BernsteinError)) {
      const kept = join(dir, `ref-${caseNo}.tar`);
      writeFileSync(kept, payload);
      batch.push({ file: kept, ours: r, input: concatBytes(new Uint8Array([0]), payload) });
    }
  };

  /** Publish again with the step kernel off: the same result and members (but for the time in the manifest). */
  const samePublishExactly = async (sdd: string, fast: string, res: object): Promise<void> => {
    const exact = join(sdd, "publish-exact.tar");
    setStepKernelEnabled(false);
    let ref: object;
    try {
      ref = { ...(await publishReceipt({ sddDir: sdd, agentId: "fuzz-agent", out: exact })), path: "" };
    } finally {
      setStepKernelEnabled(true);
    }
    const members = (p: string) =>
      JSON.stringify(readTar(readFileSync(p)).map((m) => [m.name, new TextDecoder().decode(m.data).replace(/"created_at":"[^"]*"/, "")]));
    if (JSON.stringify({ ...res, path: "" }) !== JSON.stringify(ref) || members(fast) !== members(exact)) {
      throw violation("publish_fast_differs", "publish's fast path wrote another receipt than the exact path");
    }
  };

  const runBucket = async (payload: Uint8Array): Promise<void> => {
    stats.buckets++;
    const sdd = join(dir, `sdd-${caseNo}`);
    const agentDir = join(sdd, "runtime", "journal", "fuzz-agent");
    mkdirSync(agentDir, { recursive: true });
    const bucket = join(agentDir, "000000.jsonl");
    try {
      writeFileSync(bucket, payload);
      const v = await verifyStepJournal(bucket);
      if (v.ok !== (v.errors.length === 0)) throw violation("steps_ok_inconsistent", JSON.stringify(v).slice(0, 200));
      // The agent view: its verify pass's span records and its render pass on the kernel give the exact path's bytes.
      const [fast, exact] = [await agentView(sdd, true), await agentView(sdd, false)];
      if (fast !== exact) throw violation("agent_view_differs", `kernel: ${JSON.stringify(fast.slice(0, 300))} exact: ${JSON.stringify(exact.slice(0, 300))}`);
      // Export / publish round trip: only a self-verifying journal exports, and its receipt verifies.
      for (const kind of ["export", "publish"] as const) {
        const out = join(sdd, `${kind}.tar`);
        try {
          const res = kind === "export" ? await exportReceipt({ sddDir: sdd, agentId: "fuzz-agent", out }) : await publishReceipt({ sddDir: sdd, agentId: "fuzz-agent", out });
          stats.exported++;
          if (kind === "export" && !v.ok) throw violation("export_unverified", "exported a journal that fails verification");
          const rv = await verifyReceipt(out);
          if (!rv.ok || rv.steps !== res.steps || rv.head_hash !== res.head_hash) {
            throw violation(`${kind}_roundtrip`, `receipt of ${res.steps} steps head ${res.head_hash.slice(0, 16)} verifies as ok=${rv.ok} ${rv.steps} ${rv.head_hash.slice(0, 16)}: ${rv.errors[0] ?? ""}`);
          }
          if (kind === "publish") await samePublishExactly(sdd, out, res);
        } catch (err) {
          if (!(err instanceof BernsteinError) || err instanceof UsageError) throw err;
          // blob_refs is not hashed, so a verifying journal may still carry
          // digests the manifest cannot list: that refusal is named, and fine.
          if (v.ok && v.steps > 0 && !/blob_refs item that is not a string/.test(err.message)) {
            throw violation(`${kind}_refused_valid`, `${kind} refused a journal that verifies: ${err.message}`);
          }
        }
      }
      // Writer recovery: open, append one step, close; the journal must then verify.
      let j: StepJournal;
      try {
        j = StepJournal.open(sdd, "fuzz-agent");
      } catch (err) {
        if (err instanceof InputError || err instanceof RefusalError) {
          stats.refused++;
          if (v.ok) throw violation("recovery_refused_valid", `writer refused a journal that verifies: ${err.message}`);
          return;
        }
        throw err;
      }
      const before = j.nextSeq();
      j.append({ input_hash: "fuzz", model: "m", prompt: "p" });
      j.close();
      stats.recovered++;
      const after = await verifyStepJournal(bucket);
      if (!after.ok || after.steps !== before + 1) throw violation("recovery_then_verify", `after recovery and one append: ok=${after.ok} steps=${after.steps} (expected ${before + 1}): ${after.errors[0] ?? ""}`);
    } finally {
      rmSync(sdd, { recursive: true, force: true });
    }
  };

  return {
    name: "receipt",
    seeds() {
      const out: Uint8Array[] = [];
      for (const r of receiptVectors()) out.push(concatBytes(new Uint8Array([0]), r.bytes));
      for (const b of stepJournalVectors()) out.push(concatBytes(new Uint8Array([1]), b.bytes));
      return out;
    },
    mutate(rng, seeds) {
      const tars = seeds.filter((s) => s[0] === 0).map((s) => s.subarray(1));
      const journals = seeds.filter((s) => s[0] === 1).map((s) => s.subarray(1));
      if (rng.chance(0.35)) {
        const base = rng.pick(journals);
        const m = rng.chance(0.6) ? mutateLines(rng, base, { corpus: journals }) : mutateBytes(rng, base, { corpus: journals });
        return concatBytes(new Uint8Array([1]), m);
      }
      const base = rng.pick(tars);
      let tar = rng.chance(0.6) ? structural(rng, base, journals) : mutateBytes(rng, base, { dictionary: TAR_TOKENS, corpus: tars, maxBytes: 1 << 21 });
      if (rng.chance(0.1)) tar = gzipSync(tar, { level: 1 });
      return concatBytes(new Uint8Array([0]), tar);
    },
    async run(input, rng) {
      caseNo++;
      const payload = input.subarray(1);
      if (input[0] === 1) await runBucket(payload);
      else await runTar(payload, !!opts.reference && rng.chance(opts.referenceSample ?? 0.3));
    },
    async flush() {
      if (!opts.reference || batch.length === 0) return [];
      const part = batch;
      batch = [];
      const answers = await runPythonBatch<Record<string, unknown>[]>(PY_BATCH, part.map((b) => b.file), [opts.reference]);
      const out: { input: Uint8Array; error: Error }[] = [];
      part.forEach((b, i) => {
        rmSync(b.file, { force: true });
        const a = answers[i]!;
        stats.python_checked++;
        // Where Python's tarfile refuses what our hostile-tar reader reads (or
        // crashes), there is no verdict to compare; both verdicts must agree.
        if (!("ok" in a)) return;
        stats.python_compared++;
        const ours = { ok: b.ours.ok, head_hash: b.ours.head_hash, steps: b.ours.steps, errors: b.ours.errors };
        const theirs = { ok: a.ok, head_hash: a.head_hash, steps: a.steps, errors: a.errors };
        if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
          // Spec-silent: our walker parses the strip()ped line (as the run
          // journal reader does), the reference parses the raw line; they
          // differ only on lines with whitespace around them. Counted, reported.
          if (a.padded_lines === true) {
            stats.python_strip_ambiguity++;
            return;
          }
          out.push({ input: b.input, error: violation("python_reference", `ours ${JSON.stringify(ours).slice(0, 300)} python ${JSON.stringify(theirs).slice(0, 300)}`) });
        }
      });
      return out;
    },
    async runBinary(input) {
      if (input[0] === 1) return;
      const payload = input.subarray(1);
      writeFileSync(tarPath, payload);
      const lib = await verifyTar(tarPath);
      const r = await runBinary({ bin: opts.bin!, args: ["replay", "verify", tarPath, "--as-json"], allowed: [0, 1, 3] });
      const doc = plainDoc(r.doc) as Record<string, unknown>;
      if (lib instanceof BernsteinError) {
        if (r.code !== lib.exitCode || doc.error !== lib.code) throw violation("binary_vs_library", `library refused (${lib.code}) but the binary exited ${r.code} ${String(doc.error)}`);
      } else if (r.code !== (lib.ok ? 0 : 1) || doc.ok !== lib.ok || doc.head_hash !== lib.head_hash || String(doc.steps) !== String(lib.steps)) {
        throw violation("binary_vs_library", `library ok=${lib.ok} steps=${lib.steps}, binary exit ${r.code} ok=${String(doc.ok)} steps=${String(doc.steps)}`);
      }
    },
    extremes() {
      const bomb = join(dir, "bomb.tar.gz");
      const refused = (name: string, make: () => Promise<void> | void) => ({
        name,
        async run() {
          await make();
          try {
            const r = await verifyTar(bomb);
            if (!(r instanceof BernsteinError)) throw violation("extreme_accepted", `${name}: verified as ok=${r.ok}`);
            if (opts.bin) await runBinary({ bin: opts.bin, args: ["replay", "verify", bomb, "--as-json"], allowed: [3], timeoutMs: 120_000 });
          } finally {
            rmSync(bomb, { force: true });
          }
        },
      });
      return [
        refused("gzip bomb (1 GiB member of zeros in ~1 MB)", async () => {
          const gz = createGzip({ level: 1 });
          const out = createWriteStream(bomb);
          gz.pipe(out);
          const done = new Promise<void>((res, rej) => {
            out.on("finish", () => res());
            out.on("error", rej);
          });
          gz.write(header({ name: "journal/000000.jsonl", type: "0", data: new Uint8Array(0), declaredSize: 1 << 30 }));
          const zeros = new Uint8Array(1 << 20);
          for (let i = 0; i < 1024; i++) {
            if (!gz.write(zeros)) await new Promise<void>((r) => gz.once("drain", () => r()));
          }
          gz.end();
          await done;
        }),
        refused("a single journal line over the row limit in a receipt (256 MiB + 1 zero bytes: a hole in the file)", () => {
          const size = JOURNAL_MAX_ROW_BYTES + 1;
          const manifest = enc.encode('{"agent_id":"a","head_hash":"x","steps":1}');
          const head = concatBytes(
            buildTar([{ name: "manifest.json", type: "0", data: manifest }], { noTrailer: true }),
            header({ name: "journal/000000.jsonl", type: "0", data: new Uint8Array(0), declaredSize: size }),
          );
          writeFileSync(bomb, head);
          // the member's bytes, their padding and the end-of-archive blocks: zeros, never written
          truncateSync(bomb, head.length + Math.ceil(size / 512) * 512 + 1024);
        }),
        refused("20,000 members", () => {
          const members: TarMember[] = [{ name: "manifest.json", type: "0", data: enc.encode('{"agent_id":"a","head_hash":"x","steps":0}') }];
          for (let i = 0; i < 20_000; i++) members.push({ name: `blobs/${i}`, type: "0", data: new Uint8Array(0) });
          writeFileSync(bomb, buildTar(members));
        }),
      ];
    },
    stats() {
      return { ...stats };
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

