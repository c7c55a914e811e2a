import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pack as tarPack } from "tar-stream";
import { BernsteinError } from "../../src/errors/index.ts";
import { exportReceipt, publishReceipt } from "../../src/receipts/export.ts";
import { diffJournals } from "../../src/receipts/diff.ts";
import { diffJournalSources } from "../../src/receipts/diff-fast.ts";
import { sourceEntries, type JournalSource } from "../../src/receipts/source.ts";
import { bytesMember, memberSpan, PlacedTarWriter, ustarHeader, writeTarAtomic } from "../../src/receipts/tarwrite.ts";
import { renderJson } from "../../src/render/json.ts";
import { writeAgentEntriesJson } from "../../src/replay/agent-json.ts";
import { setStepKernelEnabled, stepKernelStats } from "../../src/steps/kernel.ts";
import { verifyAgentJournal } from "../../src/steps/verify.ts";
import { VECTORS } from "../helpers/cli.ts";
import { journalBytes, writeAgentJournal } from "../helpers/step-journals.ts";

/**
 * The fast paths of the step-journal verbs (the step kernel's dict-form
 * and report modes, the byte redactor, the byte renderer, the line-level
 * diff) against the exact path they replace, which is what runs with the
 * kernel off: byte-identical receipts, JSON documents and diff verdicts
 * on the shared vectors and on generated hostile journals.
 */

const tmp = mkdtempSync(join(tmpdir(), "steps-fast-"));
afterAll(() => {
  setStepKernelEnabled(true);
  setSystemTime();
  rmSync(tmp, { recursive: true, force: true });
});

const sdd = join(tmp, "sdd");
const AGENTS: string[] = [];
beforeAll(() => {
  cpSync(join(VECTORS, "agent-journal", "sdd"), sdd, { recursive: true });
  AGENTS.push(...readdirSync(join(sdd, "runtime", "journal")));
  const gen: [string, Parameters<typeof journalBytes>[0]][] = [
    ["gen-mixed", { rows: 2500, seed: 7 }],
    ["gen-huge", { rows: 400, seed: 11, hugeAt: 150 }],
    ["gen-plain", { rows: 6000, seed: 3, plain: true }],
    ["gen-nan", { rows: 300, seed: 5, nanAt: 120 }],
    ["gen-ts", { rows: 3000, seed: 13, plain: true, hostileTs: true }],
  ];
  for (const [id, o] of gen) {
    writeAgentJournal(sdd, id, journalBytes(o));
    AGENTS.push(id);
  }
  // a broken chain (one row edited) and a journal with a garbage line: refused alike
  const plain = journalBytes({ rows: 3000, seed: 9, plain: true }).split("\n");
  plain[2000] = plain[2000]!.replace('"ok":true', '"ok":false');
  writeAgentJournal(sdd, "gen-broken", plain.join("\n"));
  writeAgentJournal(sdd, "gen-garbage", journalBytes({ rows: 50, seed: 4, plain: true }) + "{not json\n");
  writeAgentJournal(sdd, "gen-empty", "");
  // Python's text mode on Windows: CR LF line ends; and a few rows ended by a lone CR, or by CR CR LF (a row, then a blank line)
  const windows = journalBytes({ rows: 3000, seed: 9, plain: true }).split("\n");
  writeAgentJournal(sdd, "gen-crlf", windows.join("\r\n"));
  writeAgentJournal(sdd, "gen-crlf-odd", windows.map((l, i) => (i % 97 === 40 ? `${l}${i % 2 ? "\r" : "\r\r\n"}` : `${l}\r\n`)).join(""));
  AGENTS.push("gen-broken", "gen-garbage", "gen-empty", "gen-crlf", "gen-crlf-odd");
}, 60_000);

/** Run `f` with the kernel on or off, at a fixed clock (receipts carry a time). */
async function both<T>(f: (kernel: boolean) => Promise<T>): Promise<[T | string, T | string, number]> {
  const run = async (on: boolean) => {
    setStepKernelEnabled(on);
    setSystemTime(new Date("2026-03-04T05:06:07Z"));
    try {
      return await f(on);
    } catch (err) {
      if (err instanceof BernsteinError) return `${err.code}: ${err.message}`;
      throw err;
    } finally {
      setSystemTime();
      setStepKernelEnabled(true);
    }
  };
  const exact = await run(false);
  const before = stepKernelStats.rows;
  const fast = await run(true);
  return [exact, fast, stepKernelStats.rows - before];
}

const bytesOf = (p: string) => {
  try {
    return readFileSync(p);
  } catch {
    return null;
  }
};

