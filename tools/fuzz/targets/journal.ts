import { InputError } from "../../../src/errors/index.ts";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RefusalError } from "../../../src/errors/index.ts";
import { eventHash, payloadHash } from "../../../src/journal/hash.ts";
import { verdictContent } from "../../../src/journal/content.ts";
import { loadEventsSync } from "../../../src/journal/reader.ts";
import { repairJournalTailSync, scanTail } from "../../../src/journal/repair.ts";
import { MAX_LINE_BYTES } from "../../../src/fsutil/lines.ts";
import { verifyJournalSync, verifyRows, type JournalVerifyResult } from "../../../src/journal/verify.ts";
import { contentAddress, gateOfRows, MUTATION_EVENT, type ProviderStateVerdict } from "../../../src/journal/provider-state.ts";
import { followFinished } from "../follow.ts";
import { dumps } from "../../../src/pyjson/encode.ts";
import { parse } from "../../../src/pyjson/parse.ts";
import { pyStr } from "../../../src/pyjson/python.ts";
import { PyNum, type PyValue } from "../../../src/pyjson/types.ts";
import { plainDoc, runBinary } from "../binary.ts";
import { deepNesting, mutateBytes, mutateLines } from "../mutate.ts";
import { SPACINGS, spelledRow } from "../respace.ts";
import { runPythonFile } from "../python.ts";
import type { Rng } from "../rng.ts";
import { linesOf, runJournalVectors } from "../seeds.ts";
import { violation, type FuzzTarget } from "../types.ts";
import { embedJournalRows, journalFacts, journalLines, verifiedInOnePass, type RowSink } from "../../../src/runreceipt/journal-rows.ts";

/**
 * (b) The run-journal verifier. Inputs are journal files mutated from the
 * run-journal vectors (line edits, byte havoc, and re-chained rows that
 * carry hostile payloads under valid hashes). Invariants per case:
 *  - verify never throws on a regular file, and its verdict is
 *    self-consistent (ok = chain && complete, no identity without a seal);
 *  - the streaming verdict equals verify over the loaded rows (count,
 *    discarded lines, divergence, head);
 *  - the parallel engine (when given) returns the identical verdict, and
 *    on a verified journal the provider-state gate of its pass (the verify
 *    kernel's own checks among them) equals the gate over the loaded rows;
 *  - on a verified journal long enough for the verify kernel, `--follow
 *    --as-json`'s fast catch-up (its rows the kernel took copied as their
 *    own bytes) writes what reading row by row writes;
 *  - repair either refuses (middle corruption, file untouched) or cuts a
 *    torn tail after which the journal verifies with complete coverage and
 *    the same chain verdict;
 *  - a run receipt's rows read once (verified and embedded at once) stand
 *    only where the two passes embed the same rows, endpoints, extension
 *    list and facts; where those refuse, the one read left the journal to them.
 * Batched: a sample of the files goes through the Python reference
 * verifier (test/reference/verify_journal.py) in one process per batch,
 * whose verdict must be identical.
 */

/** The fast verify, with the provider-state gate's verdict filled in when asked (FastVerifyOptions.providerStateGate). */
export type ParallelVerify = (path: string, opts?: { maxRowBytes?: number; providerStateGate?: { verdict: ProviderStateVerdict | null } }) => Promise<JournalVerifyResult>;

export interface JournalTargetOptions {
  bin?: string | null;
  /** Path of the Python reference verifier (null: no cross-check). */
  reference?: string | null;
  /** The fast parallel verify engine, compared with the streaming verdict. */
  parallel?: ParallelVerify | null;
  /** Fraction of cases kept for the Python cross-check. */
  referenceSample?: number;
  batchSize?: number;
}

const enc = new TextEncoder();

/** Values that stress hashing: Python float repr, big ints, escapes, key order. */
const HOSTILE_TEXTS = [
  "1.0", "-0.0", "1e-05", "1e+16", "1E5", "1.50", "5e-324", "1e400", "-1e400", "NaN", "Infinity", "123456789012345678901234567890",
  '"\\ud800"', '"\\udc00\\ud800"', '"\\u2028\\u0085\\u007f\\u0000"', '"🚀 задача é"', '"\\/"', '""', "null", "true", "false",
  '{"\\ud83d\\ude00": 1, "\\uffff": 2, "a": [], "A": {}}', '{"b": 1, "a": 1, "b": 2}', "[1, [2, [3, {\"x\": null}]]]",
  deepNesting(500, "mixed"), '"' + "x".repeat(5000) + '"',
];
const HOSTILE_KEYS = ["event", "ts", "index", "elapsed_s", "hash_profile", "payload", "\u00e9", "\ud83d\ude80", "", "a b", "\u2028"];

