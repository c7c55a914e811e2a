import { isTerminal } from "../render/terminal.ts";
import { writeStderr } from "./output.ts";

/**
 * The CLI's one progress line: drawn on stderr only when stderr is a
 * terminal (nothing at all when it is piped or redirected), redrawn in
 * place, and erased when the work ends — or when a signal ends it
 * (`clearProgress()`, called by interrupt.ts). Every long-running command
 * draws through here; none writes `\r` itself.
 */
export interface ProgressLine {
  /** Replace the line's text (no-op off a terminal). */
  draw(text: string): void;
  /** Erase the line, if one was drawn. */
  clear(): void;
}

const lines = new Set<Line>();

/** Where a line is drawn: stderr, or a fake terminal in tests. */
export interface ProgressSink {
  isTTY(): boolean;
  write(text: string): void;
}

class Line implements ProgressLine {
  private drawn = false;
  constructor(private readonly sink: ProgressSink) {}

  draw(text: string): void {
    if (!this.sink.isTTY()) return;
    this.sink.write(`\r${text}\x1b[K`);
    this.drawn = true;
    lines.add(this);
  }

  clear(): void {
    lines.delete(this);
    if (!this.drawn) return;
    this.drawn = false;
    this.sink.write("\r\x1b[K");
  }
}

/**
 * A progress line. stderr is looked at on the first draw only (an fstat,
 * not a stream), so a command that finishes quickly pays nothing.
 */
export function progressLine(sink?: ProgressSink): ProgressLine {
  let tty: boolean | null = null;
  return new Line(sink ?? { isTTY: () => (tty ??= isTerminal(2)), write: writeStderr });
}

/** Erase every progress line on the screen (a signal is ending the command). */
export function clearProgress(): void {
  for (const line of [...lines]) line.clear();
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

function duration(s: number): string {
  if (!Number.isFinite(s)) return "?";
  if (s < 60) return `${Math.ceil(s)}s`;
  return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, "0")}s`;
}

export interface ByteProgress {
  /** Bytes done of total; called from any thread's sampling, in any order. */
  onProgress: (done: number, total: number) => void;
  /** Erase the line. */
  finish: () => void;
  /** The furthest point reported so far (what an interrupted verdict can state). */
  readonly done: number;
  readonly total: number;
}

/** BERNSTEIN_PROGRESS_DELAY_MS: how long work runs before its line appears (default 1000; 0 = at once). */
function delayFromEnv(): number {
  const v = Number(process.env.BERNSTEIN_PROGRESS_DELAY_MS);
  return Number.isFinite(v) && v >= 0 ? v : 1000;
}

/**
 * `<verb> 12.0 MB / 48.0 MB (25%), 300 MB/s, ETA 1s` for work measured in
 * bytes, shown once the work has run for `delayMs`. Monotonic: samples
 * from several threads can arrive out of order and the total can grow (a
 * redo), but neither the bytes nor the percentage shown ever go back.
 */
export function byteProgress(
  verb: string,
  opts: { delayMs?: number; sink?: ProgressSink; now?: () => number } = {},
): ByteProgress {
  const line = progressLine(opts.sink);
  const now = opts.now ?? (() => performance.now());
  const delayMs = opts.delayMs ?? delayFromEnv();
  const started = now();
  let done = 0;
  let total = 0;
  let pct = 0;
  return {
    onProgress(d, t) {
      total = Math.max(total, t);
      done = Math.min(total, Math.max(done, d));
      pct = Math.max(pct, total > 0 ? Math.floor((100 * done) / total) : 100);
      const elapsed = (now() - started) / 1000;
      if (elapsed * 1000 < delayMs) return;
      const rate = done / elapsed;
      const eta = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
      line.draw(`${verb} ${mb(done)} / ${mb(total)} (${pct}%), ${mb(rate)}/s, ETA ${duration(eta)}`);
    },
    finish: () => line.clear(),
    get done() {
      return done;
    },
    get total() {
      return total;
    },
  };
}
