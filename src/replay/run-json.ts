import { jsonFields, type JsonFields } from "../json-fields.ts";
import type { RunMetadata } from "../journal/metadata.ts";
import type { JournalRow } from "../journal/reader.ts";
import { holdsRaw } from "../pyjson/encode.ts";
import { pyFloat } from "../pyjson/types.ts";
import { renderJson, renderRowJson, rowJsonText } from "../render/json.ts";
import { RowTranscoder } from "./fast-json.ts";
import { readFastLines } from "./fast-lines.ts";
import { contentEnd } from "../fsutil/lines.ts";
import { LONG_LINE_MAX } from "./kernel-row.ts";
import { runRows } from "./run-view.ts";
import { utf8, type ByteOutput } from "./sink.ts";

/**
 * `replay <RUN_ID> --as-json`: `{"ok": true, "run_id", "metadata",
 * "events": [...]}` exactly as `printJson` would print it (indent 2, raw
 * UTF-8, numbers as recorded), streamed row by row so a million-event
 * journal never sits in memory.
 *
 * `streamRunJson` works on the rows' bytes (fast-json.ts re-indents a row
 * without parsing it into values) and gives a row it cannot re-indent
 * with certainty to the exact path; `streamRunJsonExact` is the exact path
 * alone (every row parsed, then rendered), kept as the reference the
 * differential tests hold the fast one to.
 */

function metadataJson(m: RunMetadata | null): unknown {
  if (!m) return null;
  return {
    run_id: m.run_id,
    started_at: pyFloat(m.started_at),
    git_sha: m.git_sha,
    git_branch: m.git_branch,
    config_hash: m.config_hash,
    seed_path: m.seed_path,
  };
}

function documentHead(runId: string, metadata: RunMetadata | null): string {
  return (
    "{\n" +
    `  ${renderJson("ok")}: true,\n` +
    `  ${renderJson("run_id")}: ${renderJson(runId)},\n` +
    `  ${renderJson("metadata")}: ${renderJson(metadataJson(metadata)).replace(/\n/g, "\n  ")},\n` +
    `  ${renderJson("events")}: [`
  );
}

const documentTail = (rows: number): string => (rows === 0 ? "]\n}\n" : "\n  ]\n}\n");
const separator = (n: number): string => (n === 0 ? "\n" : ",\n");
const indent4 = (text: string): string => "    " + text.replace(/\n/g, "\n    ");

/** Flush the buffer once it holds this much (after a chunk of the journal), or SPILL_BYTES (after any row). */
const FLUSH_BYTES = 1 << 20;
const SPILL_BYTES = 2 << 20;

export interface RunJsonInput {
  journal: string;
  runId: string;
  metadata: RunMetadata | null;
  /** At most this many rows (undefined: all). */
  limit?: number;
}

export async function streamRunJson(input: RunJsonInput, out: ByteOutput): Promise<void> {
  const { limit } = input;
  const tc = new RowTranscoder();
  tc.append(utf8(documentHead(input.runId, input.metadata)));
  let n = 0;
  const done = (): boolean => (limit !== undefined && n >= limit) || out.closed();
  const SEP_FIRST = utf8("\n");
  const SEP = utf8(",\n");
  // A chunk's rows are held until it is read; rows whose text is many times their bytes (nested a
  // thousand deep: ~2 KB of indent a line) are written as they come instead, so the buffer stays small.
  const writeHeld = (): void => {
    out.writeSync(tc.buf.subarray(0, tc.len));
    tc.reset();
  };
  const spill = (): void => {
    if (tc.len >= SPILL_BYTES) writeHeld();
  };
  const exactRow = (row: JournalRow): void => {
    tc.append(n++ === 0 ? SEP_FIRST : SEP);
    if (!holdsRaw(row)) {
      tc.text(rowJsonText(row, 2));
      return spill();
    }
    // A huge row (src/pyjson/row.ts) streams from its bytes: never one string.
    writeHeld();
    renderRowJson(row, 2, (text) => out.writeSync(utf8(text)));
  };
  const fastRow = (b: Uint8Array, s: number, e: number): boolean => {
    e = contentEnd(b, s, e);
    const mark = tc.len;
    tc.append(n === 0 ? SEP_FIRST : SEP);
    if (tc.row(b, s, e, 4)) {
      n++;
      spill();
      return true;
    }
    tc.len = mark;
    return false;
  };
  if (limit === undefined || limit > 0) {
    for (const _ of readFastLines(input.journal, {
      fast: (buf, s, e) => fastRow(buf, s, e),
      // (the transcoder holds a row's output whole: several times a row of many small objects)
      long: (bytes) => bytes.length <= LONG_LINE_MAX && fastRow(bytes, 0, bytes.length),
      // an exact row is only printed (renderRowJson streams a long string from its bytes)
      rawStrings: true,
      exact: (v) => {
        if (v.kind === "row") exactRow(v.row);
      },
      done,
    })) {
      if (tc.len >= FLUSH_BYTES) {
        await out.write(tc.buf.subarray(0, tc.len));
        tc.reset();
      }
      if (out.closed()) return; // the reader went away: stop reading the journal
    }
  }
  tc.append(utf8(documentTail(n)));
  await out.write(tc.buf.subarray(0, tc.len));
  tc.reset();
}

/** The exact path alone: every row parsed and rendered (the reference of streamRunJson). */
export async function streamRunJsonExact(input: RunJsonInput, out: ByteOutput): Promise<void> {
  let buf = documentHead(input.runId, input.metadata);
  let n = 0;
  for await (const row of runRows(input.journal, input.limit)) {
    if (holdsRaw(row)) {
      await out.write(utf8(buf + separator(n++)));
      buf = "";
      renderRowJson(row, 2, (text) => out.writeSync(utf8(text)));
      if (out.closed()) return;
      continue;
    }
    buf += separator(n++) + indent4(renderJson(row, 2));
    if (buf.length >= 65536) {
      await out.write(utf8(buf));
      buf = "";
      if (out.closed()) return;
    }
  }
  await out.write(utf8(buf + documentTail(n)));
}

/** The document `streamRunJson` writes (`replay <RUN_ID> --as-json`; docs/cli/replay.md). */
export const RUN_JSON_FIELDS: JsonFields = jsonFields([
  ["ok", "true", "The run was read"],
  ["run_id", "string", "The run"],
  ["metadata", "object", "Its metadata.json: run_id, started_at, git_sha, git_branch, config_hash, seed_path (nulls when absent)"],
  ["events", "object[]", "Its journal rows, in order (at most --limit)"],
]);
