/**
 * Journals that hold every kind of line the replay display's fast paths
 * must either reproduce exactly or hand to the exact path: rows in the
 * Python writer's spelling (with escapes, surrogates, floats, nesting),
 * rows in other spellings, and lines that are not rows at all.
 */
import { writeFileSync } from "node:fs";
import { dumps } from "../../src/pyjson/encode.ts";
import { MAX_DEPTH } from "../../src/codec/bytes.ts";
import { PyNum, pyFloat, type PyLike } from "../../src/pyjson/types.ts";

const enc = new TextEncoder();

/** A row as Python's json.dumps writes it (default separators, ensure_ascii). */
function writer(fields: [string, PyLike][]): string {
  return dumps(new Map(fields) as unknown as PyLike);
}

const HASH = "ab".repeat(32);

function envelope(i: number, event: string, payload: [string, PyLike][], ts: PyLike = pyFloat(1727000000.25 + i * 0.5)): string {
  return writer([
    ["ts", ts],
    ["elapsed_s", pyFloat(i * 0.125)],
    ["index", i],
    ["event", event],
    ["prev_hash", i === 0 ? "" : HASH],
    ["payload_hash", HASH],
    ["event_hash", (i % 16).toString(16).repeat(64)],
    ...payload,
  ]);
}

/**
 * Rows in the writer's spelling that a narrow terminal folds (DETAIL, then
 * TASK, below the row): details ending in spaces (a folded line keeps
 * them), details and task lists that wrap there, at and around spaces, and
 * empty ones (no folded line).
 */
export function foldingRows(n: number): string[] {
  const out = [envelope(0, "run_started", [["run_id", "r"]])];
  const words = ["a", "bb", " ", "ccc ", "  dd", "e".repeat(55), "f  "];
  for (let i = 1; i < n; i++) {
    const payload: [string, PyLike][] = [["agent_id", `agent-${"x".repeat(i % 17)}${i}`]];
    if (i % 4 !== 3) payload.push(i % 5 === 0 ? ["task_ids", [`T-${i}`, `T-${"y".repeat(i % 23)}`, "T-3"]] : ["task_id", i % 7 === 0 ? "" : `T-${"z".repeat(i % 29)}${i}`]);
    let model = "";
    for (let k = 0; k <= i % 9; k++) model += words[(i + k * 3) % words.length];
    if (i % 6 !== 5) payload.push(["model", model]);
    if (i % 3 === 1) payload.push(["role", words[i % words.length]!]);
    out.push(envelope(i, ["task_claimed", "agent_spawned", "tool_call"][i % 3]!, payload));
  }
  return out;
}

/** Rows in the writer's spelling: what the fast paths take. */
export function writerRows(n: number): string[] {
  const out: string[] = [];
  // (astral characters whose low 16 bits look like a surrogate: U+1D921, U+2D800 a CJK ideograph, U+10DFFF)
  const strings = ["plain", "caf\u00e9 \u2014 \u{1f600}", "tab\tnew\nline \"q\" \\ \u0000 \u001f \u007f", "\ud800 lone \udfff", "\u2028\u2029", "<\u202e>", "\u4fee\u590d", "\u{1d921} \u{2d800} \u{10dfff} \u{10ffff}"];
  for (let i = 0; i < n; i++) {
    const k = i % 9;
    const s = strings[i % strings.length]!;
    if (i === 0) out.push(envelope(i, "run_started", [["run_id", "r-\u00e9"], ["max_agents", 4], ["budget_usd", pyFloat(25)]]));
    else if (k === 1) out.push(envelope(i, "agent_spawned", [["agent_id", `agent-${i}`], ["role", s], ["model", "m\u00fcdel"], ["task_ids", [`T-${i}`, `T-${i + 1}`, "T-x"]]]));
    else if (k === 2) out.push(envelope(i, "task_completed", [["task_id", `T-${i}`], ["agent_id", `agent-${i - 1}`], ["cost_usd", pyFloat(i * 1.0625)], ["summary", s]]));
    else if (k === 3) out.push(envelope(i, "tick_start", [["tick", i], ["ticks", new PyNum("12345678901234567890123", false)]]));
    else if (k === 4) out.push(envelope(i, "tool_call", [["args", { z: 1, a: [pyFloat(0.1), pyFloat(1e-7), pyFloat(1e22), pyFloat(-0), null, true, false], m: { y: s, b: [], c: {} } }], ["task_ids", []]]));
    else if (k === 5) out.push(envelope(i, "task_verification_failed", [["task_id", ""], ["task_ids", ["A", "B", "C"]], ["failed_signals", ["tests", s, "lint", "x"]]]));
    else if (k === 6) out.push(envelope(i, "run_completed", [["run_id", "r"], ["fingerprint", "f".repeat(40)], ["cost_usd", 0], ["model", ""]]));
    else if (k === 7) out.push(envelope(i, s, [["deep", [[[[{ k: [1, [2, [3]]] }]]]]], ["agent_id", 7]], new PyNum("1727000100", false)));
    else out.push(envelope(i, "note", [["cost_usd", "1.5"], ["tick", pyFloat(2.5)], ["max_agents", true], ["role", null]]));
  }
  return out;
}

