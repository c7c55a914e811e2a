/** The one hash-profile registry (src/journal/hash-profiles.ts): its entries, lookups, and the py-json-v1 pre-image builders against the generic ones. */
import { describe, expect, test } from "bun:test";
import {
  DEFAULT_PROFILE,
  HASH_PROFILES,
  JCS_V2,
  PY_JSON_V1,
  UnknownHashProfileError,
  hashProfile,
  journalProfile,
  profileNames,
} from "../../src/journal/hash-profiles.ts";
import { eventHash, eventPreimage, hashProfileOf, payloadPreimage } from "../../src/journal/hash.ts";
import { canonical } from "../../src/pyjson/encode.ts";
import { jcs } from "../../src/pyjson/jcs.ts";
import { parse } from "../../src/pyjson/parse.ts";
import { PyNum, type PyLike, type PyObject } from "../../src/pyjson/types.ts";
import { Gen } from "../pyjson/gen.ts";

describe("the registry", () => {
  test("two profiles; what each may be used for", () => {
    expect(HASH_PROFILES.map((p) => p.name)).toEqual(["py-json-v1", "jcs-v2"]);
    expect(DEFAULT_PROFILE).toBe(PY_JSON_V1);
    expect(profileNames("journal")).toEqual(["py-json-v1"]);
    expect(profileNames("fastKernels")).toEqual(["py-json-v1"]);
    expect(profileNames("receiptBinding")).toEqual(["py-json-v1", "jcs-v2"]);
    // A legacy spine names no profile; a v2 spine names jcs-v2, whose tags are not checked here.
    expect(profileNames("spineHead")).toEqual(["jcs-v2"]);
    expect([PY_JSON_V1.spineTags, JCS_V2.spineTags]).toEqual([true, false]);
    expect(Object.isFrozen(PY_JSON_V1) && Object.isFrozen(JCS_V2)).toBe(true);
  });

  test("lookups are by use: a name valid for one use is unknown for another; non-strings are unknown", () => {
    expect(hashProfile("jcs-v2", "receiptBinding")).toBe(JCS_V2);
    expect(hashProfile("jcs-v2", "journal")).toBeUndefined();
    expect(hashProfile("py-json-v1", "spineHead")).toBeUndefined();
    expect(hashProfile(1, "receiptBinding")).toBeUndefined();
    expect(journalProfile("py-json-v1")).toBe(PY_JSON_V1);
    expect(() => journalProfile("jcs-v2")).toThrow(UnknownHashProfileError);
    expect(() => journalProfile("jcs-v3")).toThrow('unknown hash_profile "jcs-v3": refusing to verify (known: py-json-v1)');
  });

  test("a row's profile: absent is the default, a known journal profile is itself, anything else fails closed", () => {
    const row = (text: string) => parse(text) as PyObject;
    expect(hashProfileOf(row('{"event": "e"}'))).toBe(DEFAULT_PROFILE);
    expect(hashProfileOf(row('{"event": "e", "hash_profile": "py-json-v1"}'))).toBe(PY_JSON_V1);
    expect(() => hashProfileOf(row('{"hash_profile": "jcs-v2"}'))).toThrow('unknown hash_profile "jcs-v2"');
    expect(() => hashProfileOf(row('{"hash_profile": [1, "a"]}'))).toThrow('unknown hash_profile "[1,\\"a\\"]"');
  });
});

describe("pre-images", () => {
  test("py-json-v1's streaming payload builder equals the generic one (the projected payload canonicalised whole), on generated rows", () => {
    const g = new Gen(28);
    for (let i = 0; i < 400; i++) {
      const row = parse(g.objectText(3, 1)) as PyObject;
      if (i % 3 === 0) row.set("ts", new PyNum("1.5", true)).set("index", new PyNum("7", false)).set("event", "x");
      const projected = new Map<string, PyLike>();
      for (const [k, v] of row) if (!["elapsed_s", "event_hash", "index", "payload_hash", "prev_hash", "ts"].includes(k)) projected.set(k, v);
      projected.set("event", "t\u00e9");
      expect(payloadPreimage("t\u00e9", row, PY_JSON_V1)).toBe(canonical(projected as unknown as PyLike));
    }
  });

  test("py-json-v1's event pre-image is the canonical object; jcs-v2 spells the same object by RFC 8785", () => {
    const obj = new Map<string, PyLike>([["prev_hash", "ab"], ["event_type", "t\u00e9 \u2713"], ["payload_hash", "cd"], ["index", 12]]);
    expect(eventPreimage("ab", "t\u00e9 \u2713", "cd", 12)).toBe(canonical(obj as unknown as PyLike));
    expect(eventPreimage("ab", "t\u00e9 \u2713", "cd", 12, JCS_V2)).toBe('{"event_type":"t\u00e9 \u2713","index":12,"payload_hash":"cd","prev_hash":"ab"}');
    expect(eventHash("", "e", "0".repeat(64), 0)).toBe(eventHash("", "e", "0".repeat(64), 0, PY_JSON_V1));
  });

  test("jcs-v2's canonical form: UTF-16 key order, ECMAScript numbers, minimal escapes", () => {
    const v = parse('{"b": [1.0, 1e21, 0.1], "a": "\\u00e9\\n", "\\ud83d\\ude00": null, "\\uff21": true}') as PyObject;
    expect(JCS_V2.canonical(v)).toBe('{"a":"é\\n","b":[1,1e+21,0.1],"😀":null,"Ａ":true}');
    expect(jcs(v)).toBe(JCS_V2.canonical(v));
    expect(PY_JSON_V1.canonical(v)).toBe(canonical(v));
  });
});