/**
 * A map of 17 to 300 keys in no order, as a run fills one (coverage by
 * path): keys that share long heads, are heads of one another (a byte
 * below the quote after one), or hold a character Python escapes at any
 * position, so the verify kernel's sort of many keys meets every order.
 */
function manyKeys(rng: Rng): Map<string, PyValue> {
  const heads = ["src/components/widgets/module_", "src/", "s", "docs/R\u00e9sum\u00e9/", "a\u007f", "\ud83d\ude80/", "tests/unit/test_", "\u00e9"];
  const map = new Map<string, PyValue>();
  const n = 17 + rng.int(284);
  for (let i = 0; i < n; i++) {
    const head = rng.pick(heads);
    const key = rng.chance(0.3) ? head.slice(0, 1 + rng.int(head.length)) + rng.pick(["", "!", " ", "~"]) : `${head}${rng.int(10000)}`;
    map.set(key, new PyNum(String(i), false));
  }
  return map;
}

/** Max nesting depth of a text, ignoring strings (Python's reference recurses). */
function maxDepth(bytes: Uint8Array): number {
  let depth = 0;
  let max = 0;
  let inStr = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inStr) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inStr = false;
    } else if (c === 0x22) inStr = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth = Math.max(0, depth - 1);
    else if (c === 0x0a || c === 0x0d) depth = 0;
  }
  return max;
}

/** Members of a provider_state_mutation row as a writer gives them, or any hostile value. */
const MUTATION_MEMBERS = ["after_digest", "before_digest", "mutation_kind", "step_index", "content_address", "flagged"] as const;

/**
 * Make `row` a provider_state_mutation row (the gate of `replay <RUN>
 * --verify` reads it): each member the gate reads a writer's value, a
 * hostile one or absent; its content address mostly the one that checks.
 */
function mutationRow(rng: Rng, row: Map<string, PyValue>): void {
  row.set("event", MUTATION_EVENT);
  for (const name of MUTATION_MEMBERS) {
    const k = rng.int(10);
    if (k < 2) row.delete(name);
    else if (k < 4) row.set(name, parse(rng.pick(HOSTILE_TEXTS)));
    else if (name === "step_index") row.set(name, new PyNum(String(rng.int(1000) - 10), false));
    else if (name === "flagged") row.set(name, rng.pick([false, null, true, new PyNum("0", false), "", "x"]));
    else row.set(name, rng.pick(["ctx", "a".repeat(64), "\u00e9\n\"", `${name}-${rng.int(100)}`]));
  }
  if (rng.chance(0.7)) {
    const address = contentAddress(row);
    if (address !== null) row.set("content_address", rng.chance(0.9) ? address : address.toUpperCase());
  }
}

