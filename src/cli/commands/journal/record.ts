import { BernsteinError, InputError, UsageError, type ErrorCode } from "../../../errors.ts";
import { MAX_ROW_BYTES, rowTooLarge } from "../../../fsutil/input.ts";
import { EventJournal, validateRecordInput, type RawRecordItem, type RecordItem } from "../../../journal/writer.ts";
import { isUtf8 } from "node:buffer";
import { parse } from "../../../pyjson/parse.ts";
import { BYTE_PATH_MIN, parseRowBytes, pyStripBytes } from "../../../pyjson/row.ts";
import { pyStrip } from "../../../pyjson/python.ts";
import type { PyObject, PyValue } from "../../../pyjson/types.ts";
import { defineCliCommand } from "../../command.ts";
import { withInterrupts } from "../../interrupt.ts";
import { printJson, printLines } from "../../output.ts";

const USAGE = "usage: bernstein journal record <RUN_ID> [EVENT] [--data JSON] [--sdd-dir DIR]  (without EVENT: JSON Lines on stdin)";

/** Events per `recordMany` call when reading stdin, and input bytes (a batch of big rows stays small in memory). */
const BATCH = 2048;
const BATCH_BYTES = 4 << 20;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function parseObject(text: string | Uint8Array, what: string, code: ErrorCode, facts: Record<string, unknown> = {}): PyObject {
  let v: PyValue;
  try {
    // a long line is read without a value tree (src/pyjson/row.ts)
    v = typeof text === "string" ? parse(text) : parseRowBytes(text);
  } catch (err) {
    throw new InputError(code, `${what} is not valid JSON: ${(err as Error).message}`, facts);
  }
  if (!(v instanceof Map)) throw new InputError(code, `${what} must be a JSON object`, facts);
  return v;
}

/** One stdin line `{"event": "...", ...payload}` (text, or valid UTF-8 bytes) as an event, or an InputError naming the line. */
function eventOfLine(text: string | Uint8Array, lineNo: number): RecordItem {
  const facts = { line: lineNo };
  const obj = parseObject(text, `stdin line ${lineNo}`, "invalid_event_line", facts);
  const event = obj.get("event");
  if (typeof event !== "string" || event === "") {
    throw new InputError("invalid_event_line", `stdin line ${lineNo}: "event" must be a non-empty string`, facts);
  }
  const payload = new Map(obj);
  payload.delete("event");
  try {
    validateRecordInput(event, payload);
  } catch (err) {
    if (err instanceof BernsteinError) throw new InputError("invalid_event_line", `stdin line ${lineNo}: ${err.message}`, facts);
    throw err;
  }
  return { event, payload };
}