/** Lines in other spellings, and lines that are no rows (each stands alone; some are discarded). */
export const HOSTILE_LINES: string[] = [
  '{"event":"compact","ts":1727000001.5,"agent_id":"a1"}',
  '{ "event" : "spaced" ,\t"ts" : 1E5 , "elapsed_s":1.50 }',
  '{"event": "floats", "a": 1e400, "b": -0.0, "c": 1E5, "d": 1.50, "e": NaN, "f": Infinity, "g": -Infinity, "h": -0, "i": 5e-324, "j": 0.1000}',
  `{"event": "big", "n": ${"9".repeat(4300)}}`,
  `{"event": "too big", "n": ${"9".repeat(4301)}}`,
  '{"event": "raw utf8 \u00e9\u{1f600}", "agent_id": "\u0430\u0433\u0435\u043d\u0442", "task_id": "\u4efb\u52a1"}',
  '{"event": "esc", "s": "\\u00E9\\u00e9\\ud83d\\ude00\\ud83d\\u0041\\udc00\\u0000\\u001F\\u007f\\/\\"\\\\\\b\\f\\n\\r\\t\\u2028"}',
  '{"event": "dup", "event": "second", "ts": 1, "ts": 2}',
  '{"event": "nested dup", "a": {"k": 1, "k": 2}}',
  '{"\\u0065vent": "escaped key", "event": "plain key"}',
  '{"\\u0065vent": "escaped key alone"}',
  '{"event": "hash profile", "hash_profile": "py-json-v1", "ts": 3}',
  '{"event": 5, "ts": "not a number", "elapsed_s": "7"}',
  '{"event": null, "ts": null}',
  '{"ts": 12}',
  "{}",
  "{ }",
  '  {"event": "padded"}  ',
  '\ufeff{"event": "bom"}',
  '{"event": "trailing"} junk',
  // a CR between tokens: universal newlines read two lines here
  '{"event": "cr between tokens", "files": ["a",\r "b"], "ts": 1}',
  '{"event": "tab between tokens",\t"ts": 2}',
  '{"event": "bad escape \\x"}',
  '{"event": "bad \\u12"}',
  '{"event": "control \u0001 raw"}',
  "not json at all",
  "[1, 2, 3]",
  '"just a string"',
  "12",
  '{"event": "unterminated',
  `{"event": "deep", "d": ${"[".repeat(70)}${"]".repeat(70)}}`,
  `{"event": "deep obj", "d": ${'{"a": '.repeat(63)}1${"}".repeat(63)}}`,
  // at the codec's nesting bound (the row's object is 1, "d" 2): the deepest it takes, and one more (the exact path's)
  ...[MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH].flatMap((n) => [
    `{"event": "deep ${n}", "d": ${"[".repeat(n)}${"]".repeat(n)}, "agent_id": "a-${n}"}`,
    `{"event": "deep obj ${n}", "d": ${'{"b": 2.5, "a": '.repeat(n)}"caf\\u00e9 \\"q\\""${"}".repeat(n)}, "ts": 1727000000.25}`,
    `{"event": "deep mixed ${n}", "d": ${'[{"k": '.repeat(n / 2)}[1e-05, "\\ud83d\\ude80"]${"}]".repeat(n / 2)}}`,
  ]),
  '{"event": "many keys", ' + Array.from({ length: 80 }, (_, i) => `"k${i}": ${i}`).join(", ") + "}",
  '{"event": "cost", "cost_usd": 1e400, "tick": 0, "ticks": 0.0, "max_agents": [], "failed_signals": "abcdef"}',
  '{"event": "cost2", "cost_usd": true, "failed_signals": [{"a": 1}, [2], null, "d"], "task_ids": "XYZ"}',
  '{"event": "run_started", "ts": 1727000000.5, "run_id": {"o": 1}}',
  '{"event": "run_completed", "fingerprint": 1234567890123456789, "run_id": ""}',
  `{"event": "huge", "blob": [${Array.from({ length: 9000 }, (_, i) => `"item-${i}"`).join(", ")}], "agent_id": "h"}`,
  // the writer's envelope, display fields holding objects with keys out of order: shown in the row's order (the kernel
  // keeps a nested value sorted, so the fast paths must decline the row)
  envelope(5, "task_failed", [
    ["task_id", "T-1"],
    ["reason", { z: 1, a: [{ y: 2, b: 3 }] }],
    ["failed_signals", [{ q: 1, c: 2 }]],
  ]),
  envelope(6, "run_started", [["run_id", { o: 1, k: 2 }]]),
];

