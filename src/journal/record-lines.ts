import { BernsteinError, InputError, type ErrorCode } from "../errors/index.ts";
import { rowTooLarge } from "../fsutil/input.ts";
import { LineSplitter } from "../fsutil/lines.ts";
import { isUtf8 } from "node:buffer";
import { parse } from "../pyjson/parse.ts";
import { BYTE_PATH_MIN, parseRowBytes, pyStripBytes, RAW_MEMBER_MIN, RAW_STRING_MIN } from "../pyjson/row.ts";
import { pyStrip } from "../pyjson/python.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { validateRecordInput, type EventJournal, type RawRecordItem, type RecordItem } from "./writer.ts";
import { RecordEncoder, WORKER_LINE_MIN, WORKER_MEMBERS_MIN } from "./fast/record-encoder.ts";
import { widestObject } from "../pyjson/bytes.ts";

/** Events per `recordMany` call, and input bytes (a batch of big rows stays small in memory). */
const BATCH = 2048;
const BATCH_BYTES = 4 << 20;
/** A line this long is preceded by a full collection (as src/pyjson/row.ts loadsLine does). */
const GC_HINT_MIN = 4 << 20;
/**
 * Input bytes between full collections. What a batch leaves (a view and an
 * item per line, each row's float strings) is garbage the engine collects
 * late, and that garbage, not the rows in hand, made the peak; a collection
 * marks only the live heap (about one batch). Collecting at 1 MiB gave
 * little more memory back for a larger cost in time, at 4 MiB too little.
 */
const GC_EVERY_INPUT_BYTES = 2 << 20;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** `text` as a JSON object, or an InputError `code` saying what `what` is. */
export function parseObject(text: string | Uint8Array, what: string, code: ErrorCode, facts: Record<string, unknown> = {}): PyObject {
  let v: PyValue;
  try {
    // a long line is read without a value tree (src/pyjson/row.ts)
    v = typeof text === "string" ? parse(text) : parseRowBytes(text, RAW_MEMBER_MIN, RAW_STRING_MIN);
  } catch (err) {
    throw new InputError(code, `${what} is not valid JSON: ${(err as Error).message}`, facts);
  }
  if (!(v instanceof Map)) throw new InputError(code, `${what} must be a JSON object`, facts);
  return v;
}

/** One input line `{"event": "...", ...payload}` (text, or valid UTF-8 bytes) as an event, or an InputError naming the line. */
export function eventOfLine(text: string | Uint8Array, lineNo: number): RecordItem {
  const facts = { line: lineNo };
  const obj = parseObject(text, `stdin line ${lineNo}`, "invalid_event_line", facts);
  const event = obj.get("event");
  if (typeof event !== "string" || event === "") {
    throw new InputError("invalid_event_line", `stdin line ${lineNo}: "event" must be a non-empty string`, facts);
  }
  // the parsed object is ours: it becomes the payload (no copy of a wide object)
  const payload = obj;
  payload.delete("event");
  try {
    validateRecordInput(event, payload);
  } catch (err) {
    if (err instanceof BernsteinError) throw new InputError("invalid_event_line", `stdin line ${lineNo}: ${err.message}`, facts);
    throw err;
  }
  return { event, payload, line: lineNo };
}

export function decodeLine(bytes: Uint8Array, lineNo: number): string | Uint8Array {
  if (bytes.length >= BYTE_PATH_MIN) {
    if (isUtf8(bytes)) return bytes;
    throw new InputError("invalid_event_line", `stdin line ${lineNo} is not valid UTF-8`, { line: lineNo });
  }
  try {
    return utf8.decode(bytes);
  } catch {
    throw new InputError("invalid_event_line", `stdin line ${lineNo} is not valid UTF-8`, { line: lineNo });
  }
}

/** A long input line, encoded off the main thread (fast/record-encoder.ts). */
interface LongLine {
  long: Uint8Array;
  line: number;
}

/** A very long input line, recorded in pieces with turns of the event loop (EventJournal.recordLong). */
interface StreamLine {
  stream: Uint8Array;
  line: number;
}

/**
 * Lines this long (not wide enough for the worker) are recorded by
 * `recordLong`: hashing and writing them takes turns of the event loop, so
 * a signal is taken while a row of hundreds of megabytes is written.
 * Shorter ones are settled in a fraction of a second in the batch.
 */
const STREAM_LINE_MIN = 8 << 20;

/** An input line for the writer's byte path; parsed only when the writer declines its bytes (no closure made per line). */
class RawLine implements RawRecordItem {
  constructor(
    readonly raw: Uint8Array,
    readonly line: number,
  ) {}

  parse(): RecordItem {
    return eventOfLine(decodeLine(this.raw, this.line), this.line);
  }
}

