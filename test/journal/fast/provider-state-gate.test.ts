/**
 * The provider-state gate, run inside the verify's own pass (range.ts with
 * `providerState`), gives the reference's verdict (python3 reading the
 * journal as the spec says: test/helpers/provider-state-oracle.ts): the same
 * mutation count, flagged rows and messages, whatever the split into
 * ranges, threads and read chunks, the line breaks, blank lines, escapes,
 * Python's truthiness of `flagged`, or rows too long for the read area or
 * the kernel.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyJournalFast, type FastVerifyOptions } from "../../../src/journal/fast/engine.ts";
import { contentAddress, type ProviderStateVerdict } from "../../../src/journal/provider-state.ts";
import type { JournalRow } from "../../../src/journal/reader.ts";
import { EventJournal } from "../../../src/journal/writer.ts";
import { PyNum, type PyLike, type PyValue } from "../../../src/pyjson/types.ts";
import { referenceGates } from "../../helpers/provider-state-oracle.ts";
import { tempDirs } from "../tmp.ts";
import { prng } from "./rows.ts";

const dirs = tempDirs("provider-gate");
afterAll(() => dirs.cleanup());

const CONFIGS: FastVerifyOptions[] = [
  { threads: 1 },
  { threads: 2, minRangeBytes: 1 },
  { threads: 3, minRangeBytes: 1, inProcess: true, chunkSize: 97 },
  { threads: 5, minRangeBytes: 1, inProcess: true, chunkSize: 4096 },
  // links-only: the kernel takes rows without hashing them, the gate the same
  { threads: 3, minRangeBytes: 1, inProcess: true, chunkSize: 997, linksOnly: true },
];

/** `flagged` values Python counts as true, and as false. */
const TRUTHY: PyLike[] = [true, "false", 1, [0], 0.5];
const FALSY: PyLike[] = [false, 0, "", [], null];

/** A mutation row's payload: clean (its content address right), mismatched, flagged, or with a step_index that is no integer. */
function mutation(kind: "clean" | "mismatch" | "flagged" | "not-int", i: number, pad: string): Record<string, PyLike> {
  const fields = { mutation_kind: `compact_${i}`, before_digest: "b".repeat(64), after_digest: `a${i}`, step_index: kind === "not-int" ? "x" : i };
  const address = contentAddress(new Map(Object.entries({ ...fields, step_index: kind === "not-int" ? "x" : new PyNum(String(i), false) })) as JournalRow);
  const flagged = (kind === "flagged" ? TRUTHY : FALSY)[i % 5]!;
  return { ...fields, content_address: kind === "mismatch" ? "0".repeat(64) : address, flagged, pad };
}

/** `long`: the pad's length of the rows it names (others: under 600 bytes). */
function writeRun(dir: string, rows: number, seed: number, long: Record<number, number> = {}): string {
  const r = prng(seed);
  const j = EventJournal.create("gate", { sddDir: join(dir, "sdd") });
  try {
    for (let i = 0; i < rows; i++) {
      const pad = "p".repeat(long[i] ?? Math.floor(r() * 600));
      const x = r();
      if (x < 0.04) j.record("provider_state_mutation", mutation(["clean", "mismatch", "flagged", "not-int"][i % 4] as "clean", i, pad));
      else if (x < 0.06) j.record("task_completed", { note: "provider_state_mutation", flagged: true, pad });
      // escapes a printable-escape probe must pass over: é, 中, 🚀, a control character, DEL
      else j.record("tick", { n: i, f: r() * 1e6, text: "é中🚀\x1b[0m\x7f", pad });
    }
  } finally {
    j.close();
  }
  return join(dir, "sdd", "runs", "gate", "journal.jsonl");
}

async function expectSameGate(path: string, configs = CONFIGS): Promise<ProviderStateVerdict> {
  const [want] = referenceGates([path]);
  for (const cfg of configs) {
    const gate: FastVerifyOptions["providerStateGate"] = { verdict: null };
    const v = await verifyJournalFast(path, { ...cfg, providerStateGate: gate });
    expect({ cfg, ok: v.ok }).toEqual({ cfg, ok: true });
    expect({ cfg, gate: gate.verdict }).toEqual({ cfg, gate: want });
  }
  return want!;
}

