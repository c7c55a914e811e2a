/** repairJournalTail (§8): only a torn trailing fragment is cut; everything else is refused untouched. */
import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireLock } from "../../src/fsutil/lock.ts";
import { repairJournalTail, scanTail } from "../../src/journal/index.ts";
import { VECTORS } from "../helpers/cli.ts";
import { tempDirs } from "./tmp.ts";

const dirs = tempDirs("repair");
afterAll(() => dirs.cleanup());
const HAZARDS = join(VECTORS, "run-journal");

function copyOf(name: string): string {
  const p = join(dirs.make(), "journal.jsonl");
  copyFileSync(join(HAZARDS, `${name}.jsonl`), p);
  return p;
}

describe("repairJournalTail", () => {
  test("torn-tail vector: truncated to the byte-exact prefix, head of the survivors", async () => {
    const p = copyOf("hazards-torn-tail");
    const before = readFileSync(p);
    const r = await repairJournalTail(p);
    expect(r).toMatchObject({
      repaired: true,
      removed_line_indices: [299],
      event_count: 299,
      head: "612c0421d5ed3d3fb1e0793f678ca78b8d2457f6766db3aa7d06b9e13b62858a",
    });
    const after = readFileSync(p);
    expect(Buffer.compare(after, before.subarray(0, after.length))).toBe(0);
    // the fragment is kept beside the journal, byte for byte
    expect(r.saved_fragment).toStartWith(`${p}.torn-`);
    expect(Buffer.compare(readFileSync(r.saved_fragment!), before.subarray(after.length))).toBe(0);
    expect(r.removed_bytes).toBe(before.length - after.length);
    expect(after[after.length - 1]).toBe(0x0a);
    expect(await repairJournalTail(p)).toMatchObject({ repaired: false, event_count: 299 });
  });

  test("a clean journal is a no-op", async () => {
    const p = copyOf("chain-4");
    const before = readFileSync(p);
    expect(await repairJournalTail(p)).toEqual({
      repaired: false,
      removed_line_indices: [],
      event_count: 4,
      head: "beb8b92285cb2d3e5f1a4fc30b1024fb9848da6105bbada9fa19fb0933847f71",
    });
    expect(Buffer.compare(readFileSync(p), before)).toBe(0);
  });

  test("middle corruption is refused without touching the file", async () => {
    for (const name of ["hazards-junk-line-middle", "hazards-invalid-utf8-row", "hazards-non-object-row"]) {
      const p = copyOf(name);
      const before = readFileSync(p);
      const err = await repairJournalTail(p).catch((e) => e);
      expect(err).toMatchObject({ code: "repair_refused", exitCode: 2 });
      expect(err.message).toContain("in the middle of the journal (corruption, not a torn write)");
      expect(Buffer.compare(readFileSync(p), before)).toBe(0);
    }
  });

  test("only ONE unterminated final line is a torn tail: a trailing blank, two bad lines or a terminated bad line are refused untouched", async () => {
    const p = join(dirs.make(), "j.jsonl");
    const good = readFileSync(join(HAZARDS, "chain-4.jsonl"), "utf8");
    for (const tail of ["{torn\n\n", "{torn\n{also torn", "{garbage}\n", "x\n".repeat(50)]) {
      writeFileSync(p, good + tail);
      expect(scanTail(p).tornTail).toBe(false);
      const err = await repairJournalTail(p).catch((e) => e);
      expect(err).toMatchObject({ code: "repair_refused", exitCode: 2 });
      expect(readFileSync(p, "utf8")).toBe(good + tail);
    }
    writeFileSync(p, good + "{also torn");
    expect(scanTail(p)).toMatchObject({ tornTail: true, discarded: [4] });
    const r = await repairJournalTail(p);
    expect([r.repaired, r.removed_line_indices, readFileSync(p, "utf8")]).toEqual([true, [4], good]);
  });

  test("a seal that disagrees with the survivors is refused before any write", async () => {
    const p = copyOf("hazards-torn-tail");
    const before = readFileSync(p);
    const err = await repairJournalTail(p, { seal: { head: "0".repeat(64), event_count: 300 } }).catch((e) => e);
    expect(err).toMatchObject({ code: "repair_refused" });
    expect(err.message).toContain("seal");
    expect(Buffer.compare(readFileSync(p), before)).toBe(0);
    const ok = await repairJournalTail(p, {
      seal: { head: "612c0421d5ed3d3fb1e0793f678ca78b8d2457f6766db3aa7d06b9e13b62858a", event_count: 299 },
    });
    expect(ok.repaired).toBe(true);
  });

  test("a live writer's journal is not cut (journal_locked)", async () => {
    const p = copyOf("hazards-torn-tail");
    const lock = acquireLock(join(p, "..", "journal.lock"));
    try {
      await expect(repairJournalTail(p)).rejects.toMatchObject({ code: "journal_locked" });
    } finally {
      lock.release();
    }
  });

  test("lone-\\r separated journal: the cut follows universal newlines", async () => {
    const p = join(dirs.make(), "j.jsonl");
    const good = readFileSync(join(HAZARDS, "chain-4.jsonl"), "utf8").replaceAll("\n", "\r");
    writeFileSync(p, good + '{"ts": 1');
    const r = await repairJournalTail(p);
    expect([r.repaired, r.event_count, readFileSync(p, "utf8")]).toEqual([true, 4, good]);
  });

  test("a missing journal has nothing to repair", async () => {
    expect(await repairJournalTail(join(dirs.make(), "none.jsonl"))).toEqual({
      repaired: false, removed_line_indices: [], event_count: 0, head: "",
    });
  });
});