function decodeLine(bytes: Uint8Array, lineNo: number): string | Uint8Array {
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

/**
 * Lines of stdin as bytes, streamed (LF or CRLF separated, the CR dropped),
 * with 1-based numbers: the writer records lines in json.dumps spelling
 * without decoding them (src/journal/fast/record-bytes.ts).
 */
async function* stdinLines(): AsyncGenerator<{ bytes: Uint8Array; lineNo: number }> {
  let pending: Uint8Array[] = [];
  let pendingLen = 0;
  let lineNo = 0;
  const decode = (bytes: Uint8Array): Uint8Array => {
    lineNo++;
    const end = bytes.length;
    return end > 0 && bytes[end - 1] === 13 ? bytes.subarray(0, end - 1) : bytes;
  };
  const join = (tail: Uint8Array): Uint8Array => {
    if (pending.length === 0) return tail;
    const parts = [...pending, tail];
    pending = [];
    pendingLen = 0;
    return Buffer.concat(parts);
  };
  for await (const chunk of Bun.stdin.stream()) {
    let p = 0;
    for (;;) {
      const nl = chunk.indexOf(10, p);
      if (nl < 0) break;
      if (pendingLen + nl - p > MAX_ROW_BYTES) throw rowTooLarge("stdin", lineNo + 1);
      const bytes = decode(join(chunk.subarray(p, nl)));
      yield { bytes, lineNo };
      p = nl + 1;
    }
    if (p < chunk.length) {
      // The row limit holds here too: a line is never assembled past it.
      pendingLen += chunk.length - p;
      if (pendingLen > MAX_ROW_BYTES) throw rowTooLarge("stdin", lineNo + 1);
      pending.push(chunk.slice(p));
    }
  }
  if (pending.length > 0) {
    const bytes = decode(join(new Uint8Array(0)));
    yield { bytes, lineNo };
  }
}

export default defineCliCommand({
  meta: {
    name: "record",
    description:
      "Append events to a run journal (resuming its chain): one EVENT with --data, or JSON Lines {\"event\": ..., ...payload} on stdin",
  },
  args: {
    run_id: { type: "positional", required: false, description: "Run id (journal at <sdd-dir>/runs/<RUN_ID>/journal.jsonl)" },
    event: { type: "positional", required: false, description: "Event type; omit to read JSON Lines from stdin" },
    data: { type: "string", description: "Payload of EVENT as a JSON object (default {})" },
    "sdd-dir": { type: "string", description: "State directory holding runs/ (default .sdd)" },
  },
  async run({ args, json }) {
    const words = args._.map(String);
    if (words.length < 1 || words.length > 2) throw new UsageError(USAGE);
    const [runId, event] = words as [string, string | undefined];
    const sddDir = args["sdd-dir"] ?? ".sdd";
    let payload: PyObject | null = null;
    if (event !== undefined) {
      payload = parseObject(args.data ?? "{}", "--data", "invalid_data");
      validateRecordInput(event, payload);
    } else if (args.data !== undefined) {
      throw new UsageError("--data needs an EVENT (stdin mode takes the payload from each line)");
    }
    // Open first: a held lock or a torn tail is reported before any input is read.
    const journal = EventJournal.open(runId, { sddDir });
    let recorded = 0;
    // All or nothing, also when a signal ends it: what this command appended is rolled back.
    const start = journal.mark();
    const guard = {
      json,
      command: "journal record",
      doing: () => `reading events from stdin (the ${recorded} event(s) it had appended were rolled back)`,
      cleanup: () => {
        journal.rollback(start);
        journal.close();
      },
      facts: () => ({ run_id: runId, path: journal.path, recorded: 0, rolled_back: recorded, count: journal.count() }),
    };
    await withInterrupts(guard, async () => {
      try {
        if (event !== undefined) {
          journal.record(event, payload!);
          recorded = 1;
        } else {
          let batch: (RecordItem | RawRecordItem)[] = [];
          let batchBytes = 0;
          try {
            for await (const { bytes, lineNo } of stdinLines()) {
              batchBytes += bytes.length;
              if (bytes[0] === 0x7b) {
                // "{": the writer takes it at byte level, or calls parse()
                batch.push({ raw: bytes, parse: () => eventOfLine(decodeLine(bytes, lineNo), lineNo) });
              } else {
                const text = decodeLine(bytes, lineNo);
                if ((typeof text === "string" ? pyStrip(text) : pyStripBytes(text)).length === 0) continue;
                batch.push(eventOfLine(text, lineNo));
              }
              if (batch.length >= BATCH || batchBytes >= BATCH_BYTES) {
                journal.recordMany(batch);
                recorded += batch.length;
                batch = [];
                batchBytes = 0;
              }
            }
            journal.recordMany(batch);
            recorded += batch.length;
          } catch (err) {
            journal.rollback(start);
            throw err;
          }
        }
      } finally {
        journal.close();
      }
    });
    const count = journal.count();
    const head = journal.head();
    if (json) {
      await printJson({ ok: true, run_id: runId, path: journal.path, recorded, count, head });
    } else {
      await printLines(`recorded ${recorded} event(s) to run ${runId}: count ${count}, head ${head || "(empty)"}`);
    }
    return 0;
  },
});
