/**
 * The rows a run receipt embeds, read in two streaming passes
 * (src/runreceipt/journal-rows.ts), against the way they were read before:
 * the whole journal through the strict scan, each row without ts/elapsed_s
 * made canonical, joined by commas (the reference below). Same text, same
 * endpoints and extension list, same refusals; on rows in the writer's
 * spelling and in foreign spellings that keep the chain (compact, sorted,
 * raw UTF-8, odd whitespace, NaN), blank lines, and rows long enough for
 * the exact path to keep their values as bytes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { EventJournal } from "../../src/journal/index.ts";
import { eventHash, payloadHash } from "../../src/journal/hash.ts";
import { RefusalError } from "../../src/errors/index.ts";
import { canonical, dumps, parse, pyFloat, PyNum, type PyObject, type PyValue } from "../../src/pyjson/index.ts";
import { EndpointSet, extensionsOf } from "../../src/runreceipt/binding.ts";
import { embedJournalRows, journalFacts, journalLines, verifiedInOnePass } from "../../src/runreceipt/journal-rows.ts";
import { strictObjects } from "../../src/runreceipt/strict-lines.ts";
import { Gen } from "../pyjson/gen.ts";
import { tempDirs } from "../journal/tmp.ts";

const dirs = tempDirs("receipt-rows");
afterAll(() => dirs.cleanup());

const RESERVED = new Set(["event", "prev_hash", "payload_hash", "event_hash", "hash_profile", "ts", "elapsed_s", "index"]);

/** The reference: the journal read whole, as `verify run` read it before it streamed. */
function reference(path: string): { text: string; endpoints: unknown; extensions: PyValue[] | null } {
  const refuse = (n: number, what: string) => new RefusalError("run_receipt_refused", `line ${n} ${what}`);
  const texts: string[] = [];
  const endpoints = new EndpointSet();
  let extensions: PyValue[] | null = null;
  for (const { row } of strictObjects(path, refuse, { maxLineBytes: 1 << 28 })) {
    endpoints.push(row);
    extensions = extensionsOf(row) ?? extensions;
    const embedded = new Map(row);
    embedded.delete("ts");
    embedded.delete("elapsed_s");
    texts.push(canonical(embedded));
  }
  return { text: texts.join(","), endpoints: endpoints.sorted(), extensions };
}

async function embedded(path: string): Promise<{ text: string; endpoints: unknown; extensions: PyValue[] | null }> {
  const facts = await journalFacts(path, "r");
  const chunks: string[] = [];
  const dec = new TextDecoder();
  const rows = await embedJournalRows(path, "r", facts, { bytes: (m, s, e) => chunks.push(dec.decode(m.subarray(s, e))), text: (t) => chunks.push(t) });
  return { text: chunks.join(""), endpoints: rows.endpoints.sorted(), extensions: rows.extensions };
}

/** The rows as the one pass embeds them (verify and embed in one read), with its facts; null when it leaves the journal to the two passes. */
async function inOnePass(path: string): Promise<{ text: string; endpoints: unknown; extensions: PyValue[] | null; facts: unknown } | null> {
  const lines = journalLines(path)!;
  const chunks: string[] = [];
  const dec = new TextDecoder();
  const one = await verifiedInOnePass(path, "r", lines, { bytes: (m, s, e) => chunks.push(dec.decode(m.subarray(s, e))), text: (t) => chunks.push(t) });
  return one === null ? null : { text: chunks.join(""), endpoints: one.rows.endpoints.sorted(), extensions: one.rows.extensions, facts: one.facts };
}

/** What the two passes make of `path`: the reference's rows, and pass 1's facts. */
async function twoPasses(path: string): Promise<{ text: string; endpoints: unknown; extensions: PyValue[] | null; facts: unknown }> {
  return { ...reference(path), facts: await journalFacts(path, "r") };
}

