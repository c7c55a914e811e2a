import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BernsteinError } from "../../src/errors/index.ts";
import { agentJournalDir, GENESIS_HASH, StepJournal, validateAgentId, verifyStepJournal } from "../../src/steps/index.ts";
import { ROOT } from "../helpers/cli.ts";
import { DEFAULT_MAX_DEPTH } from "../../src/pyjson/parse.ts";
import type { PyLike } from "../../src/pyjson/types.ts";

const tmp = mkdtempSync(join(tmpdir(), "steps-writer-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const freshSdd = () => join(tmp, `sdd${n++}`);
const bucketOf = (sdd: string, id: string) => join(sdd, "runtime", "journal", id, "000000.jsonl");

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof BernsteinError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return "no error";
}

function seedChain(sdd: string, id: string, count: number): string[] {
  const j = StepJournal.open(sdd, id);
  for (let i = 0; i < count; i++) j.append({ input_hash: `a${i}`, model: "m1", prompt: `p${i}` });
  j.close();
  return readFileSync(bucketOf(sdd, id), "utf8").split("\n").filter(Boolean);
}

describe("StepJournal writer", () => {
  test("rows are canonical, chained from genesis, and reopening continues the chain", async () => {
    const sdd = freshSdd();
    const j = StepJournal.open(sdd, "agent-1");
    expect(j.head()).toBe(GENESIS_HASH);
    expect(j.append({ input_hash: "a0", model: "m1", prompt: "p0" })).toEqual({
      seq: 0,
      step_hash: "f66c06cdfb9e18c91fd5ca4053cf1fcc3b0662cc28ecc76627c2dffd0ab62dd0",
    });
    j.append({ input_hash: "a1", model: "m1", prompt: "p1", blob_refs: ["d1"] });
    j.close();
    const k = StepJournal.open(sdd, "agent-1");
    expect(k.nextSeq()).toBe(2);
    expect(k.append({ input_hash: "a2", model: "m1", prompt: "p2" }).step_hash).toBe(
      "fabfc7f3d8d41a7f2a433455e4d0ab3b1f700ddab69e20f9a40520ad9854bd10",
    );
    k.close();
    const lines = readFileSync(bucketOf(sdd, "agent-1"), "utf8").split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe("");
    expect(lines[1]).toMatch(
      /^\{"blob_refs":\["d1"\],"input_hash":"a1","model":"m1","prev_hash":"f66c06cd[0-9a-f]{56}","prompt":"p1","schema_version":2,"seq":1,"step_hash":"52475a9a[0-9a-f]{56}","tool_call":null,"tool_result":null,"ts":\d+\.\d+\}$/,
    );
    expect(statSync(bucketOf(sdd, "agent-1")).mode & 0o777).toBe(0o600);
    expect(statSync(join(sdd, "runtime", "journal", "agent-1")).mode & 0o777).toBe(0o700);
    expect(await verifyStepJournal(bucketOf(sdd, "agent-1"))).toMatchObject({ ok: true, steps: 3 });
  });

  test("effort is written and hashed only when given", () => {
    const sdd = freshSdd();
    const j = StepJournal.open(sdd, "e");
    expect(j.append({ input_hash: "a0", model: "m1", prompt: "p0", effort: "high" }).step_hash).toBe(
      "4f4816ba6fda308b2b2c367e24e886291ba58dc5813e45d9c8453eb9e8bdd82e",
    );
    j.close();
    expect(readFileSync(bucketOf(sdd, "e"), "utf8")).toStartWith('{"blob_refs":[],"effort":"high",');
  });

  test("a step whose row would pass the row limit is refused (row_too_large), nothing written; the next step still chains", async () => {
    const sdd = freshSdd();
    const j = StepJournal.open(sdd, "limited", { maxRowBytes: 1000 });
    j.append({ input_hash: "a0", model: "m1", prompt: "p0" });
    const before = readFileSync(bucketOf(sdd, "limited"));
    // 300 characters that json.dumps escapes to 6 bytes each: the row, not the input, is measured
    expect(codeOf(() => j.append({ input_hash: "a1", model: "m1", prompt: "é".repeat(300) }))).toMatch(
      /^row_too_large: step 1 would be a row of \d+ bytes, over the row limit of 1000 bytes \(1000 bytes\)/,
    );
    expect(readFileSync(bucketOf(sdd, "limited")).equals(before)).toBe(true);
    j.append({ input_hash: "a1", model: "m1", prompt: "p1" });
    j.close();
    expect(await verifyStepJournal(bucketOf(sdd, "limited"))).toMatchObject({ ok: true, steps: 2 });
  });

  test("a step whose row would nest past its readers' depth is refused (row_too_deep), nothing written; one level less is written and verifies", async () => {
    const sdd = freshSdd();
    const j = StepJournal.open(sdd, "deep");
    j.append({ input_hash: "a0", model: "m1", prompt: "p0" });
    const before = readFileSync(bucketOf(sdd, "deep"));
    // the row is 1 deep, its tool result 2: n containers in it make the row n + 1 deep
    const nested = (n: number): PyLike => (n === 0 ? "leaf" : n % 2 ? { k: nested(n - 1) } : [nested(n - 1), n]);
    expect(codeOf(() => j.append({ input_hash: "a1", model: "m1", tool_result: nested(DEFAULT_MAX_DEPTH) }))).toMatch(
      /^row_too_deep: step 1 would be a row nested more than 1000 levels deep/,
    );
    expect(codeOf(() => j.append({ input_hash: "a1", model: "m1", tool_call: { args: nested(DEFAULT_MAX_DEPTH - 1) } }))).toStartWith("row_too_deep: ");
    expect(readFileSync(bucketOf(sdd, "deep")).equals(before)).toBe(true);
    j.append({ input_hash: "a1", model: "m1", tool_result: nested(DEFAULT_MAX_DEPTH - 1) });
    j.close();
    expect(await verifyStepJournal(bucketOf(sdd, "deep"))).toMatchObject({ ok: true, steps: 2 });
  });

  test("80 appends give seqs 0..79 and verify", async () => {
    const sdd = freshSdd();
    const j = StepJournal.open(sdd, "many");
    const seqs = Array.from({ length: 80 }, (_, i) => j.append({ input_hash: `h${i}`, tool_call: { name: "t", i }, tool_result: { ok: i % 2 === 0 } }).seq);
    j.close();
    expect(seqs).toEqual(Array.from({ length: 80 }, (_, i) => i));
    expect(await verifyStepJournal(bucketOf(sdd, "many"))).toMatchObject({ ok: true, steps: 80 });
  });

  test("a second writer is refused, in this process and in another", () => {
    const sdd = freshSdd();
    const j = StepJournal.open(sdd, "locked");
    expect(codeOf(() => StepJournal.open(sdd, "locked"))).toStartWith("agent_journal_locked: ");
    const script = `import { StepJournal } from ${JSON.stringify(join(ROOT, "src/steps/index.ts"))};
try { StepJournal.open(${JSON.stringify(sdd)}, "locked"); console.log("opened"); } catch (e) { console.log(e.code); }`;
    const r = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe" });
    expect(r.stdout.toString().trim()).toBe("agent_journal_locked");
    j.close();
    expect(() => j.append({ input_hash: "x" })).toThrow("is closed");
    StepJournal.open(sdd, "locked").close();
  });

  test("a close that fails (its descriptor gone) still lets the journal go: the error is thrown, the next writer is not refused", async () => {
    const { closeSync } = await import("node:fs");
    const sdd = freshSdd();
    const j = StepJournal.open(sdd, "agent-close");
    j.append({ input_hash: "a0", model: "m1", prompt: "p0" });
    closeSync((j as unknown as { fd: number }).fd);
    expect(() => j.close()).toThrow(/EBADF|bad file/i);
    j.close(); // once let go, closing again does nothing
    const k = StepJournal.open(sdd, "agent-close");
    try {
      expect(k.nextSeq()).toBe(1);
    } finally {
      k.close();
    }
  });

  test("recovery refuses a tampered tail row, naming the line", () => {
    const sdd = freshSdd();
    const lines = seedChain(sdd, "t", 2);
    writeFileSync(bucketOf(sdd, "t"), [lines[0], lines[1]!.replace('"p1"', '"pX"')].join("\n") + "\n");
    const msg = codeOf(() => StepJournal.open(sdd, "t"));
    expect(msg).toContain("agent_journal_corrupt: journal ");
    expect(msg).toContain(": line 2 step_hash mismatch (recomputed ");
    expect(msg).toEndWith("Move the journal aside to recover.");
  });

  test("recovery refuses interior tamper, seq gaps and non-integer seq", () => {
    const sdd = freshSdd();
    const lines = seedChain(sdd, "i", 3);
    const p = bucketOf(sdd, "i");
    writeFileSync(p, [lines[0], lines[1]!.replace('"p1"', '"pX"'), lines[2]].join("\n") + "\n");
    expect(codeOf(() => StepJournal.open(sdd, "i"))).toContain(": line 2 step_hash mismatch");
    writeFileSync(p, [lines[0], lines[2]].join("\n") + "\n");
    expect(codeOf(() => StepJournal.open(sdd, "i"))).toContain(": line 2 seq mismatch (expected 1, got 2); chain is broken.");
    writeFileSync(p, [lines[0]!.replace('"seq":0', '"seq":"zero"')].join("\n") + "\n");
    expect(codeOf(() => StepJournal.open(sdd, "i"))).toContain(": line 1 has a non-integer seq (got 'zero')");
    writeFileSync(p, [lines[0], "garbage", lines[1]].join("\n") + "\n");
    expect(codeOf(() => StepJournal.open(sdd, "i"))).toContain(
      ": line 2 is corrupt but line 3 continues the chain; refusing to recover across a broken interior row. Move the journal aside to recover.",
    );
    // The refused journal is left untouched.
    expect(readFileSync(p, "utf8")).toBe([lines[0], "garbage", lines[1]].join("\n") + "\n");
  });

  test("the tip at verify speed is the exact walk's: every tail, line ending, tamper and hostile row (its tip, or its refusal)", async () => {
    const { recoverTip } = await import("../../src/steps/writer.ts");
    const outcome = (path: string, quick: boolean): unknown => {
      try {
        return recoverTip(path, quick);
      } catch (err) {
        if (err instanceof BernsteinError) return { code: err.code, message: err.message };
        throw err;
      }
    };
    const sdd = freshSdd();
    const lines = seedChain(sdd, "d", 4);
    const mutations: Record<string, string[]> = {
      whole: lines,
      "hash edited": [lines[0]!, lines[1]!.replace('"p1"', '"pX"'), lines[2]!, lines[3]!],
      "last hash edited": [...lines.slice(0, 3), lines[3]!.replace('"p3"', '"pX"')],
      "row deleted": [lines[0]!, lines[2]!, lines[3]!],
      swapped: [lines[0]!, lines[2]!, lines[1]!, lines[3]!],
      "seq text": [lines[0]!.replace('"seq":0', '"seq":"0"'), ...lines.slice(1)],
      "seq float": [lines[0]!.replace('"seq":0', '"seq":0.0'), ...lines.slice(1)],
      "seq big": [lines[0]!.replace('"seq":0', '"seq":00'), ...lines.slice(1)],
      "no step_hash": [...lines.slice(0, 3), lines[3]!.replace('"step_hash"', '"step_hsh"')],
      "not an object": [...lines, "[1, 2]"],
      "garbage inside": [lines[0]!, "garbage", ...lines.slice(1)],
      "spaced spelling": [lines[0]!.replaceAll('":', '": ').replaceAll(',"', ', "'), ...lines.slice(1)],
      "whitespace line": [lines[0]!, "   ", ...lines.slice(1)],
    };
    let cases = 0;
    for (const [name, rows] of Object.entries(mutations)) {
      for (const nl of ["\n", "\r\n", "\r"]) {
        for (const [tail, text] of Object.entries({ clean: rows.join(nl) + nl, torn: rows.join(nl) + nl + lines[3]!.slice(0, 30), "no final break": rows.join(nl), blank: rows.join(nl) + nl + nl })) {
          const p = join(tmp, `tip-${cases++}.jsonl`);
          writeFileSync(p, text);
          expect([name, tail, JSON.stringify(nl), outcome(p, true)]).toEqual([name, tail, JSON.stringify(nl), outcome(p, false)]);
        }
      }
    }
    expect(cases).toBe(13 * 3 * 4);
  });

  test("not vacuous: a clean journal's tip comes from the verifier's walk, not the exact reader", async () => {
    const reader = await import("../../src/steps/reader.ts");
    const { spyOn } = await import("bun:test");
    const sdd = freshSdd();
    seedChain(sdd, "q", 50);
    const spy = spyOn(reader, "forEachFileLineSync");
    try {
      const j = StepJournal.open(sdd, "q");
      expect(j.nextSeq()).toBe(50);
      j.close();
      expect(spy).toHaveBeenCalledTimes(0);
      // a torn tail is still the exact walk's to decide
      const p = bucketOf(sdd, "q");
      writeFileSync(p, readFileSync(p, "utf8") + "{\"seq\":5");
      StepJournal.open(sdd, "q").close();
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  test("a torn final line is cut off, kept beside the journal, and the chain continues", async () => {
    const sdd = freshSdd();
    const lines = seedChain(sdd, "torn", 2);
    const p = bucketOf(sdd, "torn");
    writeFileSync(p, lines[0] + "\n" + lines[1]!.slice(0, 40));
    const j = StepJournal.open(sdd, "torn");
    expect(j.nextSeq()).toBe(1);
    expect(j.head()).toBe(JSON.parse(lines[0]!).step_hash);
    j.append({ input_hash: "again" });
    j.close();
    expect(await verifyStepJournal(p)).toMatchObject({ ok: true, steps: 2 });
    const saved = readdirSync(join(sdd, "runtime", "journal", "torn")).filter((f) => f.includes(".torn-"));
    expect(saved).toHaveLength(1);
    expect(readFileSync(join(sdd, "runtime", "journal", "torn", saved[0]!), "utf8")).toBe(lines[1]!.slice(0, 40));
  });

  test("an empty bucket starts at genesis", () => {
    const sdd = freshSdd();
    mkdirSync(join(sdd, "runtime", "journal", "empty"), { recursive: true });
    writeFileSync(bucketOf(sdd, "empty"), "\n\n");
    const j = StepJournal.open(sdd, "empty");
    expect(j.head()).toBe(GENESIS_HASH);
    expect(j.nextSeq()).toBe(0);
    j.close();
  });
});

describe("agent ids", () => {
  test("the run-id rule is enforced", () => {
    for (const bad of ["../x", ".", "..", "a/b", "", "x".repeat(65), "a b", "é"]) {
      expect(codeOf(() => validateAgentId(bad))).toStartWith("invalid_agent_id: ");
    }
    for (const good of ["agent-a", "sess-9", "a.b_c", "x".repeat(64)]) expect(validateAgentId(good)).toBe(good);
  });

  test("a symlinked agent dir that leaves the journal root is refused; nothing is created", () => {
    const sdd = freshSdd();
    const outside = join(tmp, "outside");
    mkdirSync(outside, { recursive: true });
    mkdirSync(join(sdd, "runtime", "journal"), { recursive: true });
    symlinkSync(outside, join(sdd, "runtime", "journal", "evil"));
    expect(codeOf(() => agentJournalDir(sdd, "evil"))).toStartWith("invalid_agent_id: ");
    expect(codeOf(() => StepJournal.open(sdd, "evil"))).toStartWith("invalid_agent_id: ");
    expect(existsSync(join(outside, "000000.jsonl"))).toBe(false);
  });
});
