/** Hash pre-images: the spec's worked vectors, and random payloads against Python. */
import { describe, expect, test } from "bun:test";
import {
  eventHash,
  eventPreimage,
  NON_DETERMINISTIC_FIELDS,
  payloadHash,
  payloadPreimage,
  sha256Hex,
} from "../../src/journal/index.ts";
import { canonical, parse, pyFloat, type PyObject } from "../../src/pyjson/index.ts";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { runPython } from "../helpers/python.ts";
import { Gen } from "../pyjson/gen.ts";

describe("payload and event hash pre-images (spec §1.4, §1.5)", () => {
  test("run_started worked vector", () => {
    expect(payloadPreimage("run_started", { run_id: "run-1" })).toBe('{"event":"run_started","run_id":"run-1"}');
    expect(payloadHash("run_started", { run_id: "run-1" })).toBe(
      "6e81f94a09b09f634d82a0901b265bb12ec31d1d11adb05d2b11da5dfc874a37",
    );
  });

  test("stress vector: non-ASCII, astral, 1.0, 1e16, 1e-05, -0.0, NaN", () => {
    const payload = parse(
      '{"model":"задача 🚀","cost_usd":1.0,"x":1e16,"y":1e-05,"z":-0.0,"n":NaN}',
    ) as PyObject;
    expect(payloadPreimage("agent_spawned", payload)).toBe(
      '{"cost_usd":1.0,"event":"agent_spawned","model":"\\u0437\\u0430\\u0434\\u0430\\u0447\\u0430 \\ud83d\\ude80","n":NaN,"x":1e+16,"y":1e-05,"z":-0.0}',
    );
    expect(payloadHash("agent_spawned", payload)).toBe("eedd55821f29fe2e31bce9fd08cd9c0f1d45b26a8a0a70ca8c4398b95d16d710");
    // The same payload from JS values (pyFloat forces float spelling).
    const js = { model: "задача 🚀", cost_usd: pyFloat(1), x: pyFloat(1e16), y: 1e-5, z: -0, n: NaN };
    expect(payloadHash("agent_spawned", js)).toBe("eedd55821f29fe2e31bce9fd08cd9c0f1d45b26a8a0a70ca8c4398b95d16d710");
  });

  test("the four-row chain of the spec", () => {
    const rows: [string, Record<string, string>, string][] = [
      ["run_started", { run_id: "run-1" }, "1b53658dbcd3703ee156159b82016825123eb01d33c876e8ae877da6a8139c7d"],
      ["task_claimed", { task_id: "T-1" }, "b280b2e9582443e8707013e4ac85a25beacf9f49e7a16079dc8d6d27ab7c1a82"],
      ["task_completed", { task_id: "T-1" }, "f98f0837876c3e3a91130e9cded2ceca217ea290dfda491b3bec26b7e7d9837d"],
      ["run_completed", { run_id: "run-1" }, "beb8b92285cb2d3e5f1a4fc30b1024fb9848da6105bbada9fa19fb0933847f71"],
    ];
    let prev = "";
    rows.forEach(([event, payload, want], i) => {
      const ph = payloadHash(event, payload);
      if (i === 0) {
        expect(eventPreimage(prev, event, ph, i)).toBe(
          `{"event_type":"run_started","index":0,"payload_hash":"${ph}","prev_hash":""}`,
        );
      }
      prev = eventHash(prev, event, ph, i);
      expect(prev).toBe(want);
    });
  });

  test("envelope fields are excluded and a payload key named event is replaced", () => {
    const base = payloadHash("e", { a: 1 });
    expect(payloadHash("e", { a: 1, ts: 5, elapsed_s: 1.5, index: 9, prev_hash: "x", payload_hash: "y", event_hash: "z" })).toBe(base);
    expect(payloadHash("e", { a: 1, event: "other" })).toBe(base);
    expect(payloadHash("e", { a: 2 })).not.toBe(base);
    expect([...NON_DETERMINISTIC_FIELDS]).toEqual(["elapsed_s", "event_hash", "index", "payload_hash", "prev_hash", "ts"]);
  });

  test("sha256Hex agrees with @noble/hashes (portable cross-check)", () => {
    for (const s of ["", "abc", '{"event":"x"}', "\u00e9\ud83d\ude80"]) {
      expect(sha256Hex(s)).toBe(bytesToHex(sha256(new TextEncoder().encode(s))));
    }
  });

  test("1500 random hostile payloads: pre-images and hashes equal Python's", () => {
    const g = new Gen(8675309);
    const cases: { event: string; payload: string }[] = [];
    for (let i = 0; i < 1500; i++) {
      cases.push({ event: (parse(g.stringText(8)) as string) || "e", payload: g.objectText(0, 1) });
    }
    const py = runPython(
      `
import hashlib, json, sys
ND = {"ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"}
out = []
for i, c in enumerate(json.load(sys.stdin)):
    data = json.loads(c["payload"])
    projected = {k: v for k, v in data.items() if k not in ND}
    projected["event"] = c["event"]
    pre = json.dumps(projected, sort_keys=True, separators=(",", ":"), default=str)
    ph = hashlib.sha256(pre.encode()).hexdigest()
    eh = hashlib.sha256(json.dumps({"prev_hash": ph[:7], "event_type": c["event"], "payload_hash": ph, "index": i}, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    out.append([pre, ph, eh])
print(json.dumps(out))
`,
      cases,
    ) as [string, string, string][];
    const bad: unknown[] = [];
    cases.forEach((c, i) => {
      const payload = parse(c.payload) as PyObject;
      const pre = payloadPreimage(c.event, payload);
      const ph = payloadHash(c.event, payload);
      const eh = eventHash(ph.slice(0, 7), c.event, ph, i);
      if (pre !== py[i]![0] || ph !== py[i]![1] || eh !== py[i]![2]) bad.push({ c, ours: [pre, ph, eh], py: py[i] });
    });
    expect(bad.slice(0, 3)).toEqual([]);
    // The pre-image is the canonical form of the projected object.
    const p = parse('{"b": [1.50, {"z": 1, "a": 2}], "a": "\\u00e9"}') as PyObject;
    expect(payloadPreimage("x", p)).toBe(canonical(new Map([...p, ["event", "x"]])));
  });
});
