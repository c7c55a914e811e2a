/**
 * Coalesced session saving for a running orchestrator: every change of task
 * state calls `notify()`; the first change after a quiet period is saved at
 * once, later ones at most every `intervalMs` (trailing save included), and
 * `flush()` saves synchronously (shutdown, signal handlers). A `kill -9`
 * therefore loses at most the changes of the last interval, and the file is
 * always a whole snapshot (atomic replace).
 */
import { saveSession, type SessionState } from "./state.ts";

export interface SessionSaverOptions {
  sddDir: string;
  /** Builds the snapshot to save (read at save time, not at notify time). */
  snapshot: () => SessionState;
  intervalMs?: number;
  onError?: (err: unknown) => void;
}

export class SessionSaver {
  private readonly opts: Required<Omit<SessionSaverOptions, "onError">> & Pick<SessionSaverOptions, "onError">;
  private lastSave = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private dirty = false;
  private closed = false;
  /** Number of snapshots written (for tests and diagnostics). */
  saves = 0;

  constructor(opts: SessionSaverOptions) {
    this.opts = { intervalMs: 200, ...opts };
  }

  /** A task changed state: save now, or soon if a save just happened. */
  notify(): void {
    if (this.closed) return;
    this.dirty = true;
    if (this.timer) return;
    const wait = this.lastSave + this.opts.intervalMs - Date.now();
    if (wait <= 0) {
      this.save();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.dirty) this.save();
    }, wait);
  }

  /** Save now (synchronously) regardless of the interval. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.save();
  }

  /** Final flush; later notifications are ignored. */
  close(): void {
    this.flush();
    this.closed = true;
  }

  private save(): void {
    this.dirty = false;
    this.lastSave = Date.now();
    try {
      saveSession(this.opts.sddDir, this.opts.snapshot());
      this.saves++;
    } catch (err) {
      this.opts.onError?.(err);
    }
  }
}
