/**
 * `replay --follow`'s fast catch-up (src/replay/follow.ts: the fast
 * verifier, then one read on the display's kernel; follow-lines.ts: lines
 * from the cells' spans) against reading row by row (`fastFrom: Infinity`,
 * the reference): the same events on the same lines, the same prose and
 * JSON bytes, the same end and verdict, on generated journals of every
 * shape, on a chain whose display fields hold every kind of value, and on
 * journals broken, cut short or ended early in every way the walk stops at.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateJournal, SHAPES } from "../../bench/journal-gen.ts";
import { eventHash, payloadHash } from "../../src/journal/hash.ts";
import { dumps } from "../../src/pyjson/encode.ts";
import { pyFloat, type PyLike } from "../../src/pyjson/types.ts";
import { followJournal, type FollowResult } from "../../src/replay/follow.ts";
import { FollowLines } from "../../src/replay/follow-lines.ts";
import { readJournalSync } from "../../src/journal/reader.ts";
import { renderJson } from "../../src/render/json.ts";
import { followFinished } from "../../tools/fuzz/follow.ts";
import { compactLines } from "../helpers/python.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bern-follow-fast-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Followed {
  result: FollowResult;
  /** index:line of each event */
  at: string[];
  prose: string;
  json: string;
  /** Events read by a fast path, the fewer of the prose and the JSON run (0 on the reference path). */
  loaded: number;
  /** Events of the JSON run written as their own bytes (the rows the verify kernel took). */
  verbatim: number;
}

/** Follow a journal that no longer grows (its run gone), once per output form. */
async function followed(path: string, fastFrom: number): Promise<Followed> {
  const prose = await followFinished(path, fastFrom, false);
  const json = await followFinished(path, fastFrom, true);
  expect(json.result).toEqual(prose.result);
  expect(json.at).toEqual(prose.at);
  return { result: prose.result, at: prose.at, prose: prose.text, json: json.text, loaded: Math.min(prose.loaded, json.loaded), verbatim: json.verbatim };
}

/** The fast catch-up and the reference agree on `path`; what the fast one did. */
async function expectSame(path: string): Promise<Followed> {
  const exact = await followed(path, Number.POSITIVE_INFINITY);
  const fast = await followed(path, 0);
  expect(exact.loaded).toBe(0);
  expect(fast.result).toEqual(exact.result);
  expect(fast.at).toEqual(exact.at);
  // compared as booleans first: a diff of megabytes is not a useful failure message
  for (const k of ["prose", "json"] as const) {
    if (fast[k] !== exact[k]) {
      let i = 0;
      while (i < fast[k].length && fast[k][i] === exact[k][i]) i++;
      expect(fast[k].slice(Math.max(0, i - 200), i + 200)).toBe(exact[k].slice(Math.max(0, i - 200), i + 200));
    }
    expect(fast[k] === exact[k]).toBe(true);
  }
  return fast;
}

type ChainRow = [event: string, payload: Record<string, PyLike>, envelope?: Record<string, PyLike>];

/** A valid chain of `rows` (each with its envelope fields beside the hashes: a ts and elapsed_s unless given), written by this test. */
function writeChain(path: string, rows: ChainRow[]): void {
  let prev = "";
  const out = rows.map(([event, payload, envelope], index) => {
    const ph = payloadHash(event, payload);
    const eh = eventHash(prev, event, ph, index);
    const env = envelope ?? { ts: pyFloat(1764590000.5 + index * 0.25), elapsed_s: pyFloat(index * 0.25) };
    const line = dumps({ ...env, index, event, prev_hash: prev, payload_hash: ph, event_hash: eh, ...payload } as unknown as PyLike);
    prev = eh;
    return line;
  });
  writeFileSync(path, out.join("\n") + "\n");
}

