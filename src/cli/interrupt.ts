import { removeLiveTemps } from "../fsutil/temp-files.ts";
import { renderJson } from "../render/json.ts";
import { log } from "./log.ts";
import { flushStderr, flushStdout, giveUpStdoutAfter, stderrAfterSignal, stdoutBegun, writeStdoutBeforeExit } from "./output.ts";
import { clearProgress } from "./progress.ts";

/**
 * SIGINT / SIGTERM during a command that verifies, writes or reads a whole
 * journal (journal verify/record/seal, every replay form): end it cleanly
 * instead of dying mid-line. The progress line is erased,
 * temp files being written are removed (nothing half-written stays beside
 * its target), and the caller gets a verdict it cannot mistake for a
 * result: under `--as-json` exactly one document
 * `{"ok": false, "error": "interrupted", "detail", "signal", …known facts}`,
 * otherwise one line on stderr. Exit 130 (SIGINT) or 143 (SIGTERM), the
 * shell's 128 + signal number.
 */

export const INTERRUPT_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;
export type InterruptSignal = keyof typeof INTERRUPT_EXIT;

export interface InterruptOptions {
  json: boolean;
  /** The command path, e.g. "journal verify". */
  command: string;
  /** What is known at the moment of the signal (path, bytes verified, events recorded…). */
  facts?: () => Record<string, unknown>;
  /** What the command was doing, for the detail line: "verifying …". */
  doing?: () => string;
  /** Undo or release what the command holds (roll back appended rows, release a lock); runs before the report. */
  cleanup?: () => void;
}

/** The interrupted document / line for a signal (exported for tests). */
export function interruptedReport(sig: InterruptSignal, opts: InterruptOptions, removed: string[]): { detail: string; doc: Record<string, unknown> } {
  let facts: Record<string, unknown> = {};
  let doing = "";
  try {
    facts = opts.facts?.() ?? {};
    doing = opts.doing?.() ?? "";
  } catch {
    /* a fact that cannot be computed is left out */
  }
  const detail = `${opts.command} was interrupted by ${sig}${doing ? ` while ${doing}` : ""}; it did not finish, so there is no result`;
  return { detail, doc: { ok: false, error: "interrupted", detail, signal: sig, command: opts.command, ...facts, temp_files_removed: removed } };
}

/**
 * Handle SIGINT/SIGTERM for the duration of `work`. The handler runs on
 * the event loop, i.e. at the command's next await; long CPU-bound loops
 * must yield now and then (the fast verifier does between ranges).
 */
export async function withInterrupts<T>(opts: InterruptOptions, work: () => Promise<T>): Promise<T> {
  const handler = (sig: InterruptSignal) => {
    // Guards nest (a command's around its verb's): the innermost one reports, with its facts.
    if (guards[guards.length - 1] !== handler) return;
    stderrAfterSignal();
    clearProgress();
    const removed = removeLiveTemps();
    try {
      opts.cleanup?.();
    } catch {
      /* best effort: the exit code and the report still say it was interrupted */
    }
    const { detail, doc } = interruptedReport(sig, opts, removed);
    try {
      // A document already begun on stdout cannot be followed by another one.
      if (opts.json && !stdoutBegun()) writeStdoutBeforeExit(renderJson(doc, 2) + "\n");
      else log.error(detail);
    } catch {
      /* stdout failed too: the exit code still says it */
    }
    // The report above was handed to the OS by a synchronous write, so
    // exiting here truncates nothing of it; the work itself must not go on
    // (a write of its output waiting on the reader is dropped with it).
    process.exit(INTERRUPT_EXIT[sig]);
  };
  guards.push(handler);
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  try {
    return await flushedAfter(work);
  } finally {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
    guards.splice(guards.lastIndexOf(handler), 1);
  }
}

/**
 * Run `work`, which answers SIGINT/SIGTERM itself (a watch that ends with
 * what it saw, exit 0): either signal aborts `abort` (the work may abort it
 * too, when its reader went away) and gives stdout a grace to take what
 * was written (giveUpStdoutAfter); a guard around it stands aside meanwhile.
 */
export async function withOwnSignalHandling<T>(work: (abort: AbortController) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const stop = (): void => {
    abort.abort();
    giveUpStdoutAfter();
  };
  const standAside = (): void => {};
  guards.push(standAside);
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    return await flushedAfter(() => work(abort));
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    guards.splice(guards.lastIndexOf(standAside), 1);
  }
}

/** `work`, then its output and diagnostics flushed: they are part of it (a reader who stopped reading is still waited for under the guard). */
async function flushedAfter<T>(work: () => Promise<T>): Promise<T> {
  const result = await work();
  await flushStdout();
  await flushStderr();
  return result;
}

/** The handlers of the guards in effect, innermost last (a work that answers signals itself: a no-op). */
const guards: ((sig: InterruptSignal) => void)[] = [];