/** Bytes that are no valid UTF-8, and line ends that are not LF, as raw lines. */
export const RAW_LINES: Uint8Array[] = [
  Uint8Array.from([...enc.encode('{"event": "bad utf8 '), 0xff, 0xfe, ...enc.encode('"}')]),
  Uint8Array.from([...enc.encode('{"event": "overlong '), 0xc0, 0xaf, ...enc.encode('"}')]),
  Uint8Array.from([...enc.encode('{"event": "surrogate '), 0xed, 0xa0, 0x80, ...enc.encode('"}')]),
  // the writer's envelope with a byte no reader accepts inside a stored hash (no kernel mode but the chain's checks those bytes)
  Uint8Array.from([
    ...enc.encode(`{"ts": 1.5, "elapsed_s": 0.5, "index": 3, "event": "bad hash byte", "prev_hash": "${HASH}", "payload_hash": "${"ab".repeat(20)}`),
    0xca,
    ...enc.encode(`${"ab".repeat(11)}a", "event_hash": "${HASH}", "k": 1}`),
  ]),
];

/** A journal of writer rows with hostile lines between them, CRLF and lone CR line ends, blank lines. */
export function writeHostileJournal(path: string, rows = 200): void {
  const writerLines = writerRows(rows);
  const parts: Uint8Array[] = [];
  let h = 0;
  let r = 0;
  writerLines.forEach((line, i) => {
    parts.push(enc.encode(line + (i % 23 === 5 ? "\r\n" : i % 29 === 7 ? "\r" : "\n")));
    if (i % 3 === 2 && h < HOSTILE_LINES.length) parts.push(enc.encode(HOSTILE_LINES[h++]! + "\n"));
    if (i % 17 === 3 && r < RAW_LINES.length) parts.push(RAW_LINES[r++]!, enc.encode("\n"));
    if (i % 31 === 4) parts.push(enc.encode("\n   \n"));
  });
  while (h < HOSTILE_LINES.length) parts.push(enc.encode(HOSTILE_LINES[h++]! + "\n"));
  while (r < RAW_LINES.length) parts.push(RAW_LINES[r++]!, enc.encode("\n"));
  // no terminator on the last line
  parts.push(enc.encode(writer([["event", "last, unterminated"], ["ts", pyFloat(1727000999.5)]])));
  writeFileSync(path, Buffer.concat(parts));
}

/** A journal holding only writer rows (every row on the fast paths). */
export function writeWriterJournal(path: string, rows: number): void {
  writeFileSync(path, writerRows(rows).join("\n") + "\n");
}

/**
 * A journal holding every kind of record the prose display's cell spool
 * keeps (src/replay/cell-spool.ts), in the order that tests its time base:
 * rows before run_started (their TIME measured from a base only known
 * later), a row without ts (TIME from elapsed_s), rows whose cells are not
 * plain (kept as display fields), lines only the exact reader reads
 * (re-read from the journal by offset: a duplicate key, a line longer than
 * the fast paths take, a ts whose TIME is not a number), a discarded line,
 * blank lines, CRLF and lone-CR line ends, no terminator at the end.
 */
