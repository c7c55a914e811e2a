import type { OutBytes } from "../codec/row-index.ts";
import { sanitizeCell } from "../render/table.ts";
import { displayRow, numberField } from "./display.ts";
import { RowCells } from "./fast-cells.ts";
import type { FollowedEvent } from "./follow.ts";
import { PlainLines } from "./plain-lines.ts";

/** The buffer's first size (it grows to what the caller writes at once: one read's lines while catching up). */
const FLUSH_AT = 1 << 16;

/**
 * The lines `replay <RUN> --follow` prints, one per event, as bytes: prose
 * `INDEX  TIME  EVENT AGENT TASK DETAIL` (padded to 4, 5, 22, 18 and 8,
 * sanitized, trimmed), or with --as-json `renderJson({ index, event: row }, null)`.
 * A row the display's kernel read (`event.loaded`) whose cells are plain
 * (fast-cells.ts RowCells: printable ASCII, so sanitizing changes nothing)
 * is written from its spans; any other through displayRow, the reference
 * (`proseLine`). The time base is the first `ts` that is a number, as it was
 * for the first lines printed.
 */
export class FollowLines extends PlainLines {
  private baseTs: number | null = null;
  private readonly cells = new RowCells();
  /** These lines as a byte sink (the codec's OutBytes): an event's JSON is rendered straight into them. */
  private readonly sink: OutBytes;

  constructor(private readonly json: boolean) {
    super(FLUSH_AT * 2);
    const lines = this;
    this.sink = {
      get buf() {
        return lines.out;
      },
      get len() {
        return lines.pos;
      },
      set len(n: number) {
        lines.pos = n;
      },
      reserve: (n: number) => lines.room(n),
    };
  }

  /** The event's line appended. */
  event(index: number, ev: FollowedEvent): void {
    if (this.json) {
      this.room(JSON_HEAD.length + 16 + JSON_EVENT.length);
      this.out.set(JSON_HEAD, this.pos);
      this.pos += JSON_HEAD.length;
      this.digits(index);
      this.out.set(JSON_EVENT, this.pos);
      this.pos += JSON_EVENT.length;
      ev.writeJson(this.sink);
      this.room(2);
      this.out[this.pos++] = 0x7d; // }
      this.out[this.pos++] = 0x0a;
      return;
    }
    if (this.baseTs === null) this.baseTs = numberField(ev.fields.get("ts"));
    const r = ev.loaded;
    if (r !== null && this.cells.read(r, this.baseTs)) this.plainLine(index, this.cells);
    else this.text(proseLine(index, ev, this.baseTs));
  }

  /** The line of plain cells: proseLine's padding, then trimmed at its end. */
  private plainLine(index: number, c: RowCells): void {
    this.room(64 + (c.eventE - c.eventS) + (c.agentE - c.agentS) + (c.taskE - c.taskS) + (c.detailE - c.detailS));
    const start = this.pos;
    this.pad(4 - digitCount(index));
    this.digits(index);
    this.pad(2 + Math.max(0, 5 - (c.timeE - c.timeS)));
    this.copy(c.timeB, c.timeS, c.timeE);
    this.pad(2);
    this.padded(c.eventB, c.eventS, c.eventE, 22);
    this.padded(c.agentB, c.agentS, c.agentE, 18);
    this.padded(c.taskB, c.taskS, c.taskE, 8);
    this.copy(c.detailB, c.detailS, c.detailE);
    this.endLine(start);
  }

  /** String(n) of the index n. */
  private digits(n: number): void {
    const d = digitCount(n);
    for (let i = d - 1; i >= 0; i--, n = Math.floor(n / 10)) this.out[this.pos + i] = 0x30 + (n % 10);
    this.pos += d;
  }

  /** b[s, e) padded to `width`, and the space after it. */
  private padded(b: Uint8Array, s: number, e: number, width: number): void {
    this.copy(b, s, e);
    this.pad(Math.max(0, width - (e - s)) + 1);
  }

  /** The lines appended since the last reset. */
  view(): Uint8Array {
    return this.out.subarray(0, this.pos);
  }

  reset(): void {
    this.pos = 0;
    // a huge row's line is not kept around for the next ones
    if (this.out.length > 1 << 24) this.out = new Uint8Array(FLUSH_AT * 2);
  }
}

const utf8 = new TextEncoder();
const JSON_HEAD = utf8.encode('{"index": ');
const JSON_EVENT = utf8.encode(', "event": ');

function digitCount(n: number): number {
  let d = 1;
  for (; n >= 10; n = Math.floor(n / 10)) d++;
  return d;
}

/** The prose line of an event, made from its fields (the reference of FollowLines' plain lines). */
function proseLine(index: number, ev: FollowedEvent, baseTs: number | null): string {
  const d = displayRow(ev.fields, baseTs);
  return sanitizeCell(`${String(index).padStart(4)}  ${d.time.padStart(5)}  ${d.event.padEnd(22)} ${d.agent.padEnd(18)} ${d.task.padEnd(8)} ${d.detail}`).trimEnd() + "\n";
}