/** A journal of `n` rows with hostile payloads, endpoints and an extension list, written by the project's writer. */
function writeJournal(seed: number, n: number, big = 0): string {
  const g = new Gen(seed);
  const dir = dirs.make();
  const j = EventJournal.create("r", { sddDir: dir });
  for (let i = 0; i < n; i++) {
    const kind = g.int(8);
    if (kind === 0) {
      const e = new Map<string, PyValue>([["endpoint_adapter_name", g.pick<PyValue>(["claude", "co\"dex", "", "gé", new PyNum("3", false)])], ["endpoint_model", g.pick<PyValue>(["m1", "m\\2", null])]]);
      if (g.chance(0.5)) e.set("endpoint_base_url", g.pick(["https://x", "http://y/\u2028"]));
      if (g.chance(0.3)) e.set("endpoint_profile_name", "p");
      j.record("agent_spawned", e);
    } else if (kind === 1 && g.chance(0.2)) {
      j.record("loaded_extension_set", new Map<string, PyValue>([["extensions", [new Map<string, PyValue>([["name", `ext-${i}`], ["v", new PyNum("1", false)]])]]]));
    } else {
      let v: PyValue;
      try {
        v = parse(g.objectText(0, 2));
      } catch {
        v = new Map();
      }
      const m = v instanceof Map ? v : new Map<string, PyValue>([["value", v]]);
      for (const k of [...m.keys()]) if (RESERVED.has(k)) m.delete(k);
      if (g.chance(0.2)) m.set("cost", pyFloat(g.double()));
      if (g.chance(0.1)) m.set("nan", new PyNum(g.pick(["NaN", "Infinity", "-Infinity"]), true));
      j.record(g.pick(["tool_call", "task_completed", "tick_start", "ünïcode"]), m);
    }
  }
  if (big > 0) j.record("tool_result", new Map<string, PyValue>([["output", "x\u00e9\n".repeat(big)], ["list", Array.from({ length: 2000 }, (_, k) => new PyNum(String(k), false))]]));
  j.record("run_completed", new Map());
  j.close();
  return j.path;
}

/** The same rows in foreign spellings that keep every hash: compact, sorted keys, raw UTF-8, odd whitespace, ts spelled otherwise, CR LF endings, blank lines. */
function respell(path: string, seed: number): void {
  const g = new Gen(seed);
  const out: string[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    const row = parse(line) as PyObject;
    const pick = g.int(7);
    if (pick === 0) out.push(dumps(row, { separators: [",", ":"] }));
    else if (pick === 1) out.push(dumps(row, { sortKeys: true }));
    else if (pick === 2) out.push(dumps(row, { ensureAscii: false }));
    else if (pick === 3) out.push(` ${dumps(row, { separators: [" ,  ", " :\t"] })}\t `);
    else if (pick === 4) {
      row.set("ts", new PyNum("1.50", true));
      out.push(dumps(row));
    } else if (pick === 5 && g.chance(0.5)) out.push(`${line}\r`);
    else out.push(line);
    if (g.chance(0.05)) out.push(g.pick(["", "   ", "\t"]));
  }
  writeFileSync(path, out.join("\n") + "\n");
}