export function spoolJournalBytes(): Uint8Array {
  const ts = (s: number) => pyFloat(1727000000 + s);
  const lines: [string, string][] = [
    [envelope(0, "tool_call", [["agent_id", "agent-1"], ["task_id", "T-1"]], ts(10.5)), "\n"],
    [writer([["event", "note"], ["elapsed_s", pyFloat(65.5)], ["model", "m-1"]]), "\n"],
    [envelope(2, "agent_spawned", [["agent_id", "\u00e9-agent"], ["role", "backend"]], ts(11)), "\n"],
    [envelope(3, "run_started", [["run_id", "r"], ["max_agents", 3]], ts(20.25)), "\n"],
    [envelope(4, "task_claimed", [["agent_id", "agent-1"], ["task_ids", ["T-2", "T-3", "T-4"]]], ts(0)), "\n"],
    ['{"event": "dup", "event": "second", "ts": 1727000030}', "\n"],
    ["not json", "\n"],
    ["", "\n"],
    [envelope(6, "task_completed", [["task_id", "T-2"], ["cost_usd", pyFloat(0.125)]], ts(95)), "\r\n"],
    [envelope(7, "tick_start", [["tick", 7]], ts(96)), "\r"],
    [envelope(8, "task_verification_failed", [["task_id", "T-3"], ["failed_signals", ["tests", "lint"]]], ts(97)), "\n"],
    [envelope(9, "clock", [], new PyNum("1e400", true)), "\n"],
    [writer([["event", "huge"], ["ts", ts(120)], ["agent_id", "agent-2"], ["blob", "x".repeat(70_000)]]), "\n"],
    [envelope(11, "task_completed", [["task_id", "T-4"], ["summary", "caf\u00e9"]], ts(3725.75)), "\n"],
    [envelope(12, "run_completed", [["run_id", "r"], ["fingerprint", "f".repeat(40)]], ts(3726)), ""],
  ];
  return enc.encode(lines.map(([l, end]) => l + end).join(""));
}

/**
 * A journal of lines of 64 KiB and more (the length at which the display's
 * line reader hands a line over whole, fast-lines.ts FAST_LINE_MAX): writer
 * rows with a long payload (escapes, surrogates, nesting), rows whose
 * display fields themselves are long (AGENT, TASK, DETAIL), long lines in
 * other spellings or none, long lines ended by CRLF and a lone CR, and
 * ordinary rows between them.
 */
export function writeLongRowJournal(path: string): void {
  const big = (i: number): PyLike => ({
    text: `caf\u00e9 \u2014 \u{1f600} "q" \\ \t ${"x".repeat(40_000 + i * 997)}`,
    items: Array.from({ length: 2_000 }, (_, j) => (j % 3 === 0 ? pyFloat(j / 7) : j % 3 === 1 ? `item-${j}-\u4fee` : [j, null, true])),
    nested: { z: { y: [{ b: 1, a: "\ud800" }] }, a: [] },
  });
  const rows = writerRows(40);
  const lines: string[] = [];
  rows.forEach((row, i) => {
    lines.push(row);
    const long = row.slice(0, -1) + `, "blob": ${dumps(big(i))}}`;
    lines.push(long);
  });
  const ts = (s: number) => pyFloat(1727000000 + s);
  lines.push(
    envelope(100, "agent_spawned", [["agent_id", "a".repeat(70_000)], ["role", "r"], ["task_ids", ["T-1", "T-".repeat(40_000)]]], ts(200)),
    envelope(101, "task_failed", [["task_id", "T-9"], ["reason", "why ".repeat(30_000)], ["failure_class", "x".repeat(70_000)]], ts(201)),
    envelope(102, "task_verification_failed", [["failed_signals", ["s".repeat(70_000), "lint", "t"]], ["model", "m".repeat(66_000)]], ts(202)),
    envelope(103, "task_completed", [["task_id", "T-2"], ["cost_usd", pyFloat(0.125)], ["summary", "\u00e9".repeat(30_000)]], ts(203)),
    // other spellings: compact separators, raw UTF-8, a duplicate key, a long line that is no row
    `{"event":"compact","ts":1727000300.5,"blob":"${"y".repeat(80_000)}"}`,
    `{"event": "raw utf8 \u00e9", "ts": 1727000301.5, "blob": "${"\u00e9\u{1f600}".repeat(20_000)}"}`,
    `{"event": "dup", "ts": 1727000302.5, "blob": "${"z".repeat(70_000)}", "event": "second"}`,
    `not json ${"n".repeat(70_000)}`,
  );
  const parts = lines.map((l, i) => l + (i === 7 ? "\r\n" : i === 13 ? "\r" : "\n"));
  writeFileSync(path, parts.join("") + envelope(104, "run_completed", [["run_id", "r"], ["blob", "w".repeat(90_000)]], ts(300)));
}