describe("replay --follow: the fast catch-up writes what reading row by row writes", () => {
  for (const shape of SHAPES) {
    test(`a generated journal of shape ${shape}`, async () => {
      const g = generateJournal(join(dir, `sdd-${shape}`), "r", shape === "large-rows" ? 3e6 : 1.5e6, 11, shape);
      const fast = await expectSame(g.path);
      expect(fast.result.end).toBe(shape === "mixed" ? "run_completed" : "run_gone");
      expect(fast.result.verdict).toMatchObject({ ok: true, count: g.rows });
      // not vacuous: most rows took the fast paths, the display's kernel (prose) and the codec (JSON)
      if (shape !== "large-rows") expect(fast.loaded).toBeGreaterThan(g.rows / 2);
    }, 60_000);
  }

  test("a chain whose display fields hold every kind of value", async () => {
    const values: PyLike[] = [
      "plain",
      "",
      "caf\u00e9 \u{1f600}",
      "tab\tnew\nline \"q\" \\",
      "\u001b[31mred\u001b[0m",
      "\u202eevil",
      "x".repeat(300),
      0,
      -3,
      pyFloat(0.1),
      pyFloat(1e22),
      true,
      null,
      ["a", "b"],
      [],
      { nested: { k: 1 } },
      [{ k: "v" }],
    ];
    const rows: ChainRow[] = [];
    // the first rows carry no usable ts: the time base is the first number
    rows.push(["run_started", { run_id: "r", max_agents: 2 }, { elapsed_s: pyFloat(0) }]);
    rows.push(["tick_start", { tick: 1 }, { ts: "soon", elapsed_s: pyFloat(1.5) }]);
    const fields = ["agent_id", "task_id", "task_ids", "model", "role", "cost_usd", "failed_signals", "reason", "tick", "adapter"];
    const events = ["agent_spawned", "task_claimed", "task_completed", "task_failed", "task_verification_failed", "provider_state_mutation_long_name", "run_started"];
    let i = 0;
    for (const v of values) {
      for (const f of fields) {
        rows.push([events[i++ % events.length]!, { [f]: v, agent_id: f === "agent_id" ? v : "agent-1" }]);
      }
    }
    rows.push(["weird \u00e9vent \\ name", { agent_id: "\u00e9" }, { ts: pyFloat(1764590100.125) }]);
    rows.push(["run_completed", { run_id: "r", ticks: 1, fingerprint: "f" }]);
    const path = join(dir, "values.jsonl");
    writeChain(path, rows);
    const fast = await expectSame(path);
    expect(fast.result.end).toBe("run_completed");
    expect(fast.result.verdict).toMatchObject({ ok: true, count: rows.length });
    expect(fast.loaded).toBeGreaterThan(0);
  });

  test("rows as their own JSON: every escape Python's writer writes, in keys, values and event names, among rows the exact path verified", async () => {
    // what Python escapes and renderJson writes as itself (DEL, U+0080 on, pairs), what both escape (control
    // characters, lone surrogates), and text that only looks like an escape (a backslash before a u)
    const texts = ["\x7f", "caf\u00e9", "\u4e2d\u6587", "\u{1f680} \u{10ffff}", "\u2028\u2029\ufeff", "\x01\x1f\t\n", "\ud800 lone", "lone \udc00", "\udbff\udfff", "\\u00e9", "\\\u00e9", "a\\", 'say "hi"', "plain"];
    const rows: ChainRow[] = [["run_started", { run_id: "r" }]];
    // (rounds enough for the verify kernel: it reads ranges of 32 KiB and more)
    for (let round = 0; round < 12; round++) {
      texts.forEach((t, i) => {
        rows.push(["tool_result", { agent_id: `a${i}`, output: t, [`k${t}`]: [t, { [t]: t }], round }]);
        rows.push([`ev ${t}`, { task_id: t }]);
      });
    }
    rows.push(["run_completed", { run_id: "r" }]);
    const path = join(dir, "escapes.jsonl");
    writeChain(path, rows);
    // some rows spelled compact (the same values and hashes): the exact path verifies them, the codec writes their JSON
    const lines = readFileSync(path, "utf8").split("\n");
    const compacted = compactLines(lines.slice(0, -1));
    for (const i of [3, 4, 100]) lines[i] = compacted[i]!;
    // two rows on one line, a lone CR between them (a line break to the verify, as to Python): the exact path's
    lines.splice(27, 2, `${lines[27]}\r${lines[28]}`);
    writeFileSync(path, lines.join("\n"));
    const fast = await expectSame(path);
    expect(fast.result.end).toBe("run_completed");
    expect(fast.result.verdict).toMatchObject({ ok: true, count: rows.length });
    // as their own bytes: the writer's rows whose only escapes are a control character's or no escape at all
    // (the texts "\x01\x1f\t\n", "\\u00e9", "a\\", 'say "hi"', "plain": two rows each a round) and run_completed,
    // but the two plain ones on one line; the others through the codec, the first row (its empty prev_hash), the
    // compact ones and the two on one line through the exact path
    expect(fast.verbatim).toBe(5 * 2 * 12 + 1 - 2);
  });

  test("rows too long for the fast paths, strings of a megabyte and more in their fields: the lines of the rows parsed whole", async () => {
    // Lines over 2 MiB take the exact path, which keeps strings of 1 MiB or more as bytes (not the envelope's):
    // the display lays them out in pieces, the JSON is written from them. A line of a megabyte (a ts padded with
    // spaces) is read from a copy. The reference: FollowLines on each row as the tree parser gives it.
    const big = (unit: string) => unit.repeat(Math.ceil((1 << 20) / unit.length) + 7);
    const rows: ChainRow[] = [
      ["run_started", { run_id: "r" }, { ts: `${" ".repeat(1 << 20)}1764589000.5`, elapsed_s: pyFloat(0) }],
      ["task_claimed", { task_id: big("t\u00e9"), agent_id: "a1", role: "backend" }],
      ["tool_result", { agent_id: big("\u{1f600}x"), output: big("line\n\"q\" "), nested: [pyFloat(1.5), { k: big("\u00e9") }] }],
      ["task_failed", { task_id: "t1", agent_id: "a1", reason: big("r\u{1f600}") }],
      ["run_completed", { run_id: "r" }],
    ];
    const path = join(dir, "huge.jsonl");
    writeChain(path, rows);
    const fast = await expectSame(path);
    expect(fast.result.end).toBe("run_completed");
    expect(fast.result.verdict).toMatchObject({ ok: true, count: rows.length });
    const expected = { prose: "", json: "" };
    for (const json of [false, true]) {
      const lines = new FollowLines(json);
      let index = 0;
      for (const item of readJournalSync(path)) {
        if (item.kind !== "row") continue;
        const row = item.row;
        lines.event(index++, { fields: row, loaded: null, via: "whole", writeJson: (out) => {
          const bytes = new TextEncoder().encode(renderJson(row, null));
          out.reserve(bytes.length);
          out.buf.set(bytes, out.len);
          out.len += bytes.length;
        } });
      }
      expected[json ? "json" : "prose"] = new TextDecoder().decode(lines.view());
    }
    expect(fast.prose.length).toBeGreaterThan(1 << 20);
    for (const k of ["prose", "json"] as const) expect({ k, same: fast[k] === expected[k] }).toEqual({ k, same: true });
  }, 60_000);

  test("rows that repeat a key (json.loads keeps the last): the same JSON as the row parsed whole", async () => {
    const rows: ChainRow[] = [];
    for (let i = 0; i < 4000; i++) rows.push(["tool_call", { agent_id: "a-1", tool: `t${i % 7}`, n: i }]);
    rows.push(["run_completed", { run_id: "r", ticks: 1 }]);
    const path = join(dir, "repeats.jsonl");
    writeChain(path, rows);
    // an earlier copy of a key with another value: the hashes still check out (they are of the last), and the
    // row's JSON is the parsed row's, which has the key once; every third row repeats `event` itself
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
    const repeated = lines.map((l, i) => (i % 2 === 1 ? l.replace('"tool": ', '"tool": "shadowed", "n": -1, "tool": ') : i % 3 === 0 ? l.replace('"index": ', '"event": "shadowed", "index": ') : l));
    writeFileSync(path, repeated.join("\n") + "\n");
    const fast = await expectSame(path);
    expect(fast.result.end).toBe("run_completed");
    expect(fast.result.verdict).toMatchObject({ ok: true, count: rows.length });
    expect(fast.json).not.toContain("shadowed");
  });

  describe("journals the walk stops in", () => {
    let base: { path: string; lines: string[] };
    beforeAll(() => {
      const g = generateJournal(join(dir, "sdd-broken"), "r", 1.2e6, 5, "mixed");
      base = { path: g.path, lines: readFileSync(g.path, "utf8").split("\n").filter(Boolean) };
    });
    const variant = (name: string, make: (lines: string[]) => string) => {
      test(name, async () => {
        const path = join(dir, `${name.replace(/\W+/g, "-")}.jsonl`);
        writeFileSync(path, make(base.lines));
        const fast = await expectSame(path);
        expect(fast.result.verdict.count).toBeGreaterThan(0);
      }, 60_000);
    };
    const mid = (lines: string[]) => Math.floor(lines.length / 2);
    variant("a tampered row in the middle", (l) => l.map((x, i) => (i === mid(l) ? x.replace('"index": ', '"forged": 1, "index": ') : x)).join("\n") + "\n");
    variant("a line that is no row in the middle", (l) => [...l.slice(0, mid(l)), "not json", ...l.slice(mid(l))].join("\n") + "\n");
    variant("blank lines between rows, and CR LF", (l) => l.map((x, i) => (i % 3 === 0 ? `${x}\r\n\r\n` : `${x}\n`)).join(""));
    variant("a last line without its line break (a writer mid-append)", (l) => l.slice(0, -1).join("\n") + "\n" + l.at(-1)!.slice(0, 40));
    // the mixed shape ends with run_completed: the same journal twice, the second copy's rows break the chain
    variant("the run ends in the middle, a broken chain after it", (l) => [...l, ...l].join("\n") + "\n");
  });

  test("the run ends in the middle, valid rows after it: both stop at run_completed", async () => {
    const rows: ChainRow[] = [];
    for (let i = 0; i < 3000; i++) rows.push(["tick_start", { tick: i }]);
    rows.push(["run_completed", { run_id: "r", ticks: 3000 }]);
    for (let i = 0; i < 100; i++) rows.push(["tick_start", { tick: i }]);
    const path = join(dir, "ends-early.jsonl");
    writeChain(path, rows);
    const fast = await expectSame(path);
    expect(fast.result.end).toBe("run_completed");
    expect(fast.result.verdict).toMatchObject({ ok: true, count: 3001 });
  });
});