/** Parse rows, edit payloads with hostile values, recompute every hash: a valid chain of odd rows. */
function rechain(rng: Rng, input: Uint8Array): Uint8Array {
  const rows: Map<string, PyValue>[] = [];
  for (const line of linesOf(input)) {
    try {
      const v = parse(new TextDecoder().decode(line));
      if (v instanceof Map) rows.push(v);
    } catch {
      /* skip */
    }
  }
  // now and then a chain long enough for the verify kernel (it takes ranges of 32 KiB and more): its rows repeated
  if (rng.chance(0.15) && rows.length > 0) {
    const base = rows.slice();
    for (let bytes = 0, i = 0; bytes < 48_000; i++) {
      const row = new Map(base[i % base.length]!);
      rows.push(row);
      bytes += dumps(row).length;
    }
  }
  const edits = 1 + rng.int(4);
  for (let e = 0; e < edits && rows.length; e++) {
    const row = rows[rng.int(rows.length)]!;
    const value = rng.chance(0.2) ? manyKeys(rng) : parse(rng.pick(HOSTILE_TEXTS));
    if (rng.chance(0.25)) {
      mutationRow(rng, row);
      continue;
    }
    switch (rng.int(4)) {
      case 0:
        row.set(rng.pick(HOSTILE_KEYS.filter((k) => k !== "hash_profile")), value);
        break;
      case 1:
        row.set("event", rng.chance(0.5) ? value : rng.pick(["", "x", "\u00e9v\u00e9nement", "run_completed"]));
        break;
      default: {
        const keys = [...row.keys()].filter((k) => !["ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash", "event"].includes(k));
        row.set(keys.length ? rng.pick(keys) : "payload", value);
      }
    }
  }
  // now and then rows in another spacing than the writer's (a journal rewritten by jq -c, say): the kernels take them re-spaced
  const spacing = rng.chance(0.2) ? rng.pick(SPACINGS) : null;
  let prev = "";
  const out: string[] = [];
  rows.forEach((row, i) => {
    const ev = pyStr(row.get("event"), "");
    const ph = payloadHash(ev, row);
    const eh = eventHash(prev, ev, ph, i);
    row.set("prev_hash", prev);
    row.set("payload_hash", ph);
    row.set("event_hash", eh);
    row.set("index", new PyNum(String(i), false));
    prev = eh;
    const rawNumbers = rng.chance(0.5);
    out.push(spelledRow(row, spacing !== null && rng.chance(0.7) ? spacing : null, rawNumbers) + "\n");
  });
  return enc.encode(out.join(""));
}

const COMPARED = ["ok", "chain_consistent", "coverage", "identity", "count", "head", "divergent_index", "expected_hash", "actual_hash", "discarded_line_indices", "errors"] as const;

function sameVerdict(a: Record<string, unknown>, b: Record<string, unknown>, fields: readonly string[] = COMPARED): string | null {
  for (const f of fields) {
    if (JSON.stringify(a[f] ?? null) !== JSON.stringify(b[f] ?? null)) return `${f}: ${JSON.stringify(a[f] ?? null).slice(0, 200)} vs ${JSON.stringify(b[f] ?? null).slice(0, 200)}`;
  }
  return null;
}

/** A journal at least this long is read by the verify kernel (range.ts KERNEL_MIN_BYTES): follow's fast catch-up copies its rows. */
const FOLLOW_KERNEL_BYTES = 32 << 10;

/** `--follow --as-json` of a verified journal that no longer grows: the fast catch-up's bytes against row-by-row reading's; the rows copied as their own bytes. */
async function followJsonAlike(path: string): Promise<number> {
  const fast = await followFinished(path, 0, true);
  const exact = await followFinished(path, Number.POSITIVE_INFINITY, true);
  const [fe, ee] = [fast.result, exact.result];
  if (fe.end !== ee.end || fe.verdict.count !== ee.verdict.count) throw violation("follow_fast_vs_rows", `ended ${fe.end} at ${fe.verdict.count} vs ${ee.end} at ${ee.verdict.count}`);
  if (fast.text !== exact.text) {
    let i = 0;
    while (i < fast.text.length && fast.text[i] === exact.text[i]) i++;
    throw violation("follow_json_fast_vs_rows", `differs at ${i}: ${JSON.stringify(fast.text.slice(i, i + 80))} vs ${JSON.stringify(exact.text.slice(i, i + 80))}`);
  }
  return fast.verbatim;
}

/** A sink that keeps a receipt's rows as text. */
function textSink(): RowSink & { text(t: string): void; all(): string } {
  const parts: string[] = [];
  const dec = new TextDecoder();
  return { bytes: (m, s, e) => void parts.push(dec.decode(m.subarray(s, e))), text: (t) => void parts.push(t), all: () => parts.join("") };
}