describe("the provider-state gate in the verify's pass = the reference's", () => {
  test("mixed rows, every kind of finding, across ranges, threads and chunks", async () => {
    const path = writeRun(dirs.make(), 3000, 1);
    const v = await expectSameGate(path);
    expect(v.mutations).toBeGreaterThan(80);
    expect(v.flagged_steps.length).toBeGreaterThan(20);
    expect(v.errors.some((e) => e.endsWith("step_index is not an integer"))).toBe(true);
    expect(v.errors.some((e) => e.endsWith("content address mismatch"))).toBe(true);
  }, 60_000);

  test("CRLF and CR line breaks, blank and whitespace lines, escaped spellings of the event's name and of other text", async () => {
    const dir = dirs.make();
    const base = readFileSync(writeRun(dir, 1500, 2), "utf8").split("\n").slice(0, -1);
    // escapes keep every parsed value, so the chain still verifies: the kernel declines such rows, the exact path takes them
    const lines = base.map((l, i) =>
      i % 5 === 0
        ? l.replace('"provider_state_mutation"', '"provider\\u005fstate\\u005Fmutation"')
        : i % 7 === 0
          ? l.replace('"tick"', '"\\u0074ick"')
          : l.replace("\\u00e9", "\\u00E9"), // an uppercase escape of a non-printable: the same value, no candidate
    );
    expect(lines.join("\n")).toContain("provider\\u005fstate");
    const breaks = ["\n", "\r\n", "\r", "\n\n", "\r\n \t\r\n"];
    for (const [name, text] of [
      ["crlf", lines.join("\r\n") + "\r\n"],
      ["cr", lines.join("\r") + "\r"],
      ["mixed", lines.map((l, i) => l + breaks[(i * 3) % breaks.length]).join("")],
      ["unterminated", lines.join("\n")],
    ] as const) {
      const path = join(dir, `${name}.jsonl`);
      writeFileSync(path, text);
      const v = await expectSameGate(path);
      expect([name, v.mutations > 30]).toEqual([name, true]);
    }
  }, 60_000);

  test("mutation rows longer than the read area and than the kernel, among short ones", async () => {
    const dir = dirs.make();
    // 300 KB rows pass the 256 KiB read area (a kernel sized to the row); a 9 MB one the kernel's largest (the exact path)
    const long: Record<number, number> = { 200: 9_000_000 };
    for (const i of [10, 11, 40, 41, 42, 43, 44, 45, 46, 47, 399]) long[i] = 300_000;
    const path = writeRun(dir, 400, 3, long);
    const v = await expectSameGate(path, CONFIGS.slice(0, 3));
    expect(v.mutations).toBeGreaterThan(5);
  }, 60_000);

  test("the members the content address reads, in every shape a row may give them: the kernel's checks = the reference's", async () => {
    const dir = dirs.make();
    const r = prng(5);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    // absent (undefined), strings the writer escapes, and values whose str() is not their JSON
    const TEXTS: (PyLike | undefined)[] = [undefined, "ctx", "a".repeat(64), "é中🚀", 'q"uote\\back', "tab\tnl\n\x01", "", new PyNum("7", false), new PyNum("2.5", true), null, true, [1, "x"], new Map<string, PyValue>([["k", new PyNum("1", false)]])];
    const STEPS: (PyLike | undefined)[] = [undefined, ...[0, 12, -3].map((n) => new PyNum(String(n), false)), new PyNum("123456789012345678901234567890", false), new PyNum("4.0", true), new PyNum("-0.5", true), "7", " 8 ", "x", true, null, [1]];
    const FLAGS: (PyLike | undefined)[] = [undefined, false, null, false, null, 0, "", true, 1, "no"];
    const j = EventJournal.create("shapes", { sddDir: join(dir, "sdd") });
    let written = 0;
    try {
      for (let i = 0; i < 1200; i++) {
        if (r() < 0.3) {
          j.record("tick", { n: i });
          continue;
        }
        const fields: Record<string, PyLike> = {};
        for (const [name, pool] of [["after_digest", TEXTS], ["before_digest", TEXTS], ["mutation_kind", TEXTS], ["step_index", STEPS]] as const) {
          // mostly the shapes a writer gives (a string, an integer), every other shape now and then
          const v = r() < 0.6 ? (name === "step_index" ? new PyNum(String(i), false) : `${name}-${i}`) : pick(pool);
          if (v !== undefined) fields[name] = v;
        }
        const flagged = r() < 0.6 ? pick(FLAGS.slice(0, 3)) : pick(FLAGS);
        if (flagged !== undefined) fields.flagged = flagged;
        let address: string | null = null;
        try {
          address = contentAddress(new Map(Object.entries(fields)) as JournalRow);
        } catch {
          address = null;
        }
        const a = r();
        if (a < 0.6 && address !== null) fields.content_address = address;
        else if (a < 0.7 && address !== null) fields.content_address = address.toUpperCase();
        else if (a < 0.8) fields.content_address = "0".repeat(64);
        else if (a < 0.9) fields.content_address = pick([null, 5, ["x"]]) as PyLike;
        // else: absent
        j.record("provider_state_mutation", fields);
        written++;
      }
    } finally {
      j.close();
    }
    const path = join(dir, "sdd", "runs", "shapes", "journal.jsonl");
    const v = await expectSameGate(path);
    expect(v.mutations).toBe(written);
    expect(v.errors.some((e) => e.endsWith("content address mismatch"))).toBe(true);
    // and many clean ones: their addresses recompute
    const withFindings = new Set(v.errors.map((e) => e.split(":")[0]));
    expect(v.mutations - withFindings.size).toBeGreaterThan(150);
    // the rows are the writer's: the kernel takes them (and checks most of their addresses itself), all but
    // the first, whose empty prev_hash is the exact path's
    const all = await verifyJournalFast(path, { threads: 1, providerStateGate: { verdict: null } });
    expect(all.rows_by_path).toEqual({ kernel: all.count - 1, exact: 1, respaced: 0, declined_at: [0] });
  }, 60_000);

  test("a chain that does not verify is not gated (its verdict is the divergence)", async () => {
    const dir = dirs.make();
    const path = writeRun(dir, 500, 4);
    writeFileSync(path, readFileSync(path, "utf8").replace('"n": 3,', '"n": 4,'));
    const gate: FastVerifyOptions["providerStateGate"] = { verdict: null };
    const v = await verifyJournalFast(path, { threads: 2, minRangeBytes: 1, providerStateGate: gate });
    expect([v.ok, gate.verdict]).toEqual([false, null]);
  });
});
