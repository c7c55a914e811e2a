/**
 * A row's long string fields (kept as bytes, `PyRaw`) are shown by the
 * table from pieces decoded as it lays them out (display.ts LongText,
 * table.ts formatLines), never decoded whole. The cells must be what the
 * whole decoded string gives: the first cells of an id cut with `…`, the
 * reason clipped to its cells, the first code points of a fingerprint,
 * DETAIL and a folded TASK wrapped, with escapes, surrogate pairs (escaped
 * or UTF-8) and lone surrogates, wide and combining characters falling on
 * either side of a cut or a piece boundary.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventJournal } from "../../src/journal/writer.ts";
import { dumps } from "../../src/pyjson/encode.ts";
import { decodeStringPieces } from "../../src/pyjson/encode-bytes.ts";
import { PyRaw, type PyObject, type PyValue } from "../../src/pyjson/types.ts";
import { setColorEnabled } from "../../src/render/ansi.ts";
import { cellWidth, truncateCells, truncatePieces, wrapCells, wrapPieces } from "../../src/render/table.ts";
import { CellSpool } from "../../src/replay/cell-spool.ts";
import { displayRow, LongText, measureIds, shownRow } from "../../src/replay/display.ts";
import { runTable, shownLines, writeRunTable, writeRunTableExact } from "../../src/replay/run-table.ts";
import { scanRun, scanRunFast } from "../../src/replay/run-view.ts";
import { CollectingOutput } from "../../src/replay/sink.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

const enc = new TextEncoder();

/** Characters that make a cut or a piece boundary interesting. */
const TRICKY = ["🚀", "\ud83d\ude00", "漢", "ｗ", "e\u0301", "\u0301", "\u200b", "\t", "\n", '"', "\\", "\u0007", "\ud800", "\udfff", "\ufeff", "\u2028", " ", "  ", "é", "\u00a0", "\u3000"];

function randomText(r: () => number, n: number): string {
  let s = "";
  while (s.length < n) s += r() < 0.5 ? "ab cd"[Math.floor(r() * 5)]! : TRICKY[Math.floor(r() * TRICKY.length)]!;
  return s;
}

/** The string's JSON token as the writer spells it (`\uXXXX` escapes) or raw UTF-8 (lone surrogates escaped). */
function token(s: string, ascii: boolean): Uint8Array {
  return enc.encode(dumps(s, { ensureAscii: ascii }));
}

/** The text split at random code point boundaries (a pair is never cut: what LongText.pieces promises). */
function split(r: () => number, s: string): string[] {
  const cps = Array.from(s);
  const out: string[] = [];
  let i = 0;
  while (i < cps.length) {
    const n = 1 + Math.floor(r() * 9);
    out.push(cps.slice(i, i + n).join(""));
    i += n;
  }
  return out;
}

// The previous implementations, character by character: the reference the piecewise ones must equal.
function refWrap(text: string, width: number): string[] {
  if (width <= 0) return [text];
  const lines: string[] = [];
  let cur: string[] = [];
  let curW = 0;
  for (const ch of text) {
    const w = cellWidth(ch);
    if (curW + w > width && cur.length > 0) {
      const space = cur.lastIndexOf(" ");
      const cut = space > 0 && ch !== " " ? space + 1 : cur.length;
      lines.push(cur.slice(0, cut).join("").trimEnd() || cur.slice(0, cut).join(""));
      cur = cur.slice(cut);
      curW = cellWidth(cur.join(""));
      if (ch === " " && cur.length === 0) continue;
    }
    cur.push(ch);
    curW += w;
  }
  lines.push(cur.join(""));
  return lines;
}