describe("repairJournalTail's quick pass", () => {
  /** The outcome of a repair: its result, or its refusal's code and detail. */
  async function outcome(run: () => unknown): Promise<unknown> {
    try {
      return await run();
    } catch (err) {
      const e = err as { code?: string; message?: string };
      return { code: e.code, message: e.message };
    }
  }

  test("every vector: the same result (or refusal) and the same bytes as the exact tail scan alone", async () => {
    const { readdirSync } = await import("node:fs");
    const { repairJournalTailSync } = await import("../../src/journal/repair.ts");
    const names = readdirSync(HAZARDS).filter((n) => n.endsWith(".jsonl")).map((n) => n.slice(0, -6));
    expect(names.length).toBeGreaterThan(10);
    // Also a journal whose links break (the quick pass is not clean there) and an empty one.
    const extra: Record<string, string> = { empty: "" };
    const chain = readFileSync(join(HAZARDS, "chain-4.jsonl"), "utf8").split("\n");
    extra["links-broken"] = [chain[0], chain[2], chain[1], chain[3]].join("\n") + "\n";
    // Every tail the policy tells apart, after intact and broken links, with each line ending: the quick pass decides
    // them from the verify's own facts (the last line read, the discarded ones, the last row's hash after a break).
    const bodies = { intact: chain.slice(0, 4), broken: [chain[0], chain[2], chain[1], chain[3]], "broken-last": [chain[0], chain[1], chain[3], chain[2]] };
    const torn = chain[3]!.slice(0, 40);
    for (const [b, rows] of Object.entries(bodies)) {
      for (const [eol, nl] of Object.entries({ lf: "\n", crlf: "\r\n", cr: "\r" })) {
        const text = rows.join(nl) + nl;
        extra[`${b}-${eol}-clean`] = text;
        extra[`${b}-${eol}-torn`] = text + torn;
        extra[`${b}-${eol}-torn-blank`] = rows.join(nl) + nl + nl + torn;
        extra[`${b}-${eol}-blank-last`] = text + nl;
        extra[`${b}-${eol}-junk-terminated`] = text + "junk" + nl;
        extra[`${b}-${eol}-two-junk`] = text + "junk" + nl + torn;
        extra[`${b}-${eol}-junk-middle`] = [rows[0], "junk", ...rows.slice(1)].join(nl) + nl + torn;
        extra[`${b}-${eol}-no-final-eol`] = rows.join(nl);
      }
    }
    extra["only-torn"] = torn;
    extra["only-junk"] = "junk\n";
    const cases: [string, () => string][] = [
      ...names.map((n) => [n, () => copyOf(n)] as [string, () => string]),
      ...Object.entries(extra).map(([n, text]) => [n, () => {
        const p = join(dirs.make(), "journal.jsonl");
        writeFileSync(p, text);
        return p;
      }] as [string, () => string]),
    ];
    for (const [name, make] of cases) {
      const a = make();
      const b = make();
      const quick = await outcome(() => repairJournalTail(a));
      const exact = await outcome(() => repairJournalTailSync(b));
      // The two copies differ only in their paths.
      const strip = (o: unknown, path: string) => JSON.parse(JSON.stringify(o).replaceAll(path, "JOURNAL").replace(/"saved_fragment":"[^"]*"/, '"saved_fragment":"(saved)"'));
      expect([name, strip(quick, a)]).toEqual([name, strip(exact, b)]);
      expect([name, readFileSync(a).equals(readFileSync(b))]).toEqual([name, true]);
    }
  });

  test("not vacuous: a torn tail, junk in the middle and a broken chain are decided without the exact tail scan", async () => {
    const tailScan = await import("../../src/journal/tail-scan.ts");
    const chain = readFileSync(join(HAZARDS, "chain-4.jsonl"), "utf8").split("\n");
    const spy = spyOn(tailScan, "scanTail");
    try {
      for (const text of [chain.slice(0, 3).join("\n") + "\n" + chain[3]!.slice(0, 40), [chain[0], "junk", chain[1]].join("\n") + "\n", [chain[0], chain[2], chain[1]].join("\n") + "\n"]) {
        const p = join(dirs.make(), "journal.jsonl");
        writeFileSync(p, text);
        await repairJournalTail(p).catch(() => null);
      }
      expect(spy).toHaveBeenCalledTimes(0);
      // and the exact scan is what a broken chain ending in a torn tail still takes
      const p = join(dirs.make(), "journal.jsonl");
      writeFileSync(p, [chain[0], chain[2], chain[1]].join("\n") + "\n" + chain[3]!.slice(0, 40));
      await repairJournalTail(p);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });
});