/** The receipt rows of `path` read once, against the two passes': a violation, or whether the one read took it. */
async function receiptRowsAlike(path: string): Promise<boolean> {
  const lines = journalLines(path);
  const onceSink = textSink();
  const once = lines === null || lines.count === 0 ? null : await verifiedInOnePass(path, "fuzz", lines, onceSink);
  let twice: { text: string; facts: unknown; endpoints: unknown; extensions: unknown } | "refused";
  try {
    const facts = await journalFacts(path, "fuzz");
    const sink = textSink();
    const rows = await embedJournalRows(path, "fuzz", facts, sink);
    twice = { text: sink.all(), facts, endpoints: rows.endpoints.sorted(), extensions: rows.extensions };
  } catch (err) {
    if (!(err instanceof RefusalError) && !(err instanceof InputError)) throw err;
    twice = "refused";
  }
  if (once === null) return false;
  if (twice === "refused") throw violation("receipt_one_read_over_refusal", "the one read embedded rows the two passes refuse");
  const got = { text: onceSink.all(), facts: once.facts, endpoints: once.rows.endpoints.sorted(), extensions: once.rows.extensions };
  const d = JSON.stringify(got) === JSON.stringify(twice) ? null : `${JSON.stringify(got).slice(0, 200)} vs ${JSON.stringify(twice).slice(0, 200)}`;
  if (d) throw violation("receipt_one_read_vs_two", d);
  return true;
}