function refTruncate(text: string, width: number): string {
  if (cellWidth(text) <= width) return text;
  if (width <= 0) return "";
  let out = "";
  let w = 0;
  for (const ch of text) {
    const cw = cellWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return out + "…";
}

describe("long strings decoded in pieces", () => {
  const r = mulberry32(7);
  const strings = [
    "",
    "plain ascii",
    "\ud83d\ude00".repeat(40),
    "\ufeffBOM first",
    "a\ud800",
    "\udc00b",
    ...Array.from({ length: 30 }, () => randomText(r, 1 + Math.floor(r() * 300))),
  ];

  test("decodeStringPieces joins to the decoded string at any piece size, escaped or raw", () => {
    for (const s of strings) {
      for (const ascii of [true, false]) {
        const b = token(s, ascii);
        for (const piece of [1, 2, 3, 5, 6, 7, 11, 12, 13, 64, 1 << 16]) expect([...decodeStringPieces(b, 0, piece)].join("")).toBe(s);
      }
    }
  });

  test("LongText's pieces never part a surrogate pair: read code point by code point they are the string's", () => {
    for (const s of strings) {
      for (const ascii of [true, false]) {
        for (const size of [1, 2, 5, 6, 7, 12, 13, 1 << 16]) {
          // a string part's high surrogate may pair with the low one a token's piece begins with
          const t = new LongText(["x\ud83d", new PyRaw(token("\ude00" + s, ascii), "string"), "\ud83d"], size);
          const whole = "x\ud83d\ude00" + s + "\ud83d";
          const pieces = [...t.pieces()];
          expect(pieces.join("")).toBe(whole);
          expect(pieces.flatMap((p) => Array.from(p))).toEqual(Array.from(whole));
          expect(t.text()).toBe(whole);
        }
      }
    }
  });

  test("wrapPieces and truncatePieces are wrapCells and truncateCells of the joined text, however it is split", () => {
    const q = mulberry32(11);
    for (let k = 0; k < 400; k++) {
      const s = randomText(q, Math.floor(q() * 120));
      const width = Math.floor(q() * 25) - 1;
      const parts = split(q, s);
      expect(wrapCells(s, width)).toEqual(refWrap(s, width));
      expect([...wrapPieces(parts, width)]).toEqual(refWrap(s, width));
      expect(truncateCells(s, width)).toBe(refTruncate(s, width));
      expect(truncatePieces(parts, width)).toBe(refTruncate(s, width));
    }
  });
});

/** Strings whose special character sits at `at` code points in: around each cut the table makes. */
function straddling(at: number): string[] {
  return TRICKY.map((c) => "i".repeat(at) + c + "tail ".repeat(12) + c + "end");
}

const SHOWN = ["agent_id", "task_id", "task_ids", "model", "role", "adapter", "reason", "failure_class", "run_id", "fingerprint", "failed_signals", "tick", "steps_done"];
const EVENTS = ["task_failed", "agent_spawned", "run_completed", "task_resume_fallback", "task_resumed", "agent_failed", "tick"];

/** The same row twice: its shown strings as strings (the tree) and as bytes (a long row's reading). */
function rowPair(event: string, fields: [string, string][], ascii: boolean): { tree: PyObject; raw: PyObject } {
  const tree: PyObject = new Map<string, PyValue>([["ts", null], ["event", event]]);
  const raw: PyObject = new Map<string, PyValue>([["ts", null], ["event", event]]);
  for (const [k, v] of fields) {
    tree.set(k, v);
    raw.set(k, new PyRaw(token(v, ascii), "string"));
  }
  return { tree, raw };
}

describe("a row's long fields laid out from their bytes = the decoded row's table lines", () => {
  setColorEnabled(false);
  test("every cut (id columns, reason, fingerprint, task ids, failed signals, wraps and folds) at every width", () => {
    const r = mulberry32(3);
    let cases = 0;
    // ids cut at 19 cells (ID_MIN_WIDTH - 1), the reason at 159, fp at 12 code points, the first 2/3 code points
    for (const at of [0, 1, 2, 3, 10, 11, 12, 17, 18, 19, 20, 157, 158, 159, 160]) {
      const texts = straddling(at);
      for (let k = 0; k < texts.length; k++) {
        const event = EVENTS[(k + at) % EVENTS.length]!;
        const pick = (j: number) => texts[(k + j) % texts.length]!;
        const fields: [string, string][] = SHOWN.map((f, j) => [f, pick(j)]);
        if (r() < 0.5) fields.splice(1, 1); // no task_id: TASK shows the first two code points of task_ids
        const ascii = r() < 0.5;
        const { tree, raw } = rowPair(event, fields, ascii);
        const treeIds = { agent: 0, task: 0 };
        const rawIds = { agent: 0, task: 0 };
        measureIds(tree, treeIds);
        measureIds(raw, rawIds);
        expect(rawIds).toEqual(treeIds);
        for (const width of [40, 60, 83, 100, 200, 100_000]) {
          const table = runTable(treeIds, width);
          const d = displayRow(tree, null);
          expect([...shownLines(table, shownRow(raw, null))]).toEqual(table.format([d.time, { text: d.event, style: d.eventStyle }, d.agent, d.task, d.detail]));
          cases++;
        }
      }
    }
    expect(cases).toBeGreaterThan(1000);
  });
});

describe("a journal whose shown fields are megabytes: the table = the exact path's", () => {
  const dir = mkdtempSync(join(tmpdir(), "long-cells-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** ~1.1 M characters (over the 1 MiB a string must have to stay bytes), the special ones spread through. */
  function big(seed: number): string {
    const r = mulberry32(seed);
    const unit = randomText(r, 4000);
    return unit.repeat(280);
  }

  test("with and without the scan's spool, at several widths", async () => {
    setColorEnabled(false);
    const j = EventJournal.create("long", { sddDir: join(dir, "sdd") });
    try {
      j.record("run_started", { run_id: "long" });
      j.record("agent_spawned", { agent_id: big(1), task_id: big(2), model: big(3), adapter: "claude" });
      j.record("task_failed", { agent_id: "a-1", task_id: "T-1", reason: big(4), failure_class: big(5) });
      j.record("task_claimed", { agent_id: "a-1", task_ids: big(6) });
    } finally {
      j.close();
    }
    const journal = join(dir, "sdd", "runs", "long", "journal.jsonl");
    for (const width of [70, 100]) {
      const ids = { agent: 0, task: 0 };
      const s = await scanRun(journal, undefined, (row) => measureIds(row, ids));
      const exact = new CollectingOutput();
      await writeRunTableExact(journal, s.baseTs, undefined, runTable(ids, width), exact);
      const plain = new CollectingOutput();
      await writeRunTable(journal, s.baseTs, undefined, runTable(ids, width), plain);
      // not vacuous: every row shown, DETAIL wrapped over megabytes
      expect(s.events).toBe(4);
      expect(exact.bytes().length).toBeGreaterThan(4_000_000);
      expect(Buffer.compare(plain.bytes(), exact.bytes())).toBe(0);
      const spool = CellSpool.open()!;
      try {
        const fastIds = { agent: 0, task: 0 };
        const f = await scanRunFast(journal, undefined, fastIds, spool);
        expect(fastIds).toEqual(ids);
        const spooled = new CollectingOutput();
        await writeRunTable(journal, f.baseTs, undefined, runTable(fastIds, width), spooled, spool);
        expect(Buffer.compare(spooled.bytes(), exact.bytes())).toBe(0);
      } finally {
        spool.close();
      }
    }
  }, 60_000);
});
