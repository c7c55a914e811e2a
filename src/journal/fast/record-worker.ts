/**
 * Worker-thread entry of `journal record` for a long input line (see
 * record-encoder.ts): parse, validate and encode it into its row off the
 * main thread, so the main thread stays free to take SIGINT/SIGTERM while a
 * multi-megabyte row is encoded. The worker writes nothing: it returns the
 * row's bytes and event hash, or the error the line deserves. Listed in
 * scripts/worker-entrypoints.txt so the compiled binary embeds it.
 */
import { eventOfLine, decodeLine } from "../record-lines.ts";
import { pyStrip } from "../../pyjson/python.ts";
import { pyStripBytes } from "../../pyjson/row.ts";
import { checkRecordInput, checkRowSize, encodeRow, entriesOf } from "../writer.ts";
import { toWire } from "./protocol.ts";
import type { EncodeReply, EncodeRequest } from "./record-encoder.ts";

declare const self: Worker;

const ascii = new TextEncoder();

self.onmessage = (event: MessageEvent<EncodeRequest | { kind: "close" }>) => {
  const msg = event.data;
  if (msg.kind === "close") {
    (self as unknown as { close(): void }).close();
    return;
  }
  let reply: EncodeReply;
  try {
    const text = decodeLine(msg.bytes, msg.line);
    if ((typeof text === "string" ? pyStrip(text) : pyStripBytes(text)).length === 0) {
      self.postMessage({ kind: "blank", id: msg.id } satisfies EncodeReply);
      return;
    }
    const ev = eventOfLine(text, msg.line);
    const entries = entriesOf(ev.payload);
    checkRecordInput(ev.event, entries);
    const { line, hash } = encodeRow(ev.event, ev.payload, entries, msg.ctx);
    checkRowSize(line, msg.ctx.index, msg.line, msg.limit);
    const bytes = typeof line === "string" ? ascii.encode(line) : line;
    reply = { kind: "row", id: msg.id, line: bytes, hash };
  } catch (err) {
    reply = { kind: "error", id: msg.id, error: toWire(err) };
  }
  if (reply.kind === "row") self.postMessage(reply, [reply.line.buffer as ArrayBuffer]);
  else self.postMessage(reply);
};