describe("export and publish: the same receipt bytes with the kernel on and off", () => {
  const cases: [string, (id: string, out: string) => Promise<unknown>][] = [
    ["export", (id, out) => exportReceipt({ sddDir: sdd, agentId: id, out, force: true })],
    ["publish", (id, out) => publishReceipt({ sddDir: sdd, agentId: id, out, force: true })],
    ["publish --redact model,tool_call", (id, out) => publishReceipt({ sddDir: sdd, agentId: id, out, force: true, redact: ["model", "tool_call"] })],
  ];
  for (const [verb, f] of cases) {
    test(verb, async () => {
      for (const id of AGENTS) {
        const a = join(tmp, `${id}-a.tar`);
        const b = join(tmp, `${id}-b.tar`);
        const [exact, fast, rows] = await both(async (kernel) => {
          const out = kernel ? b : a;
          const r = await f(id, out);
          return { ...(r as object), path: "" };
        });
        expect({ id, out: fast }).toEqual({ id, out: exact });
        expect({ id, bytes: bytesOf(b) }).toEqual({ id, bytes: bytesOf(a) });
        // the fast path ran where it could (the plain journal is all kernel rows)
        if (id === "gen-plain") expect(rows).toBeGreaterThan(5900);
        if (id === "gen-crlf") expect(rows).toBeGreaterThan(2900);
        // and took the rows whose ts is spelled as repr, and only those (the rest re-spell it)
        if (id === "gen-ts") expect(rows).toBeGreaterThan(600);
        if (id === "gen-ts") expect(rows).toBeLessThan(2900);
      }
    }, 120_000);
  }
});

describe("agent view --as-json: the same entries with the kernel on and off", () => {
  test("every journal, whole and with --limit", async () => {
    for (const id of AGENTS) {
      for (const limit of [null, 0, 1, 37]) {
        const [exact, fast] = await both(async () => {
          const v = await verifyAgentJournal(sdd, id);
          const chunks: Uint8Array[] = [];
          const n = await writeAgentEntriesJson(v.bucket, limit, { write: async (b) => void chunks.push(b.slice()), writeSync: (b) => void chunks.push(b.slice()) });
          return { v, n, text: Buffer.concat(chunks).toString("utf8") };
        });
        expect({ id, limit, out: fast }).toEqual({ id, limit, out: exact });
      }
    }
  }, 120_000);
});

/** The lines with every step's `ts` changed (and its spelling: more digits). */
function retimed(lines: string[]): string[] {
  return lines.map((l) => l.replace(/"ts":(-?[0-9.eE+-]+)/, (_, t: string) => `"ts":${Number(t) + 1000.0625}`));
}

describe("diff-journal: the same verdict from bytes as from parsed entries", () => {
  test("pairs of journals and receipts", async () => {
    const bucket = (id: string) => join(sdd, "runtime", "journal", id, "000000.jsonl");
    const file = (p: string): JournalSource => ({ kind: "file", path: p });
    const lines = readFileSync(bucket("gen-mixed"), "utf8").split("\n");
    const variants: Record<string, string> = {
      changed: lines.map((l, i) => (i === 1700 ? l.replace('"in-', '"IN-') : l)).join("\n"),
      shorter: lines.slice(0, 1200).join("\n"),
      longer: lines.join("\n") + "\n" + lines.slice(0, 3).join("\n"),
      crlf: lines.join("\r\n"),
      blanks: lines.join("\n\n"),
    };
    // the same steps written at other times (ts is outside the hash): every line differs, no entry; on canonical rows
    // (gen-plain) the compared fields are compared as bytes
    const plain = readFileSync(bucket("gen-plain"), "utf8").split("\n");
    const retimedVariants: Record<string, string[]> = {
      retimed: retimed(plain),
      "retimed and changed": retimed(plain).map((l, i) => (i === 1700 ? l.replace('"in-', '"IN-') : l)),
      // equal under Python's == though spelled otherwise (True == 1): the exact comparison says so
      "retimed, respelled": retimed(plain).map((l, i) => (i % 50 === 7 ? l.replace(/:true([,}])/g, ":1$1") : l)),
      "nan retimed": retimed(readFileSync(bucket("gen-nan"), "utf8").split("\n")),
    };
    for (const [name, rows] of Object.entries(retimedVariants)) writeFileSync(join(tmp, `${name}.jsonl`), rows.join("\n"));
    const changed1700 = await diffJournalSources(file(bucket("gen-plain")), file(join(tmp, "retimed and changed.jsonl")));
    expect([changed1700.diverged, changed1700.diverged && changed1700.seq]).toEqual([true, 1700]);
    for (const [name, text] of Object.entries(variants)) writeFileSync(join(tmp, `${name}.jsonl`), text);
    await exportReceipt({ sddDir: sdd, agentId: "gen-plain", out: join(tmp, "plain.tar"), force: true });
    await exportReceipt({ sddDir: sdd, agentId: "gen-mixed", out: join(tmp, "mixed.tar"), force: true });
    const pairs: [JournalSource, JournalSource][] = [
      [file(bucket("gen-mixed")), file(bucket("gen-mixed"))],
      ...Object.keys(variants).flatMap((n): [JournalSource, JournalSource][] => [
        [file(bucket("gen-mixed")), file(join(tmp, `${n}.jsonl`))],
        [file(join(tmp, `${n}.jsonl`)), file(bucket("gen-mixed"))],
      ]),
      [{ kind: "receipt", path: join(tmp, "plain.tar") }, file(bucket("gen-plain"))],
      [{ kind: "receipt", path: join(tmp, "mixed.tar") }, file(bucket("gen-mixed"))],
      [{ kind: "receipt", path: join(VECTORS, "agent-journal", "agent-a.tar") }, { kind: "receipt", path: join(VECTORS, "agent-journal", "agent-a.published.tar") }],
      [file(bucket("gen-nan")), file(bucket("gen-nan"))],
      [file(bucket("gen-nan")), file(join(tmp, "nan retimed.jsonl"))],
      ...["retimed", "retimed and changed", "retimed, respelled"].flatMap((n): [JournalSource, JournalSource][] => [
        [file(bucket("gen-plain")), file(join(tmp, `${n}.jsonl`))],
        [file(join(tmp, `${n}.jsonl`)), file(bucket("gen-plain"))],
      ]),
      [file(bucket("gen-huge")), file(bucket("gen-huge"))],
      [file(bucket("gen-empty")), file(bucket("gen-plain"))],
      [file(bucket("gen-garbage")), file(bucket("gen-plain"))],
      ...AGENTS.filter((a) => a.startsWith("agent-")).map((a): [JournalSource, JournalSource] => [file(bucket(a)), file(bucket("agent-a"))]),
    ];
    for (const [l, r] of pairs) {
      const exact = renderJson(await diffJournals(sourceEntries(l), sourceEntries(r)));
      const fast = renderJson(await diffJournalSources(l, r));
      expect({ l: l.path, r: r.path, out: fast }).toEqual({ l: l.path, r: r.path, out: exact });
    }
  }, 120_000);
});

