/**
 * Bugs the fuzzers found, pinned one by one (each against python3 where
 * Python is the reference), so a fix can never silently regress.
 */
import { describe, expect, test } from "bun:test";
import { parse } from "../../src/pyjson/parse.ts";
import { runPython } from "../helpers/python.ts";

function ourError(text: string): string {
  try {
    parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  return "OK";
}

const PY_ERRORS = `
import json, sys
out = []
for t in json.load(sys.stdin):
    try:
        json.loads(t); out.append("OK")
    except ValueError as e:
        out.append(str(e))
print(json.dumps(out))
`;

describe("parser error messages (fuzz: parser)", () => {
  // Found by the parser fuzzer: positions counted UTF-16 units where Python
  // counts code points (any astral character before the error), and an
  // escape whose 4 hex digits end the text was "Unterminated string"
  // instead of Python's "Invalid \\uXXXX escape".
  const texts = [
    '["🚀" 1]',
    '\n\n["é🚀",\n "x" 1]',
    '{"k": "🚀🚀🚀", "v": tru}',
    '"\\ud83d\\ude80" x',
    '"abc\\u306e',
    '"abc\\u30',
    '"\\ud83d\\u',
    '"\\ud83d\\ude8',
    '"\\ud83d\\ude80',
    '"\\ud83d\\uZZZZ"',
    "[1,\n🚀]",
    '"🚀\n"',
  ];
  test("match json.loads exactly", () => {
    const py = runPython(PY_ERRORS, texts) as string[];
    expect(texts.map(ourError)).toEqual(py);
  });
});

describe("run-journal reader memory bound (fuzz: journal extreme)", () => {
  // Found by the journal fuzzer's 100 MB single-line extreme: the reader
  // assembled the whole line (and decoded and parsed it), ~530 MB peak.
  // A line over MAX_LINE_BYTES (the 16 MiB row limit) now refuses the
  // input as row_too_large (exit 3), naming its 1-based line: reading stops
  // as soon as the line passes the limit, nothing of it is parsed.
  test("physicalLines stops at a line past maxLineBytes with row_too_large and its 1-based line", async () => {
    const { physicalLines } = await import("../../src/fsutil/lines.ts");
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "bernstein-lines-"));
    try {
      const file = join(dir, "j.jsonl");
      writeFileSync(file, "{}\n" + "x".repeat(100) + "\n" + "x".repeat(5000) + "\n{}\n");
      const seen: number[] = [];
      let err: unknown = null;
      try {
        for (const l of physicalLines(file, { chunkSize: 64, maxLineBytes: 100 })) seen.push(l.bytes.length);
      } catch (e) {
        err = e;
      }
      expect(seen).toEqual([2, 100]);
      expect(err).toMatchObject({ code: "row_too_large", exitCode: 3, facts: { line: 3, limit_bytes: 100 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a line longer than the limit refuses the journal in the exact and the fast verifier alike", async () => {
    const { MAX_LINE_BYTES } = await import("../../src/fsutil/lines.ts");
    const { verifyJournalSync, verifyJournal } = await import("../../src/journal/verify.ts");
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "bernstein-overlong-"));
    try {
      const file = join(dir, "journal.jsonl");
      const big = Buffer.alloc(MAX_LINE_BYTES + 10, 0x61);
      big[0] = 0x22;
      writeFileSync(file, Buffer.concat([Buffer.from("{}\n\n"), big, Buffer.from("\n{}\n")]));
      const facts = { line: 3, limit_bytes: MAX_LINE_BYTES };
      // the limit set explicitly (verify's default is 256 MiB), the same for both
      expect(() => verifyJournalSync(file, { maxLineBytes: MAX_LINE_BYTES })).toThrow(expect.objectContaining({ code: "row_too_large", facts: expect.objectContaining(facts) }));
      for (const threads of [1, 2]) {
        await expect(verifyJournal(file, { threads, minRangeBytes: 1 << 20, maxRowBytes: MAX_LINE_BYTES })).rejects.toMatchObject({ code: "row_too_large", facts });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("step-journal writer (fuzz: receipt/bucket)", () => {
  // Found by the receipt fuzzer: a bucket whose last complete row lacks its
  // "\n" (a crash between the row and its line break, or a foreign writer)
  // recovered fine, but the next append was glued onto that line, turning
  // a valid journal into one that no longer verifies.
  test("appending after a final row without a line break starts a new line", async () => {
    const { StepJournal } = await import("../../src/steps/writer.ts");
    const { verifyStepJournal } = await import("../../src/steps/verify.ts");
    const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const sdd = mkdtempSync(join(tmpdir(), "bernstein-steps-nl-"));
    try {
      const j = StepJournal.open(sdd, "agent-x");
      j.append({ input_hash: "a0", model: "m1", prompt: "p0" });
      j.append({ input_hash: "a1", model: "m1", prompt: "p1" });
      j.close();
      const bucket = join(sdd, "runtime", "journal", "agent-x", "000000.jsonl");
      writeFileSync(bucket, readFileSync(bucket, "utf8").replace(/\n$/, ""));
      const k = StepJournal.open(sdd, "agent-x");
      expect(k.nextSeq()).toBe(2);
      k.append({ input_hash: "a2", model: "m1", prompt: "p2" });
      k.close();
      const v = await verifyStepJournal(bucket);
      expect(v.errors).toEqual([]);
      expect(v.steps).toBe(3);
    } finally {
      rmSync(sdd, { recursive: true, force: true });
    }
  });
});

describe("task server paths (fuzz: server)", () => {
  // Found by the server fuzzer: a malformed %-escape in a task id
  // (`/tasks/%E0%A4%A/fail`) threw URIError inside the router: a 500.
  test("a malformed percent-escape in the task id is a 400 with the error shape, not a 500", async () => {
    const { startTaskServer } = await import("../../src/server/server.ts");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const sdd = mkdtempSync(join(tmpdir(), "bernstein-uri-"));
    const warnings: string[] = [];
    const s = await startTaskServer({ sddDir: sdd, port: 0, token: "tok", warn: (m) => warnings.push(m) });
    try {
      for (const [method, path] of [["POST", "/tasks/%E0%A4%A/fail"], ["GET", "/tasks/%ZZ"], ["POST", "/tasks/%/complete"]] as const) {
        const res = await fetch(s.url + path, { method, headers: { authorization: "Bearer tok" }, body: method === "POST" ? "{}" : undefined });
        expect(res.status).toBe(400);
        const body = (await res.json()) as { error: string; detail: string };
        expect(body.error).toBe("invalid_request");
        expect(body.detail).toContain("percent-encoding");
      }
      expect(warnings).toEqual([]);
    } finally {
      await s.close();
      rmSync(sdd, { recursive: true, force: true });
    }
  });
});

describe("task server body limit (fuzz: server extreme)", () => {
  // Found by the server fuzzer's 100 MB body extreme: bodies over Bun's own
  // cap (2 MiB) got an empty 413 from Bun instead of the JSON error shape.
  test("a body far over the limit gets 413 with {error, detail}, and the server stays up", async () => {
    const { startTaskServer } = await import("../../src/server/server.ts");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const sdd = mkdtempSync(join(tmpdir(), "bernstein-413-"));
    const s = await startTaskServer({ sddDir: sdd, port: 0, token: "tok" });
    try {
      for (const size of [(1 << 20) + 1, 3 << 20, 64 << 20]) {
        const res = await fetch(`${s.url}/tasks`, { method: "POST", headers: { authorization: "Bearer tok" }, body: new Uint8Array(size).fill(0x20) });
        expect(res.status).toBe(413);
        const body = (await res.json()) as { error: string; detail: string };
        expect(body.error).toBe("body_too_large");
        expect(typeof body.detail).toBe("string");
      }
      expect((await fetch(`${s.url}/health`, { headers: { authorization: "Bearer tok" } })).status).toBe(200);
    } finally {
      await s.close();
      rmSync(sdd, { recursive: true, force: true });
    }
  });
});

describe("step-journal fast path and Python's int limit (fuzz: receipt/bucket)", () => {
  // Found by the receipt fuzzer: a row whose (unhashed) schema_version had
  // more than 4300 digits passed the byte-level fast path of verify, though
  // Python's json.loads refuses it; the exporter (which parses) then
  // dropped the row and wrote a receipt that did not verify.
  test("such a row is invalid JSON to verify, as in Python, and export refuses instead of writing a broken receipt", async () => {
    const { StepJournal } = await import("../../src/steps/writer.ts");
    const { verifyStepJournal } = await import("../../src/steps/verify.ts");
    const { exportReceipt } = await import("../../src/receipts/export.ts");
    const { mkdtempSync, readFileSync, writeFileSync, rmSync, existsSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const sdd = mkdtempSync(join(tmpdir(), "bernstein-bigint-"));
    try {
      const j = StepJournal.open(sdd, "agent-i");
      for (let i = 0; i < 3; i++) j.append({ input_hash: `a${i}`, model: "m1", prompt: `p${i}` });
      j.close();
      const bucket = join(sdd, "runtime", "journal", "agent-i", "000000.jsonl");
      const lines = readFileSync(bucket, "utf8").split("\n");
      lines[1] = lines[1]!.replace('"schema_version":2', `"schema_version":${"9".repeat(4301)}`);
      writeFileSync(bucket, lines.join("\n"));
      const v = await verifyStepJournal(bucket);
      expect(v.ok).toBe(false);
      expect(v.errors[0]).toBe(
        "line 2: invalid JSON (Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit)",
      );
      const out = join(sdd, "out.tar");
      await expect(exportReceipt({ sddDir: sdd, agentId: "agent-i", out })).rejects.toThrow(/fails self-verification/);
      expect(existsSync(out)).toBe(false);
    } finally {
      rmSync(sdd, { recursive: true, force: true });
    }
  });
});

describe("receipt tar reader and PAX paths (fuzz: receipt vs the Python reference)", () => {
  // Found by the receipt fuzzer's Python cross-check: Python's tarfile
  // strips trailing slashes from a PAX `path`, so a member renamed
  // "journal/" is not a journal member there; we counted its rows.
  test("a PAX path with a trailing slash names the member without it, as tarfile does", async () => {
    const { buildTar, paxPath } = await import("../../tools/fuzz/tar.ts");
    const { verifyReceipt } = await import("../../src/receipts/verify.ts");
    const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const { VECTORS, ROOT } = await import("../helpers/cli.ts");
    const dir = mkdtempSync(join(tmpdir(), "bernstein-pax-"));
    try {
      const journal = new Uint8Array(readFileSync(join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl")));
      const lines = new TextDecoder().decode(journal).split("\n").filter(Boolean);
      const last = JSON.parse(lines[lines.length - 1]!.replace(/\bNaN\b/g, "null")) as { step_hash: string };
      const manifest = new TextEncoder().encode(JSON.stringify({ agent_id: "agent-a", head_hash: last.step_hash, steps: lines.length }));
      const tar = join(dir, "pax.tar");
      writeFileSync(tar, buildTar([
        { name: "manifest.json", type: "0", data: manifest },
        { name: "journal/000000.jsonl", type: "0", data: journal },
        paxPath("journal/"),
        { name: "journal/000001.jsonl", type: "0", data: journal },
      ]));
      // The tar reader names the member as tarfile does ...
      const { walkArchive } = await import("../../src/receipts/archive.ts");
      const names: string[] = [];
      await walkArchive(tar, (m) => (names.push(m.name), null));
      expect(names).toEqual(["manifest.json", "journal/000000.jsonl", "journal"]);
      void ROOT;
      // ... and a receipt refuses it (issue 29): GNU tar would not write a file "journal/" where tarfile writes "journal".
      await expect(verifyReceipt(tar)).rejects.toThrow('receipt member "journal/" is a file named like a directory');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a UTF-8 BOM is kept, as Python's utf-8 codec keeps it (fuzz: receipt vs the Python reference)", () => {
  // Found by the receipt fuzzer's Python cross-check: the step-journal
  // walkers and the manifest decoder used TextDecoder's default, which
  // silently drops a leading BOM, so "\ufeff{}" was read as the row {}.
  test("receipt walk, on-disk verify and the manifest refuse a BOM line like json.loads", async () => {
    const { buildTar } = await import("../../tools/fuzz/tar.ts");
    const { verifyReceipt } = await import("../../src/receipts/verify.ts");
    const { verifyStepJournal } = await import("../../src/steps/verify.ts");
    const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const { VECTORS, ROOT } = await import("../helpers/cli.ts");
    const dir = mkdtempSync(join(tmpdir(), "bernstein-bom-"));
    try {
      const text = readFileSync(join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl"), "utf8");
      const lines = text.split("\n").filter(Boolean);
      lines.splice(3, 0, "\ufeff{}");
      const journal = new TextEncoder().encode(lines.join("\n") + "\n");
      const { readTar } = await import("../../tools/fuzz/tar.ts");
      const manifest = new TextDecoder().decode(readTar(new Uint8Array(readFileSync(join(VECTORS, "agent-journal", "agent-a.tar")))).find((m) => m.name === "manifest.json")!.data);
      const tar = join(dir, "bom.tar");
      writeFileSync(tar, buildTar([{ name: "manifest.json", type: "0", data: new TextEncoder().encode(manifest) }, { name: "journal/000000.jsonl", type: "0", data: journal }]));
      const ours = await verifyReceipt(tar);
      const py = JSON.parse(Bun.spawnSync(["python3", join(ROOT, "test", "reference", "verify_receipt.py"), tar], { stdout: "pipe" }).stdout.toString());
      expect({ ok: ours.ok, steps: ours.steps, head: ours.head_hash, errors: ours.errors }).toEqual({ ok: py.ok, steps: py.steps, head: py.head_hash, errors: py.errors });
      expect(ours.errors[0]).toBe("journal line 4: invalid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0))");
      const bucket = join(dir, "000000.jsonl");
      writeFileSync(bucket, journal);
      const disk = await verifyStepJournal(bucket);
      expect(disk.errors[0]).toBe("line 4: invalid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0))");
      const bomManifest = join(dir, "bom-manifest.tar");
      writeFileSync(bomManifest, buildTar([{ name: "manifest.json", type: "0", data: new TextEncoder().encode("\ufeff" + manifest) }, { name: "journal/000000.jsonl", type: "0", data: new TextEncoder().encode(text) }]));
      await expect(verifyReceipt(bomManifest)).rejects.toThrow(/manifest is not valid JSON: Unexpected UTF-8 BOM/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("receipt tar reader and empty long names (fuzz: receipt vs the Python reference)", () => {
  // Found by the receipt fuzzer's Python cross-check: an empty GNU long
  // name (an 'L' header of size 0) or an empty PAX path renames the next
  // member to "" in tarfile; tar-stream kept the ustar name, so we walked
  // that member's rows as journal rows.
  test("the renamed member is not a journal member, as in tarfile", async () => {
    const { buildTar, paxPath } = await import("../../tools/fuzz/tar.ts");
    const { verifyReceipt } = await import("../../src/receipts/verify.ts");
    const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const { VECTORS, ROOT } = await import("../helpers/cli.ts");
    const dir = mkdtempSync(join(tmpdir(), "bernstein-longname-"));
    try {
      const journal = new Uint8Array(readFileSync(join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl")));
      const lines = new TextDecoder().decode(journal).split("\n").filter(Boolean);
      const last = JSON.parse(lines[lines.length - 1]!.replace(/\bNaN\b/g, "null")) as { step_hash: string };
      const manifest = new TextEncoder().encode(JSON.stringify({ agent_id: "agent-a", head_hash: last.step_hash, steps: lines.length }));
      for (const rename of [{ name: "././@LongLink", type: "L", data: new Uint8Array(0) }, paxPath("")]) {
        const tar = join(dir, "long.tar");
        writeFileSync(tar, buildTar([
          { name: "manifest.json", type: "0", data: manifest },
          { name: "journal/000000.jsonl", type: "0", data: journal },
          rename,
          { name: "journal/000001.jsonl", type: "0", data: journal },
        ]));
        // The tar reader names the member "" as tarfile does; a receipt refuses the nameless member (issue 29).
        const { walkArchive } = await import("../../src/receipts/archive.ts");
        const names: string[] = [];
        await walkArchive(tar, (m) => (names.push(m.name), null));
        expect(names).toEqual(["manifest.json", "journal/000000.jsonl", ""]);
        void ROOT;
        await expect(verifyReceipt(tar)).rejects.toThrow(/^receipt member "" is not part of the receipt format/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("hash prefixes in messages count code points (fuzz: receipt vs the Python reference)", () => {
  // Found by the receipt fuzzer's Python cross-check: `hash[:16]` in error
  // messages was a UTF-16 slice, so a stored hash with an astral character
  // quoted one character fewer than Python.
  test("pyPrefix is Python's s[:n], and the receipt messages use it", async () => {
    const { pyPrefix } = await import("../../src/pyjson/python.ts");
    expect(pyPrefix("3🚀ac1859536b8d24e8d8", 16)).toBe("3🚀ac1859536b8d24");
    expect(pyPrefix("ab", 16)).toBe("ab");
    expect(pyPrefix("\ud800abc", 2)).toBe("\ud800a");
    const { buildTar } = await import("../../tools/fuzz/tar.ts");
    const { verifyReceipt } = await import("../../src/receipts/verify.ts");
    const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const { VECTORS, ROOT } = await import("../helpers/cli.ts");
    const dir = mkdtempSync(join(tmpdir(), "bernstein-prefix-"));
    try {
      const text = readFileSync(join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl"), "utf8");
      const lines = text.split("\n").filter(Boolean);
      lines[5] = lines[5]!.replace(/"prev_hash":"(.)/, '"prev_hash":"$1\\ud83d\\ude80');
      const manifest = JSON.stringify({ agent_id: "agent-a", head_hash: "0🚀" + "a".repeat(40), steps: lines.length });
      const tar = join(dir, "prefix.tar");
      writeFileSync(tar, buildTar([{ name: "manifest.json", type: "0", data: new TextEncoder().encode(manifest) }, { name: "journal/000000.jsonl", type: "0", data: new TextEncoder().encode(lines.join("\n") + "\n") }]));
      const ours = await verifyReceipt(tar, { expectedHead: "1🚀" + "b".repeat(30) });
      const py = JSON.parse(Bun.spawnSync(["python3", join(ROOT, "test", "reference", "verify_receipt.py"), tar, "--head", "1🚀" + "b".repeat(30)], { stdout: "pipe" }).stdout.toString());
      expect(ours.errors).toEqual(py.errors);
      expect(ours.errors.some((e) => e.includes("🚀"))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("receipt tar reader and stacked long-name headers (fuzz: receipt vs the Python reference)", () => {
  // Found by the receipt fuzzer's Python cross-check: with two PAX headers
  // before one member, tarfile lets the first (outer) path win; tar-stream
  // let the last win, so a member tarfile names "/journal/000000.jsonl"
  // (not a journal member) was walked under the second header's name.
  test("the first name-setting header wins, as in tarfile", async () => {
    const { buildTar, paxPath } = await import("../../tools/fuzz/tar.ts");
    const { walkArchive } = await import("../../src/receipts/archive.ts");
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "bernstein-stacked-"));
    try {
      const L = (n: string) => ({ name: "././@LongLink", type: "L", data: new TextEncoder().encode(n) });
      const cases: [ReturnType<typeof paxPath>[], string][] = [
        [[paxPath("first/a"), paxPath("second/b")], "first/a"],
        [[L("l1"), L("l2")], "l1"],
        [[L("lname"), paxPath("pname/")], "lname"],
        [[paxPath("pname/"), L("lname")], "pname"],
        [[paxPath("journal/")], "journal"],
        [[paxPath("")], ""],
      ];
      const tar = join(dir, "stacked.tar");
      for (const [pre, expected] of cases) {
        writeFileSync(tar, buildTar([...pre, { name: "journal/000000.jsonl", type: "0", data: new Uint8Array(3) }, { name: "after", type: "0", data: new Uint8Array(1) }]));
        const names: string[] = [];
        await walkArchive(tar, (m) => (names.push(m.name), null));
        const py = Bun.spawnSync(["python3", "-c", "import sys, tarfile, json; print(json.dumps([m.name for m in tarfile.open(sys.argv[1]).getmembers()]))", tar], { stdout: "pipe" });
        expect(names).toEqual(JSON.parse(py.stdout.toString()));
        expect(names).toEqual([expected, "after"]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
