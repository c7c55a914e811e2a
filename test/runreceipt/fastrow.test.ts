/**
 * The run receipt's fast row reader (src/runreceipt/fastrow.ts, a consumer
 * of the codec's row index) against the exact path: whenever it takes a
 * row, the row is in the canonical spelling and every field it hands out
 * equals what the parsed row gives; it takes every canonical row without
 * a `hash_profile` (escaped keys, sorted by their code points, and NaN and
 * Infinity included: CJ spells them as Python's writer does); an `agent_spawned` row's endpoint read
 * from its bytes is the parsed row's, escaped members included.
 */
import { expect, test } from "bun:test";
import { canonical, isPyObject, parse, PyNum, type PyValue } from "../../src/pyjson/index.ts";
import { ENDPOINT_KEYS, EndpointSet } from "../../src/runreceipt/binding.ts";
import { canonicalRow } from "../../src/runreceipt/fastrow.ts";
import { Gen } from "../pyjson/gen.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const ENVELOPE = ["elapsed_s", "event_hash", "index", "payload_hash", "prev_hash", "ts"];

/** Some key in the tree is spelled with an escape (its order is its code points', not its bytes'). */
function escapedKey(v: PyValue): boolean {
  if (isPyObject(v)) return [...v].some(([k, x]) => canonical(k).includes("\\") || escapedKey(x));
  if (Array.isArray(v)) return v.some(escapedKey);
  return false;
}

function rows(seed: number, n: number): string[] {
  const g = new Gen(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let v: PyValue;
    try {
      v = parse(dec.decode(enc.encode(g.objectText(0, 1))));
    } catch {
      continue;
    }
    if (!isPyObject(v)) continue;
    if (g.chance(0.8)) v.set("event", g.pick(["tool_call", "agent_spawned", "x\\y", "é"]));
    if (g.chance(0.9)) v.set("prev_hash", "0".repeat(64));
    if (g.chance(0.9)) v.set("event_hash", "a".repeat(64));
    if (g.chance(0.3)) v.set("ts", new PyNum("1.5", true));
    if (g.chance(0.3)) v.set("endpoint_url", g.pick<PyValue>(["http://x", 'q"', new PyNum("3", false)]));
    // the members the binding reads: plain, escaped, empty, not a string
    for (const k of ENDPOINT_KEYS) if (g.chance(0.5)) v.set(k, g.pick<PyValue>(["claude", "gpt-5", "", 'q"', "t\tab", "ünï", "\ud800", new PyNum("3", false), null]));
    if (g.chance(0.05)) v.set("hash_profile", "p");
    const text = canonical(v);
    out.push(text, g.chance(0.5) ? text.replace(":", ": ") : text + "]");
  }
  return out;
}

test("every row it takes gives the exact path's fields", () => {
  const bad: unknown[] = [];
  let taken = 0;
  let escapedEndpoints = 0;
  let escapedKeys = 0;
  for (const text of rows(31001, 3000)) {
    const b = enc.encode(text);
    const r = canonicalRow(b);
    let v: PyValue | null = null;
    const end = text.endsWith("]") ? text.length - 1 : text.length;
    try {
      v = parse(text.slice(0, end));
    } catch {}
    const isCanonical = v !== null && isPyObject(v) && canonical(v) === text.slice(0, end);
    const plain = (k: string) => typeof (v as Map<string, PyValue>).get(k) === "string" && !canonical((v as Map<string, PyValue>).get(k)!).includes("\\");
    const takeable = isCanonical && !(v as Map<string, PyValue>).has("hash_profile") && plain("event") && plain("prev_hash") && plain("event_hash");
    if (r === null) {
      if (takeable) bad.push({ text, why: "declined a canonical row" });
      continue;
    }
    taken++;
    if (escapedKey(v!)) escapedKeys++;
    if (!takeable) {
      bad.push({ text, why: "took a row it must not" });
      continue;
    }
    const row = v as Map<string, PyValue>;
    const payload = new Map([...row].filter(([k]) => !ENVELOPE.includes(k)));
    const want = { eventType: row.get("event"), prevHash: row.get("prev_hash"), eventHash: row.get("event_hash"), payload: canonical(payload), end };
    const got = { eventType: r.eventType, prevHash: r.prevHash, eventHash: r.eventHash, payload: r.payloadText, end: r.end };
    if (JSON.stringify(got) !== JSON.stringify(want)) bad.push({ text, got, want });
    if (row.get("event") === "agent_spawned") {
      // the endpoint from the row's bytes (a member with escapes decoded), twice: the second from the bytes seen
      const fast = new EndpointSet();
      const exact = new EndpointSet();
      exact.push(row);
      r.addEndpoint(fast);
      r.addEndpoint(fast);
      if (JSON.stringify(fast.sorted()) !== JSON.stringify(exact.sorted())) bad.push({ text, fast: fast.sorted(), exact: exact.sorted() });
      if (ENDPOINT_KEYS.some((k) => typeof row.get(k) === "string" && canonical(row.get(k)!).includes("\\"))) escapedEndpoints++;
    }
    if (bad.length > 5) break;
  }
  expect(bad).toEqual([]);
  expect(taken).toBeGreaterThan(50);
  expect(escapedEndpoints).toBeGreaterThan(10);
  expect(escapedKeys).toBeGreaterThan(10);
}, 60_000);
