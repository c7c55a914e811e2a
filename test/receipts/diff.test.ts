import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diffJournals } from "../../src/receipts/diff.ts";
import { setBytePathMin } from "../../src/pyjson/row.ts";
import { resolveJournalSource, sourceEntries } from "../../src/receipts/source.ts";
import { BernsteinError } from "../../src/errors/index.ts";
import { VECTORS } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";

const AJ = join(VECTORS, "agent-journal");
const SDD = join(AJ, "sdd");
const EXPECT = JSON.parse(readFileSync(join(AJ, "expect.json"), "utf8"));
const tmp = mkdtempSync(join(tmpdir(), "diff-journal-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const bucket = (a: string) => join(SDD, "runtime", "journal", a, "000000.jsonl");

async function diff(a: string, b: string) {
  return diffJournals(sourceEntries(await resolveJournalSource(a, SDD)), sourceEntries(await resolveJournalSource(b, SDD)));
}

function file(name: string, text: string): string {
  writeFileSync(join(tmp, name), text);
  return join(tmp, name);
}

describe("diff-journal", () => {
  test("agent-a vs agent-c diverges where the reference says", async () => {
    const d = await diff("agent-a", "agent-c");
    expect(d).toMatchObject(EXPECT.diff_agent_a_vs_c);
    if (!d.diverged) throw new Error("unreachable");
    expect(d.reason).toBe("field(s) differ: model");
    expect(d.left_values.get("model")).toBe(null);
    expect(d.right_values.get("model")).toBe("changed-model");
  });

  test("identical chains match, whether agent id, journal file or receipt", async () => {
    expect(await diff("agent-a", "agent-b")).toEqual({ diverged: false });
    expect(await diff(join(AJ, "agent-a.tar"), "agent-b")).toEqual({ diverged: false });
    expect(await diff(bucket("agent-a"), join(AJ, "agent-a.tar"))).toEqual({ diverged: false });
  });

  test("length mismatches are reported at the first missing seq", async () => {
    const lines = readFileSync(bucket("agent-a"), "utf8").split("\n").filter(Boolean);
    const short = file("short.jsonl", lines.slice(0, 58).join("\n") + "\n");
    const d = await diff("agent-a", short);
    expect(d).toMatchObject({
      diverged: true,
      seq: 58,
      fields_changed: ["length"],
      reason: "chain length mismatch: left has 2 extra step(s) past seq 57; missing step would be at this seq",
    });
    if (!d.diverged) throw new Error("unreachable");
    expect(Number((d.left_values.get("steps") as { raw: string }).raw)).toBe(60);
    const e = await diff(file("empty.jsonl", ""), "agent-a");
    expect(e).toMatchObject({ reason: "chain length mismatch: right has 60 extra step(s) past seq -1; missing step would be at this seq" });
  });

  test("missing agents and bad ids are refused", async () => {
    const err = async (fn: () => unknown) => {
      try {
        await fn();
      } catch (e) {
        return (e as BernsteinError).code;
      }
      return "none";
    };
    expect(await err(() => resolveJournalSource("nobody", SDD))).toBe("agent_journal_missing");
    expect(await err(() => resolveJournalSource("../../no-such-agent-dir", SDD))).toBe("invalid_agent_id");
    // An existing directory named as an input is refused before any read.
    expect(await err(() => resolveJournalSource(import.meta.dir, SDD))).toBe("input_not_regular_file");
  });

  test("field equality follows Python == (checked against python3)", async () => {
    const pairs: [string, string][] = [
      ['{"tool_call":{"n":1}}', '{"tool_call":{"n":1.0}}'],
      ['{"tool_call":{"n":true}}', '{"tool_call":{"n":1}}'],
      ['{"tool_call":{"n":NaN}}', '{"tool_call":{"n":NaN}}'],
      ['{"tool_result":NaN}', '{"tool_result":NaN}'],
      ['{"tool_call":[NaN]}', '{"tool_call":[NaN]}'],
      ['{"tool_call":{"a":1,"b":2}}', '{"tool_call":{"b":2,"a":1}}'],
      ['{"tool_call":[1,2]}', '{"tool_call":[2,1]}'],
      ['{"model":null}', "{}"],
      ['{"effort":"high"}', "{}"],
      ['{"prev_hash":null}', '{"prev_hash":"None"}'],
      ['{"prompt":0}', '{"prompt":false}'],
      ['{"prompt":-0.0}', '{"prompt":0}'],
      // containers of 256 bytes or more: a huge row keeps them as bytes (src/pyjson/row.ts), compared as these trees
      [`{"tool_call":{"n":NaN,"pad":"${"x".repeat(300)}"}}`, `{"tool_call":{"n":NaN,"pad":"${"x".repeat(300)}"}}`],
      [`{"tool_result":[NaN,"${"x".repeat(300)}"]}`, `{"tool_result":[NaN,"${"x".repeat(300)}"]}`],
      [`{"tool_call":{"n":1,"pad":"${"x".repeat(300)}"}}`, `{"tool_call":{"n":1.0,"pad":"${"x".repeat(300)}"}}`],
      [`{"tool_call":{"n":1,"pad":"${"x".repeat(300)}"}}`, `{"tool_call":{"n":2,"pad":"${"x".repeat(300)}"}}`],
    ];
    const want = runPython(
      `import json,sys
F=("prev_hash","input_hash","model","prompt","tool_call","tool_result","effort")
def get(r,f):
    return str(r.get(f,"")) if f in ("prev_hash","input_hash") else r.get(f)
out=[]
for a,b in json.load(sys.stdin):
    x=json.loads(a); y=json.loads(b)
    out.append([f for f in F if get(x,f)!=get(y,f)])
print(json.dumps(out))`,
      pairs,
    ) as string[][];
    const fieldsChanged = async (): Promise<string[][]> => {
      const got: string[][] = [];
      for (const [a, b] of pairs) {
        const row = (t: string) => JSON.stringify({ ...JSON.parse(t.replace(/NaN/g, '"__nan__"')), seq: 0, step_hash: "x" }).replace(/"__nan__"/g, "NaN");
        const d = await diffJournals(sourceEntries({ kind: "file", path: file("l.jsonl", row(a) + "\n") }), sourceEntries({ kind: "file", path: file("r.jsonl", row(b) + "\n") }));
        got.push(d.diverged ? d.fields_changed : []);
      }
      return got;
    };
    expect(await fieldsChanged()).toEqual(want);
    // every row read as a huge row is
    const prev = setBytePathMin(0);
    try {
      expect(await fieldsChanged()).toEqual(want);
    } finally {
      setBytePathMin(prev);
    }
  });
});