describe("replay --follow: catching up, and when it ends", () => {
  test("a signal that aborted before the catch-up's verify ends it at once with no event and a verdict of none", async () => {
    const g = generateJournal(join(dir, "sdd-abort"), "r", 4e6, 3, "bench");
    const ac = new AbortController();
    ac.abort();
    let events = 0;
    const r = await followJournal({ path: g.path, runAlive: () => true, signal: ac.signal, onEvent: () => void events++ });
    expect(r.end).toBe("interrupted");
    expect(events).toBe(0);
    expect(r.verdict).toMatchObject({ count: 0, head: "" });
  });

  test("a run gone long ago ends once caught up, without waiting the quiet time from now", async () => {
    const g = generateJournal(join(dir, "sdd-old"), "r", 2e6, 3, "bench");
    const old = new Date(Date.now() - 60_000);
    utimesSync(g.path, old, old);
    const t0 = performance.now();
    const r = await followJournal({ path: g.path, runAlive: () => false, signal: new AbortController().signal, onEvent: () => {} });
    expect(r.end).toBe("run_gone");
    expect(r.verdict).toMatchObject({ ok: true, count: g.rows });
    // the default quiet time is 2 s: it was not waited
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  test("rows appended after the catch-up are followed on from where it stopped", async () => {
    const g = generateJournal(join(dir, "sdd-grow"), "r", 2e6, 4, "mixed");
    const lines = readFileSync(g.path, "utf8").split("\n").filter(Boolean);
    const path = join(dir, "grow.jsonl");
    mkdirSync(dir, { recursive: true });
    // all but the last rows first, the rest once the follow caught up
    writeFileSync(path, lines.slice(0, -3).join("\n") + "\n");
    const seen: string[] = [];
    let appended = false;
    const r = await followJournal({
      path,
      runAlive: () => true,
      signal: new AbortController().signal,
      fastFrom: 0,
      onEvent: (index, line, ev) => void seen.push(`${index}:${line}:${ev.via}`),
      drain: () => {
        if (!appended && seen.length === lines.length - 3) {
          appended = true;
          appendFileSync(path, lines.slice(-3).join("\n") + "\n");
        }
      },
    });
    expect(r.end).toBe("run_completed");
    expect(r.verdict).toMatchObject({ ok: true, count: lines.length, head: JSON.parse(lines.at(-1)!).event_hash });
    expect(seen.map((s) => s.split(":").slice(0, 2).join(":"))).toEqual(lines.map((_, i) => `${i}:${i}`));
    // the first rows from the kernel, the appended ones read whole
    expect(seen.slice(-3).every((s) => s.endsWith(":whole"))).toBe(true);
    expect(seen.filter((s) => s.endsWith(":kernel")).length).toBeGreaterThan(0);
  });
});