describe("tar members are written as tar-stream wrote them", () => {
  test("ustar headers byte for byte", async () => {
    const mtime = new Date("2026-03-04T05:06:07Z");
    for (const [name, size] of [["manifest.json", 313], ["manifest.sig", 88], ["journal/000000.jsonl", 60_403_747], ["journal/000000.jsonl", 0], ["journal/000000.jsonl", 9 * 2 ** 30]] as const) {
      const p = tarPack();
      const chunks: Buffer[] = [];
      p.on("data", (c: unknown) => void chunks.push(c as Buffer));
      p.entry({ name, size, mode: 0o600, mtime, uid: 0, gid: 0, uname: "", gname: "", type: "file" });
      await new Promise((r) => setImmediate(r));
      expect(Buffer.from(ustarHeader(name, size, 0o600, mtime))).toEqual(Buffer.concat(chunks).subarray(0, 512));
      p.destroy();
    }
  });
});

describe("publish's placed writer: the layout of the sequential writer whatever room it reserved", () => {
  test("a right, too small and too large reservation, data of 0 bytes to several move chunks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "placed-tar-"));
    setSystemTime(new Date("2026-03-04T05:06:07Z"));
    try {
      for (const dataSize of [0, 1, 511, 512, 9 * 2 ** 20 + 77]) {
        const data = new Uint8Array(dataSize).map((_, i) => (i * 31 + 7) & 0xff);
        const heads = [
          { name: "manifest.json", bytes: new TextEncoder().encode("m".repeat(700)) },
          { name: "manifest.sig", bytes: new TextEncoder().encode("s".repeat(88)) },
        ];
        const want = join(dir, "want.tar");
        await writeTarAtomic(want, [...heads.map((h) => bytesMember(h.name, h.bytes)), bytesMember("journal/000000.jsonl", data)]);
        const right = heads.reduce((n, h) => n + memberSpan(h.bytes.length), 0);
        for (const reserve of [right, 0, right - 512, right + 512, right + 5 * 2 ** 20]) {
          const out = join(dir, `got-${reserve}.tar`);
          const w = new PlacedTarWriter(out, {}, reserve);
          // in pieces, as publish's scan writes them
          for (let off = 0; off < data.length; off += 300_001) w.write(data.subarray(off, off + 300_001));
          await w.finish(heads, "journal/000000.jsonl");
          expect({ dataSize, reserve, same: readFileSync(out).equals(readFileSync(want)) }).toEqual({ dataSize, reserve, same: true });
        }
      }
      // a discarded writer leaves neither its temp file nor the directories it made
      const w = new PlacedTarWriter(join(dir, "new", "deeper", "r.tar"), {}, 1024);
      w.write(new Uint8Array(10));
      await w.discard();
      expect(readdirSync(dir).sort()).not.toContain("new");
    } finally {
      setSystemTime();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
