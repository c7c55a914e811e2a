/**
 * `replay <RUN> --follow`: a run journal read as it grows, like `tail -f`
 * with a verdict. Each complete line appended is classified by the journal
 * reader (journal/reader.ts) and pushed through the chain walker
 * (journal/chain.ts) before it is handed on, so an event is shown only once
 * its hash checked out at its position; the verdict is journal/verdict.ts's.
 *
 * It ends when the run ends (its `run_completed` event), when the run's
 * process is gone (`runAlive`) and the journal stayed still for `quietMs`, at the first divergent or
 * unreadable line (the verdict names it), or when `signal` aborts (the
 * verdict so far). A trailing line without its line break is not read
 * until the break arrives: a writer mid-append is not a torn journal.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { physicalLines } from "../fsutil/lines.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";
import { EventChainWalker } from "../journal/chain.ts";
import type { JournalVerifyResult, LastLine } from "../journal/model.ts";
import { classifyLine, type JournalRow } from "../journal/reader.ts";
import { chainVerdict } from "../journal/verdict.ts";

/** How often the journal's size is looked at. */
export const FOLLOW_POLL_MS = 100;
/** A run whose process is gone is over once its journal stayed still this long. */
export const FOLLOW_QUIET_MS = 2000;

export type FollowEnd = "run_completed" | "run_gone" | "diverged" | "interrupted";

export interface FollowOptions {
  path: string;
  /** Whether the run's process is still there (the caller reads orchestrator.json). */
  runAlive: () => boolean;
  /** Each verified event in order: its 0-based index and physical line. */
  onEvent: (index: number, line: number, row: JournalRow) => Promise<void> | void;
  /** The events of the lines there so far were handed out: called before waiting for more (and before returning). */
  onCaughtUp?: () => Promise<void> | void;
  signal: AbortSignal;
  quietMs?: number;
}

export interface FollowResult {
  end: FollowEnd;
  verdict: JournalVerifyResult;
}

/** Offset just past the last line feed in [from, size), or `from` when there is none. */
function completeLinesEnd(path: string, from: number, size: number): number {
  const fd = openSync(path, "r");
  try {
    const buf = new Uint8Array(64 * 1024);
    for (let end = size; end > from; ) {
      const start = Math.max(from, end - buf.length);
      const n = readSync(fd, buf, 0, end - start, start);
      for (let i = n - 1; i >= 0; i--) if (buf[i] === 0x0a) return start + i + 1;
      end = start;
    }
    return from;
  } finally {
    closeSync(fd);
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export async function followJournal(o: FollowOptions): Promise<FollowResult> {
  const walker = new EventChainWalker();
  const discarded: number[] = [];
  let lastLine: LastLine | null = null;
  const verdict = (): JournalVerifyResult => chainVerdict({ path: o.path, exists: true, walk: walker, discarded, lastLine });
  const quietMs = o.quietMs ?? FOLLOW_QUIET_MS;
  let offset = 0;
  let lineBase = 0;
  let stillSince = Date.now();
  // catching up with a long journal is one synchronous read: a turn of the event loop now and then lets a signal in
  const turns = new TurnPacer(100, 256);
  const ended = async (end: FollowEnd): Promise<FollowResult> => {
    await o.onCaughtUp?.();
    return { end, verdict: verdict() };
  };
  for (;;) {
    const size = sizeOf(o.path);
    const end = size > offset ? completeLinesEnd(o.path, offset, size) : offset;
    if (end > offset) {
      stillSince = Date.now();
      let lines = 0;
      for (const pl of physicalLines(o.path, { startOffset: offset, endOffset: end })) {
        lines = pl.index + 1;
        const line = lineBase + pl.index;
        lastLine = { index: line, start: pl.start, terminated: pl.terminated };
        const v = classifyLine(pl.bytes);
        if (v.kind === "blank") continue;
        if (v.kind === "discarded") {
          discarded.push(line);
          return ended("diverged");
        }
        const index = walker.count;
        walker.push(v.row, line);
        if (walker.divergence !== null) return ended("diverged");
        await o.onEvent(index, line, v.row);
        if (v.row.get("event") === "run_completed") return ended("run_completed");
        if (turns.due()) {
          // the rows read exactly are garbage the engine collects late: collected at each turn, the peak stays lower
          Bun.gc(true);
          await nextTurn();
        }
        if (o.signal.aborted) return ended("interrupted");
      }
      offset = end;
      lineBase += lines;
      continue;
    }
    await o.onCaughtUp?.();
    if (o.signal.aborted) return ended("interrupted");
    if (!o.runAlive() && Date.now() - stillSince >= quietMs) return ended("run_gone");
    await sleepUnlessAborted(FOLLOW_POLL_MS, o.signal);
  }
}

/** Sleep `ms`, or less when `signal` aborts meanwhile. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
