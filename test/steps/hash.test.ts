import { describe, expect, test } from "bun:test";
import { GENESIS_HASH, stepHash, stepPreimage } from "../../src/steps/hash.ts";
import { parse } from "../../src/pyjson/parse.ts";
import { runPython } from "../helpers/python.ts";

describe("step hash (§1.3 vectors)", () => {
  test("single step with tool call and result", () => {
    const f = { prev_hash: GENESIS_HASH, input_hash: "aa", model: "m1", prompt: "hi", tool_call: { name: "echo" }, tool_result: { ok: true } };
    expect(stepPreimage(f)).toBe(
      `{"input_hash":"aa","model":"m1","prev_hash":"${GENESIS_HASH}","prompt":"hi","tool_call":{"name":"echo"},"tool_result":{"ok":true}}`,
    );
    expect(stepHash(f)).toBe("6a68b52f7672cdaddf9470371a23cc77f8fffd67f9df2dafd143ef1585872cea");
  });

  test("three-step chain", () => {
    const want = [
      "f66c06cdfb9e18c91fd5ca4053cf1fcc3b0662cc28ecc76627c2dffd0ab62dd0",
      "52475a9a18a7ec25759bd2bbd22298e85d380ed7026458e8e7b2e83d27d7d14a",
      "fabfc7f3d8d41a7f2a433455e4d0ab3b1f700ddab69e20f9a40520ad9854bd10",
    ];
    let prev = GENESIS_HASH;
    for (let i = 0; i < 3; i++) {
      prev = stepHash({ prev_hash: prev, input_hash: `a${i}`, model: "m1", prompt: `p${i}`, tool_call: null, tool_result: null });
      expect(prev).toBe(want[i]!);
    }
  });

  test("effort is hashed only when present", () => {
    const base = { prev_hash: GENESIS_HASH, input_hash: "a0", model: "m1", prompt: "p0", tool_call: null, tool_result: null };
    expect(stepHash({ ...base, effort: "high" })).toBe("4f4816ba6fda308b2b2c367e24e886291ba58dc5813e45d9c8453eb9e8bdd82e");
    expect(stepHash({ ...base, effort: null })).toBe("f66c06cdfb9e18c91fd5ca4053cf1fcc3b0662cc28ecc76627c2dffd0ab62dd0");
  });

  test("non-ASCII is escaped with lowercase hex and surrogate pairs", () => {
    const p = stepPreimage({ prev_hash: GENESIS_HASH, input_hash: "x", model: null, prompt: "héllo 😀", tool_call: null, tool_result: null });
    expect(p).toContain('"prompt":"h\\u00e9llo \\ud83d\\ude00"');
  });

  test("float and int lexemes stay distinct", () => {
    const row = parse('{"tool_call":{"n":1.0},"tool_result":{"n":1}}') as Map<string, any>;
    const p = stepPreimage({ prev_hash: GENESIS_HASH, input_hash: "x", model: null, prompt: null, tool_call: row.get("tool_call"), tool_result: row.get("tool_result") });
    expect(p).toContain('"tool_call":{"n":1.0},"tool_result":{"n":1}');
  });

  test("each hashed field changes the hash; key order of nested objects does not", () => {
    const base = { prev_hash: GENESIS_HASH, input_hash: "a", model: "m", prompt: "p", tool_call: { a: 1, b: 2 }, tool_result: "r" };
    const h = stepHash(base);
    for (const [k, v] of Object.entries({ prev_hash: "1".repeat(64), input_hash: "b", model: "n", prompt: "q", tool_call: { a: 1 }, tool_result: "s" })) {
      expect(stepHash({ ...base, [k]: v })).not.toBe(h);
    }
    expect(stepHash({ ...base, tool_call: { b: 2, a: 1 } })).toBe(h);
  });

  test("agrees with Python json/hashlib on hazardous values (one batched process)", () => {
    const texts = [
      '{"prev_hash":"x","input_hash":"i","model":"m","prompt":"\\u2028 \\ud800 lone","tool_call":{"z":1e16,"a":-0.0,"\\ud83d\\ude00":1,"\\uffff":2},"tool_result":[1e-5,5e-324,NaN,Infinity,-Infinity,123456789012345678901234567890]}',
      '{"prev_hash":"x","input_hash":"i","model":null,"prompt":"tab\\tnl\\n del\\u007f ctl\\u0001","tool_call":null,"tool_result":{"b":true,"a":false,"c":null},"effort":"low"}',
      '{"prev_hash":"x","input_hash":"i","model":"m","prompt":"","tool_call":[],"tool_result":{},"effort":""}',
    ];
    const py = runPython(
      `import json,sys,hashlib
out=[]
for t in json.load(sys.stdin):
    r=json.loads(t)
    d={k:r[k] for k in ("prev_hash","input_hash","model","prompt","tool_call","tool_result")}
    if r.get("effort") is not None: d["effort"]=r["effort"]
    out.append(hashlib.sha256(json.dumps(d,sort_keys=True,separators=(",",":")).encode()).hexdigest())
print(json.dumps(out))`,
      texts,
    ) as string[];
    texts.forEach((t, i) => {
      const r = parse(t) as Map<string, any>;
      const h = stepHash({
        prev_hash: r.get("prev_hash"),
        input_hash: r.get("input_hash"),
        model: r.get("model"),
        prompt: r.get("prompt"),
        tool_call: r.get("tool_call"),
        tool_result: r.get("tool_result"),
        effort: r.get("effort") ?? null,
      });
      expect(h).toBe(py[i]!);
    });
  });
});
