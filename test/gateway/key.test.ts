import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { deriveReplayKey, keyScheme } from "../../src/gateway/key.ts";
import { parse } from "../../src/pyjson/index.ts";
import { parseRowBytes } from "../../src/pyjson/row.ts";
import type { PyObject } from "../../src/pyjson/types.ts";
import { ROOT } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";

describe("ReplayGateway v1: keys (spec upstream-parity §5.1)", () => {
  test("the spec's examples", () => {
    expect(deriveReplayKey("abc")).toBe("v1:69d89f774522a3eb5294043f9f1e50408997181036634a2157e298dea3d2a00b");
    expect(deriveReplayKey("")).toBe("v1:356420c9fb49797734c66cfba47fe51d8bbe893a275ec82217aa17a9a6e8e0af");
    expect(keyScheme("v1:356420c9fb49797734c66cfba47fe51d8bbe893a275ec82217aa17a9a6e8e0af")).toBe("v1");
    expect(keyScheme("abc")).toBe("unversioned");
  });

  test("every ENC tag agrees with the independent Python encoder", () => {
    const values = ['"x"', "null", "true", "false", "0", "3", "-2", "1.5", "1e-07", "1e+22", "12345678901234567890", '["a", 1, [null, "é🚀"]]', '{"b": 1, "a": [2]}', '"юникод"'];
    const script = `import json, sys\nsys.path.insert(0, ${JSON.stringify(join(ROOT, "test", "reference"))})\nfrom upstream_writers import replay_key\nprint(json.dumps([replay_key(json.loads(v)) for v in json.load(sys.stdin)]))`;
    const want = runPython(script, values) as string[];
    expect(values.map((v) => deriveReplayKey(parse(v)))).toEqual(want);
    // each value as a log line of 64 KiB or more keeps it: its lists, objects and strings still bytes
    const asBytes = (v: string) => (parseRowBytes(new TextEncoder().encode(`{"key": ${v}}`), 0, 0) as PyObject).get("key")!;
    expect(values.map((v) => deriveReplayKey(asBytes(v)))).toEqual(want);
  });
});