/**
 * Append the JSON Lines of `chunks` (`{"event": ..., ...payload}`, LF or
 * CRLF separated, blank lines skipped) to `journal`, all or nothing: on any
 * error what this call appended is rolled back and the error rethrown. A
 * line over the journal's row limit (`journal.maxRowBytes`, what verify
 * takes by default) is `row_too_large`, and so is a line whose row (as
 * encoded) would be over it, before anything of it is written; a bad
 * line is `invalid_event_line` (all exit 3, naming the 1-based line).
 * Lines in json.dumps spelling are recorded without decoding them
 * (src/journal/fast/record-bytes.ts); a wide line (WORKER_LINE_MIN bytes
 * or more, with an object of WORKER_MEMBERS_MIN members or more at any
 * depth) is encoded on a worker thread while this one awaits it, so a signal is taken within
 * moments however long the row takes. `onRecorded` sees
 * the running count. Returns the number of events recorded.
 */
export async function recordLines(
  journal: EventJournal,
  chunks: AsyncIterable<Uint8Array>,
  onRecorded: (recorded: number) => void = () => {},
): Promise<number> {
  const start = journal.mark();
  const limit = journal.maxRowBytes;
  let recorded = 0;
  // What the splitter produced, in input order: batches of short lines, and long lines.
  let steps: ((RecordItem | RawRecordItem)[] | LongLine | StreamLine)[] = [];
  let batch: (RecordItem | RawRecordItem)[] = [];
  let batchBytes = 0;
  let encoder: RecordEncoder | null = null;
  const endBatch = (): void => {
    if (batch.length > 0) steps.push(batch);
    batch = [];
    batchBytes = 0;
  };
  const drain = async (): Promise<void> => {
    endBatch();
    const todo = steps;
    steps = [];
    for (const step of todo) {
      if (Array.isArray(step)) {
        journal.recordMany(step);
        recorded += step.length;
      } else if ("stream" in step) {
        const text = decodeLine(step.stream, step.line);
        if ((typeof text === "string" ? pyStrip(text) : pyStripBytes(text)).length === 0) continue; // a blank line
        await journal.recordLong(eventOfLine(text, step.line));
        recorded++;
      } else {
        const ctx = journal.nextRow();
        const row = await (encoder ??= new RecordEncoder()).encode(step.long, step.line, ctx, journal.maxRowBytes);
        if (row === null) continue; // a blank line
        journal.appendRow(row.line, row.hash, ctx, step.line);
        recorded++;
      }
      onRecorded(recorded);
    }
  };
  const splitter: LineSplitter = new LineSplitter(
    "lf",
    (line, lineNo) => {
      if (line === null) throw rowTooLarge("stdin", lineNo, limit);
      // The line is kept until its batch is written: copied when it lives in the splitter's buffer.
      const kept = splitter.detach(line);
      const end = kept.length;
      const bytes = end > 0 && kept[end - 1] === 13 ? kept.subarray(0, end - 1) : kept;
      // the buffers a long line was assembled in are garbage now: collected before its row is built
      if (bytes.length >= GC_HINT_MIN) Bun.gc(true);
      if (bytes.length >= WORKER_LINE_MIN && widestObject(bytes, WORKER_MEMBERS_MIN) >= WORKER_MEMBERS_MIN) {
        endBatch();
        steps.push({ long: bytes, line: lineNo });
        return;
      }
      if (bytes.length >= STREAM_LINE_MIN) {
        endBatch();
        steps.push({ stream: bytes, line: lineNo });
        return;
      }
      batchBytes += bytes.length;
      if (bytes[0] === 0x7b) {
        // "{": the writer takes it at byte level, or calls parse()
        batch.push(new RawLine(bytes, lineNo));
      } else {
        const text = decodeLine(bytes, lineNo);
        if ((typeof text === "string" ? pyStrip(text) : pyStripBytes(text)).length === 0) return;
        batch.push(eventOfLine(text, lineNo));
      }
      if (batch.length >= BATCH || batchBytes >= BATCH_BYTES) endBatch();
    },
    limit,
  );
  try {
    let sinceGc = 0;
    for await (const chunk of chunks) {
      splitter.push(chunk);
      // The row limit holds while a line streams in: it is never assembled past it.
      if (splitter.overlong) throw rowTooLarge("stdin", splitter.lines + 1, limit);
      await drain();
      sinceGc += chunk.length;
      if (sinceGc >= GC_EVERY_INPUT_BYTES) {
        sinceGc = 0;
        Bun.gc(true);
      }
    }
    splitter.end();
    await drain();
  } catch (err) {
    journal.rollback(start);
    throw err;
  } finally {
    (encoder as RecordEncoder | null)?.close();
  }
  return recorded;
}
