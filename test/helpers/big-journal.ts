import { closeSync, openSync, writeSync } from "node:fs";
import { eventHash, payloadHash } from "../../src/journal/hash.ts";

/**
 * A journal of `rows` rows with a correct chain, written directly (payload
 * hashes computed once per event type, one event hash per row), so even
 * millions of rows take seconds. ~270 bytes a row, plus `noteBytes` in a
 * `note` field of every payload but the first (big files from few rows).
 * Returns the head.
 */
export function writeBigJournal(path: string, rows: number, noteBytes = 0): string {
  const note = "n".repeat(noteBytes);
  const [nb, np] = noteBytes > 0 ? [`, "note": "${note}"`, { note }] : ["", {}];
  const kinds = [
    ["run_started", '"run_id": "big"', { run_id: "big" }],
    ["agent_spawned", '"agent_id": "backend-1234567", "role": "backend", "model": "opus"' + nb, { agent_id: "backend-1234567", role: "backend", model: "opus", ...np }],
    ["task_completed", '"task_id": "T-1", "agent_id": "backend-1234567", "cost_usd": 0.5' + nb, { task_id: "T-1", agent_id: "backend-1234567", cost_usd: 0.5, ...np }],
    ["tick_start", '"tick": 7' + nb, { tick: 7, ...np }],
  ] as const;
  const ph = kinds.map(([e, , p]) => payloadHash(e, p));
  const fd = openSync(path, "w");
  let prev = "";
  let buf = "";
  for (let i = 0; i < rows; i++) {
    const k = i === 0 ? 0 : 1 + (i % 3);
    const [ev, body] = kinds[k]!;
    const h = eventHash(prev, ev, ph[k]!, i);
    buf += `{"ts": ${1763000000 + i}, "elapsed_s": ${i}, "index": ${i}, "event": "${ev}", "prev_hash": "${prev}", "payload_hash": "${ph[k]}", "event_hash": "${h}", ${body}}\n`;
    prev = h;
    if (buf.length > 1 << 22) {
      writeSync(fd, buf);
      buf = "";
    }
  }
  writeSync(fd, buf);
  closeSync(fd);
  return prev;
}
