import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GENESIS_HASH, verifyStepJournal } from "../../src/steps/index.ts";
import { VECTORS } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";

const tmp = mkdtempSync(join(tmpdir(), "steps-verify-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const AJ = join(VECTORS, "agent-journal");
const expectJson = JSON.parse(readFileSync(join(AJ, "expect.json"), "utf8"));
const bucket = (a: string) => join(AJ, "sdd", "runtime", "journal", a, "000000.jsonl");

function write(name: string, text: string | Uint8Array): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

/**
 * Python writes chains of hazardous rows in canonical form and in a foreign
 * spelling (raw UTF-8, spaces, shuffled keys, `\/`, `1E-5`); it hashes the
 * parsed values, so both must verify with the same head.
 */
const PY_CHAINS = `
import json, sys, hashlib, random, re
random.seed(7)
vals = ["plain", "h\\u00e9llo \\U0001F600", "\\u2028sep\\u2029", "\\ud800 lone", "ctl\\x01\\x7f", 1.0, 1, 1e16, 1e-05, -0.0, 5e-324,
        float("nan"), float("inf"), 2**70, {"z": 1, "a": [1, 2.5, None], "\\U0001F600": True, "\\uffff": False}, [], {}, "", None, True]
def h(d):
    return hashlib.sha256(json.dumps(d, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
rows = []
prev = "0" * 64
for i in range(300):
    r = {"seq": i, "prev_hash": prev, "input_hash": "in%d" % i, "model": random.choice(["m1", None, "\\u00e9"]),
         "prompt": random.choice(vals), "tool_call": random.choice(vals), "tool_result": random.choice(vals),
         "ts": 1747000000.0 + i / 7, "blob_refs": [], "schema_version": 2}
    if i % 3 == 0: r["effort"] = random.choice(["high", "", 0])
    d = {k: r[k] for k in ("prev_hash", "input_hash", "model", "prompt", "tool_call", "tool_result")}
    if r.get("effort") is not None: d["effort"] = r["effort"]
    r["step_hash"] = h(d)
    prev = r["step_hash"]
    rows.append(r)
canon = "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\\n" for r in rows)
def foreign(r):
    keys = list(r.keys()); random.shuffle(keys)
    s = json.dumps({k: r[k] for k in keys}, ensure_ascii=False)
    # a lone surrogate cannot be written as UTF-8: a foreign writer escapes it
    s = re.sub("[\\ud800-\\udfff]", lambda m: "\\\\u%04x" % ord(m.group()), s)
    return s.replace("/", "\\\\/").replace("1e-05", "1E-5")
# lines containing raw U+2028 would be split by nothing in universal mode, fine for disk
alien = "".join(foreign(r) + "\\r\\n" for r in rows)
print(json.dumps({"canon": canon, "alien": alien, "head": prev}))
`;

describe("verifyStepJournal", () => {
  test("the shared vectors verify with the reference heads", async () => {
    const a = await verifyStepJournal(bucket("agent-a"));
    expect(a).toEqual({ ok: true, head_hash: expectJson["agent-a"].head, steps: 60, errors: [] });
    expect((await verifyStepJournal(bucket("agent-b"))).head_hash).toBe(expectJson["agent-a"].head);
    const c = await verifyStepJournal(bucket("agent-c"));
    expect(c.ok).toBe(true);
    expect(c.steps).toBe(60);
    expect(await verifyStepJournal(bucket("agent-a"), expectJson["agent-a"].head)).toMatchObject({ ok: true });
  });

  test("canonical and foreign spellings of hazardous rows verify like Python", async () => {
    const py = runPython(PY_CHAINS, null) as { canon: string; alien: string; head: string };
    const canon = await verifyStepJournal(write("canon.jsonl", py.canon), py.head);
    expect(canon).toEqual({ ok: true, head_hash: py.head, steps: 300, errors: [] });
    const alien = await verifyStepJournal(write("alien.jsonl", py.alien), py.head);
    expect(alien).toEqual({ ok: true, head_hash: py.head, steps: 300, errors: [] });
  });

  test("tampering is reported with line-numbered messages (§1.5)", async () => {
    const lines = readFileSync(bucket("agent-a"), "utf8").split("\n").filter(Boolean);
    const edited = [...lines];
    edited[4] = edited[4]!.replace('"prompt":"Step 4', '"prompt":"Step X');
    const r = await verifyStepJournal(write("edit.jsonl", edited.join("\n") + "\n"));
    expect(r.ok).toBe(false);
    expect(r.steps).toBe(60);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^line 5: step_hash mismatch \(expected [0-9a-f]{16}\.\.\., got c6c6850c83487e9b\.\.\.\)$/);

    const deleted = lines.filter((_, i) => i !== 10);
    const d = await verifyStepJournal(write("del.jsonl", deleted.join("\n") + "\n"));
    expect(d.errors[0]).toBe("line 11: seq mismatch (expected 10, got 11)");
    expect(d.errors[1]).toMatch(/^line 11: prev_hash mismatch \(expected [0-9a-f]{16}\.\.\., got [0-9a-f]{16}\.\.\.\)$/);
    expect(d.steps).toBe(59);
  });

  test("junk, non-object and blank lines; JSON errors carry Python's text", async () => {
    const lines = readFileSync(bucket("agent-a"), "utf8").split("\n").filter(Boolean).slice(0, 3);
    const text = [lines[0], "", "  ", '{"seq": 1,', "[1, 2]", lines[1], lines[2]].join("\n") + "\n";
    const py = runPython(`import json,sys
try:
    json.loads(sys.stdin.read() and '{"seq": 1,')
except json.JSONDecodeError as e:
    print(json.dumps(str(e)))`, null) as string;
    const r = await verifyStepJournal(write("junk.jsonl", text));
    expect(r.errors).toEqual([`line 4: invalid JSON (${py})`, "line 5: entry is not a JSON object"]);
    expect(r.steps).toBe(3);
  });

  test("universal newlines: CRLF and lone CR end lines", async () => {
    const lines = readFileSync(bucket("agent-a"), "utf8").split("\n").filter(Boolean);
    const crlf = await verifyStepJournal(write("crlf.jsonl", lines.join("\r\n") + "\r\n"), expectJson["agent-a"].head);
    expect(crlf.ok).toBe(true);
    const cr = await verifyStepJournal(write("cr.jsonl", lines.join("\r")), expectJson["agent-a"].head);
    expect(cr).toMatchObject({ ok: true, steps: 60 });
  });

  test("seq coercion: numeric strings count, non-integers are a chain error", async () => {
    const lines = readFileSync(bucket("agent-a"), "utf8").split("\n").filter(Boolean).slice(0, 2);
    const strSeq = lines[1]!.replace('"seq":1', '"seq":"1"');
    expect((await verifyStepJournal(write("strseq.jsonl", [lines[0], strSeq].join("\n")))).ok).toBe(true);
    const bad = lines[1]!.replace('"seq":1', '"seq":"abc"');
    const r = await verifyStepJournal(write("badseq.jsonl", [lines[0], bad].join("\n")));
    expect(r.errors).toEqual(["line 2: seq is not an integer (got 'abc')"]);
    expect(r.steps).toBe(2);
  });

  test("missing file: ok only for no or genesis expected head", async () => {
    const p = join(tmp, "nope.jsonl");
    expect(await verifyStepJournal(p)).toEqual({ ok: true, head_hash: GENESIS_HASH, steps: 0, errors: [] });
    expect((await verifyStepJournal(p, GENESIS_HASH)).ok).toBe(true);
    const r = await verifyStepJournal(p, "abc");
    expect(r.errors).toEqual([`no journal file at ${p}; expected head 'abc'`]);
  });

  test("head mismatch and invalid UTF-8", async () => {
    const r = await verifyStepJournal(bucket("agent-a"), "f".repeat(64));
    expect(r.errors).toEqual([`head mismatch: expected ffffffffffffffff..., got 0bf4d0f192bed588...`]);
    const lines = readFileSync(bucket("agent-a")).toString("utf8").split("\n").filter(Boolean).slice(0, 1);
    const bytes = Buffer.concat([Buffer.from(lines[0] + "\n"), Buffer.from([0xff, 0xfe, 0x0a])]);
    const u = await verifyStepJournal(write("utf8.jsonl", bytes));
    expect(u.errors).toEqual(["line 2: invalid JSON (line is not valid UTF-8)"]);
  });
});