describe("the rows a receipt embeds", () => {
  test("the writer's rows: the same text, endpoints and extensions as the journal read whole", async () => {
    for (const seed of [1, 2, 3]) {
      const path = writeJournal(seed, 400);
      expect(await embedded(path)).toEqual(reference(path));
    }
  }, 60_000);

  test("rows in foreign spellings that keep the chain, and blank lines", async () => {
    for (const seed of [4, 5, 6]) {
      const path = writeJournal(seed, 400);
      respell(path, seed);
      expect(await embedded(path)).toEqual(reference(path));
    }
  }, 60_000);

  test("a row past the fast path's limit and the tree parser's: its values kept as bytes, the same text", async () => {
    const path = writeJournal(7, 20, 2_000_000);
    expect(readFileSync(path).length).toBeGreaterThan(5 << 20);
    expect(await embedded(path)).toEqual(reference(path));
  }, 60_000);

  test("a journal the strict scan refuses: the refusal it always gave", async () => {
    const path = writeJournal(8, 30);
    const lines = readFileSync(path, "utf8").split("\n");
    lines.splice(12, 0, "[1, 2]");
    writeFileSync(path, lines.join("\n"));
    await expect(journalFacts(path, "r")).rejects.toThrow("refusing to sign run 'r': journal line 13 is not a JSON object; a receipt is never signed over a partial journal");
    lines.splice(12, 1, '{"event": "x"}');
    writeFileSync(path, lines.join("\n"));
    await expect(journalFacts(path, "r")).rejects.toThrow("journal line 13 has a missing or non-integer 'index'");
  });

  test("a CR put inside a row between the passes breaks the line there, as the exact reader reads it: refused", async () => {
    // plain rows, every one taken on the read buffer
    const j = EventJournal.create("r", { sddDir: dirs.make() });
    for (let i = 0; i < 50; i++) j.record("tick_start", new Map<string, PyValue>([["n", new PyNum(String(i), false)]]));
    j.close();
    const path = j.path;
    const facts = await journalFacts(path, "r");
    const lines = readFileSync(path, "utf8").split("\n");
    // the same length, the row's links intact: only its whitespace changed, to a line break of universal newlines
    lines[20] = lines[20]!.replace('", "event_hash"', '",\r"event_hash"');
    writeFileSync(path, lines.join("\n"));
    expect(readFileSync(path).length).toBe(facts.snapshot);
    await expect(embedJournalRows(path, "r", facts, null)).rejects.toThrow("journal line 21 is not valid JSON");
  });

  test("a journal rewritten between the passes is journal_changed", async () => {
    const path = writeJournal(9, 50);
    const facts = await journalFacts(path, "r");
    const lines = readFileSync(path, "utf8").split("\n");
    // the same bytes' length, a row's link changed
    lines[20] = lines[20]!.replace(/"prev_hash": "([0-9a-f])/, (_, c: string) => `"prev_hash": "${c === "0" ? "1" : "0"}`);
    writeFileSync(path, lines.join("\n"));
    await expect(embedJournalRows(path, "r", facts, null)).rejects.toMatchObject({ code: "journal_changed" });
  });
});

describe("the rows a receipt embeds in one pass (verified and embedded in one read)", () => {
  test("the writer's rows: taken, with the text, endpoints, extensions and facts of the two passes", async () => {
    for (const seed of [1, 2, 3]) {
      const path = writeJournal(seed, 400);
      expect(await inOnePass(path)).toEqual(await twoPasses(path));
    }
  }, 60_000);

  test("rows in foreign spellings (the exact path's, in turn with the kernel's), CR LF endings: taken, the same; a blank line: left to the two passes", async () => {
    for (const seed of [4, 5, 6]) {
      const path = writeJournal(seed, 400);
      respell(path, seed);
      const text = readFileSync(path, "utf8");
      const blank = text.split(/\r?\n/).slice(0, -1).some((l) => l.trim() === "");
      const got = await inOnePass(path);
      if (blank) expect(got).toBeNull();
      else expect(got).toEqual(await twoPasses(path));
      // the same rows without their blank lines: taken
      writeFileSync(path, text.split("\n").filter((l) => l.trim() !== "").join("\n") + "\n");
      expect(await inOnePass(path)).toEqual(await twoPasses(path));
    }
  }, 60_000);

  test("a row longer than the read area (the long-line kernel) and one past every kernel: the same", async () => {
    for (const big of [200_000, 2_000_000]) {
      const path = writeJournal(7, 20, big);
      expect(await inOnePass(path)).toEqual(await twoPasses(path));
    }
  }, 60_000);

  test("an agent_spawned row's endpoint counts; the same bytes nested in another row's payload do not", async () => {
    const j = EventJournal.create("r", { sddDir: dirs.make() });
    const endpoint = (name: string) => new Map<string, PyValue>([["event", "agent_spawned"], ["endpoint_adapter_name", name], ["endpoint_model", "m"]]);
    // enough rows for the kernel (a small journal is verified on the exact path alone)
    for (let i = 0; i < 200; i++) j.record("tick_start", new Map<string, PyValue>([["n", new PyNum(String(i), false)]]));
    j.record("tool_call", new Map<string, PyValue>([["x", endpoint("decoy")], ["y", [endpoint("decoy2")]]]));
    // endpoint members at the top of a row whose own event is another, the spawn's bytes nested in it
    j.record("tool_call", new Map<string, PyValue>([["endpoint_adapter_name", "decoy4"], ["x", endpoint("decoy5")]]));
    j.record("agent_spawned", new Map<string, PyValue>([["endpoint_adapter_name", "claude"], ["endpoint_model", "opus"], ["z", endpoint("decoy3")]]));
    j.record("run_completed", new Map());
    j.close();
    const got = await inOnePass(j.path);
    expect(got).toEqual(await twoPasses(j.path));
    expect(JSON.stringify(got!.endpoints)).toContain("claude");
    expect(JSON.stringify(got!.endpoints)).not.toContain("decoy");
  });

  test("an unterminated last row is a row; a torn one, a refused line, a broken link, a row changed since the count: left to the two passes", async () => {
    const path = writeJournal(8, 30);
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.slice(0, -1));
    expect(await inOnePass(path)).toEqual(await twoPasses(path));
    writeFileSync(path, text.slice(0, -20));
    expect(await inOnePass(path)).toBeNull();
    const lines = text.split("\n");
    for (const bad of ["[1, 2]", '{"event": "x"}', lines[12]!.replace(/"prev_hash": "([0-9a-f])/, (_, c: string) => `"prev_hash": "${c === "0" ? "1" : "0"}`)]) {
      const edited = [...lines];
      edited.splice(12, 1, bad);
      writeFileSync(path, edited.join("\n"));
      expect([bad, await inOnePass(path)]).toEqual([bad, null]);
    }
    // counted, then a row appended before the read: more rows than the count
    writeFileSync(path, text);
    const counted = journalLines(path)!;
    writeFileSync(path, text + lines[0] + "\n");
    expect(await verifiedInOnePass(path, "r", { ...counted, snapshot: text.length + lines[0]!.length + 1 }, { bytes: () => {}, text: () => {} })).toBeNull();
  });

  test("a row whose event is an empty string, its hashes right: the kernel leaves it to the strict scan, which refuses it (no receipt)", async () => {
    const j = EventJournal.create("r", { sddDir: dirs.make() });
    for (let i = 0; i < 200; i++) j.record("tick_start", new Map<string, PyValue>([["n", new PyNum(String(i), false)]]));
    j.close();
    const text = readFileSync(j.path, "utf8");
    const last = parse(text.trimEnd().split("\n").at(-1)!) as PyObject;
    const ph = payloadHash("", new Map());
    const row = new Map<string, PyValue>([["ts", pyFloat(1727000000.5)], ["elapsed_s", pyFloat(0.5)], ["index", new PyNum("200", false)], ["event", ""], ["prev_hash", last.get("event_hash")!], ["payload_hash", ph], ["event_hash", eventHash(last.get("event_hash") as string, "", ph, 200)]]);
    writeFileSync(j.path, text + dumps(row) + "\n");
    expect(await inOnePass(j.path)).toBeNull();
    const facts = await journalFacts(j.path, "r");
    expect(facts.count).toBe(201);
    await expect(embedJournalRows(j.path, "r", facts, null)).rejects.toThrow("journal line 201 has a missing or non-string 'event'");
  });
});