export function journalTarget(opts: JournalTargetOptions = {}): FuzzTarget {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-fuzz-journal-"));
  const file = join(dir, "journal.jsonl");
  const copy = join(dir, "repair.jsonl");
  let batch: { file: string; verdict: JournalVerifyResult; input: Uint8Array }[] = [];
  let batchNo = 0;
  let pythonChecked = 0;
  let repairsChecked = 0;
  let parallelChecked = 0;
  let receiptsOneRead = 0;
  let gatesChecked = 0;
  let followsVerbatim = 0;
  const sample = opts.referenceSample ?? 0.25;
  const batchSize = opts.batchSize ?? 400;

  const checkCase = async (input: Uint8Array, path: string): Promise<JournalVerifyResult> => {
    const r = verifyJournalSync(path);
    if (r.identity !== "unverifiable") throw violation("identity_without_seal", `identity ${r.identity}`);
    if (r.ok !== (r.chain_consistent && r.coverage === "complete")) throw violation("ok_inconsistent", JSON.stringify(r).slice(0, 200));
    if ((r.coverage === "complete") !== (r.discarded_line_indices.length === 0)) throw violation("coverage_inconsistent", "coverage vs discards");
    const loaded = loadEventsSync(path);
    if (loaded.events.length !== r.count) throw violation("count_vs_loader", `${loaded.events.length} rows loaded, verdict counts ${r.count}`);
    if (JSON.stringify(loaded.discardedLineIndices) !== JSON.stringify(r.discarded_line_indices)) throw violation("discards_vs_loader", "discarded lines differ");
    const inMemory = verifyRows(loaded.events);
    const d = sameVerdict(inMemory as never, r as never, ["chain_consistent", "divergent_index", "expected_hash", "actual_hash", "head"]);
    if (d) throw violation("stream_vs_rows", d);
    if (opts.parallel) {
      const gate: { verdict: ProviderStateVerdict | null } = { verdict: null };
      const p = await opts.parallel(path, { providerStateGate: gate });
      parallelChecked++;
      const diff = sameVerdict(p as never, r as never);
      if (diff) throw violation("single_vs_parallel", diff);
      const want = r.ok ? JSON.stringify(gateOfRows(loaded.events)) : "null";
      if (JSON.stringify(gate.verdict) !== want) throw violation("gate_vs_rows", `${JSON.stringify(gate.verdict).slice(0, 200)} vs ${want.slice(0, 200)}`);
      if ((gate.verdict?.mutations ?? 0) > 0) gatesChecked++;
    }
    if (await receiptRowsAlike(path)) receiptsOneRead++;
    if (r.ok && input.length >= FOLLOW_KERNEL_BYTES) followsVerbatim += await followJsonAlike(path);
    // Repair: refuse middle corruption untouched, or cut a torn tail only.
    if (r.discarded_line_indices.length) {
      repairsChecked++;
      copyFileSync(path, copy);
      const before = readFileSync(copy);
      const scan = scanTail(copy);
      try {
        const rep = repairJournalTailSync(copy);
        if (!scan.tornTail) throw violation("repair_middle", "repair cut a journal whose discards are not a torn tail");
        const after = verifyJournalSync(copy);
        if (after.coverage !== "complete") throw violation("repair_incomplete", "coverage still partial after repair");
        if (after.count !== r.count || after.chain_consistent !== r.chain_consistent || after.head !== r.head) {
          throw violation("repair_changed_chain", `before ${r.count}/${r.head} after ${after.count}/${after.head}`);
        }
        if (!rep.repaired) throw violation("repair_noop", "torn tail not repaired");
        if (!before.subarray(0, readFileSync(copy).length).equals(readFileSync(copy))) throw violation("repair_rewrote", "repair changed bytes before the cut");
      } catch (err) {
        if (!(err instanceof RefusalError)) throw err;
        if (scan.tornTail) throw violation("repair_refused_torn_tail", err.message);
        if (!readFileSync(copy).equals(before)) throw violation("repair_refusal_touched_file", "file changed although repair refused");
      }
    }
    return r;
  };

  return {
    name: "journal",
    seeds() {
      const out: Uint8Array[] = [];
      for (const v of runJournalVectors()) {
        out.push(v.bytes);
        // Short prefixes: faster cases, and the chain still starts at genesis.
        const lines = linesOf(v.bytes);
        for (const n of [1, 2, 5, 12]) out.push(enc.encode(lines.slice(0, n).map((l) => new TextDecoder().decode(l)).join("\n") + "\n"));
      }
      return out;
    },
    mutate(rng, seeds) {
      const base = rng.pick(seeds);
      const k = rng.int(10);
      if (k < 4) return mutateLines(rng, base, { corpus: seeds, maxBytes: 1 << 20 });
      if (k < 7) return mutateBytes(rng, base, { corpus: seeds, maxBytes: 1 << 20 });
      const chained = rechain(rng, base);
      return rng.chance(0.5) ? chained : mutateLines(rng, chained, { maxBytes: 1 << 20 });
    },
    async run(input, rng) {
      writeFileSync(file, input);
      const verdict = await checkCase(input, file);
      if (opts.reference && rng.chance(sample) && maxDepth(input) < 800 && !input.includes(0) && !new TextDecoder().decode(input).includes("hash_profile")) {
        const kept = join(dir, `ref-${batchNo}-${batch.length}.jsonl`);
        writeFileSync(kept, input);
        batch.push({ file: kept, verdict, input });
      }
    },
    async runBinary(input) {
      writeFileSync(file, input);
      const lib = verifyJournalSync(file);
      // No verdict on a file with no journal row (issue 29); an empty one is verified as 0 events under --allow-empty.
      if (verdictContent(lib, file) === "foreign") {
        const refused = await runBinary({ bin: opts.bin!, args: ["journal", "verify", file, "--allow-empty", "--as-json"], allowed: [3] });
        const error = (plainDoc(refused.doc) as Record<string, unknown>).error;
        if (error !== "not_a_journal") throw violation("binary_not_a_journal", `error ${String(error)}`);
        return;
      }
      const r = await runBinary({ bin: opts.bin!, args: ["journal", "verify", file, "--allow-empty", "--as-json"], allowed: [0, 1] });
      const doc = plainDoc(r.doc) as Record<string, unknown>;
      const asText = (v: unknown): unknown => (typeof v === "number" ? String(v) : Array.isArray(v) ? v.map(asText) : v);
      const libDoc = Object.fromEntries(Object.entries(lib).map(([k, v]) => [k, asText(v)]));
      const d = sameVerdict(doc, libDoc, ["ok", "coverage", "count", "head", "divergent_index", "discarded_line_indices", "errors"]);
      if (d) throw violation("binary_vs_library", d);
      if (r.code !== (lib.ok ? 0 : 1)) throw violation("binary_exit_vs_verdict", `exit ${r.code} for ok=${lib.ok}`);
      // Repair through the CLI on a run layout: 0 (repaired / nothing) or 2 (refused).
      const sdd = join(dir, "sdd");
      mkdirSync(join(sdd, "runs", "fuzz-run"), { recursive: true });
      writeFileSync(join(sdd, "runs", "fuzz-run", "journal.jsonl"), input);
      const rep = await runBinary({ bin: opts.bin!, args: ["replay", "repair", "fuzz-run", "--sdd-dir", sdd, "--as-json"], allowed: [0, 2] });
      if (rep.code === 0 && verifyJournalSync(join(sdd, "runs", "fuzz-run", "journal.jsonl")).coverage !== "complete") {
        throw violation("binary_repair_incomplete", "replay repair exited 0 but coverage is still partial");
      }
      rmSync(sdd, { recursive: true, force: true });
    },
    extremes() {
      const big = join(dir, "extreme.jsonl");
      const expectDiscarded = (name: string, write: () => void, note: RegExp | null) => ({
        name,
        async run() {
          write();
          try {
            const r = verifyJournalSync(big);
            if (r.coverage !== "partial" || r.discarded_line_indices[0] !== 0) throw violation("extreme_verdict", `${name}: not discarded (${JSON.stringify(r.errors)})`);
            if (note && !r.errors.some((e) => note.test(e))) throw violation("extreme_message", `${name}: no clear error in ${JSON.stringify(r.errors)}`);
            if (opts.parallel) {
              const p = await opts.parallel(big);
              const diff = sameVerdict(p as never, r as never);
              if (diff) throw violation("single_vs_parallel", `${name}: ${diff}`);
            }
            // A file of nothing but the discarded line holds no journal row: not_a_journal (exit 3); beside rows, coverage_partial (1).
            if (opts.bin) await runBinary({ bin: opts.bin, args: ["journal", "verify", big, "--as-json"], allowed: [r.count === 0 ? 3 : 1], timeoutMs: 60_000 });
          } finally {
            rmSync(big, { force: true });
          }
        },
      });
      /** A row past the row limit refuses the input (`row_too_large`, exit 3) in every verifier alike. */
      const expectRowTooLarge = (name: string, write: () => void) => ({
        name,
        async run() {
          write();
          try {
            const refusal = async (f: () => unknown) => {
              try {
                await f();
              } catch (err) {
                if (err instanceof InputError && err.code === "row_too_large" && err.facts.line === 1) return;
                throw err;
              }
              throw violation("extreme_verdict", `${name}: not refused as row_too_large`);
            };
            // The old 16 MiB limit, set explicitly (verify's default is 256 MiB): a longer row is refused alike everywhere.
            await refusal(() => verifyJournalSync(big, { maxLineBytes: MAX_LINE_BYTES }));
            if (opts.parallel) await refusal(() => opts.parallel!(big, { maxRowBytes: MAX_LINE_BYTES }));
            if (opts.bin) await runBinary({ bin: opts.bin, args: ["journal", "verify", big, "--as-json", "--max-row-bytes", "16M"], allowed: [3], timeoutMs: 60_000 });
          } finally {
            rmSync(big, { force: true });
          }
        },
      });
      return [
        expectRowTooLarge("100 MB single line", () => {
          const row = Buffer.alloc(100 * 1024 * 1024, 0x61);
          row.write('{"event": "x", "blob": "', 0);
          row.write('"}\n', row.length - 3);
          writeFileSync(big, row);
        }),
        expectDiscarded("100,000-deep nesting row", () => writeFileSync(big, deepNesting(100_000, "mixed") + "\n"), null),
      ];
    },
    async flush() {
      if (!opts.reference || batch.length === 0) return [];
      const out: { input: Uint8Array; error: Error }[] = [];
      while (batch.length) {
        const part = batch.slice(0, batchSize);
        batch = batch.slice(batchSize);
        const files = part.map((b) => b.file);
        // A single file prints an object, several an array.
        if (files.length === 1) files.push(files[0]!);
        const r = await runPythonFile(opts.reference, files);
        if (r.code !== 0 && r.code !== 1) throw new Error(`reference verifier failed: ${r.stderr.slice(0, 500)}`);
        const verdicts = JSON.parse(r.stdout) as Record<string, unknown>[];
        pythonChecked += part.length;
        part.forEach((b, i) => {
          const d = sameVerdict(b.verdict as never, verdicts[i]!, COMPARED.filter((f) => f !== "errors"));
          const ourErrors = (b.verdict.errors as string[]).filter((e) => !e.includes("refused unread"));
          const e2 = d ?? sameVerdict({ errors: ourErrors }, verdicts[i]!, ["errors"]);
          if (e2) out.push({ input: b.input, error: violation("python_reference", e2) });
          rmSync(b.file, { force: true });
        });
      }
      batchNo++;
      return out;
    },
    stats() {
      return { python_checked: pythonChecked, repairs_checked: repairsChecked, parallel_checked: parallelChecked, receipts_read_once: receiptsOneRead, gates_with_mutations: gatesChecked, follow_rows_verbatim: followsVerbatim };
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
