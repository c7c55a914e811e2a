/**
 * Running one subprocess (an agent or a verification gate) with its output
 * captured to a log file. Each child gets its own process group, so a stop
 * or a timeout kills the agent together with whatever it started, and a
 * terminal Ctrl-C reaches only the orchestrator (which then stops them).
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { ensurePrivateDir, PRIVATE_FILE_MODE } from "../server/paths.ts";
import { dirname } from "node:path";

export interface SpawnSpec {
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  /** Written to stdin, which is then closed; null leaves stdin empty. */
  stdin: string | null;
  /** stdout and stderr are appended here as they arrive. */
  logPath: string;
  /** Kill the process group after this long (ms). */
  timeoutMs: number;
  /**
   * Send stdout to this file instead of a pipe (copied into the log once
   * the process ends). For CLIs that exit before a pipe is drained: gemini
   * loses the end of a large stream-json output on a pipe whose reader is
   * slower than it (most of a megabyte-sized stream was lost).
   */
  stdoutPath?: string;
  /**
   * Each stretch of the agent's stdout as it arrives (from the pipe, or with
   * stdoutPath read from the file every LIVE_POLL_MS while the agent runs, so
   * the log gets it live too), the last one before `done` resolves.
   */
  onStdout?: (chunk: Uint8Array) => void;
}

/** How often a stdout file is read while its agent runs. */
export const LIVE_POLL_MS = 150;

export interface ProcessOutcome {
  /** null when killed by a signal or never started. */
  exitCode: number | null;
  signal: string | null;
  /** The last MAX_CAPTURE bytes of stdout (the result is parsed from it). */
  stdout: string;
  /** The last MAX_STDERR_CAPTURE bytes of stderr (a crashed agent's reason). */
  stderr: string;
  timedOut: boolean;
  /** Killed on request (stop). */
  killed: boolean;
  /** Set when the process could not be started at all. */
  spawnError: string | null;
  startedAt: number;
  endedAt: number;
}

const MAX_CAPTURE = 1024 * 1024;
const MAX_STDERR_CAPTURE = 64 * 1024;
/** After SIGTERM, a process group gets this long before SIGKILL. */
export const KILL_GRACE_MS = 2000;

export interface RunningProcess {
  readonly pid: number | null;
  readonly done: Promise<ProcessOutcome>;
  /** Terminate the process group (SIGTERM, then SIGKILL after the grace period). */
  kill(graceMs?: number): void;
}

function signalGroup(pid: number, sig: NodeJS.Signals, leaderToo = true): void {
  try {
    process.kill(-pid, sig);
  } catch {
    if (!leaderToo) return;
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Append a process's stdout file from byte `from` to its log and keep its
 * tail as the captured stdout; returns the offset copied up to. Called while
 * the process runs (live) and once more after it ends (the rest).
 */
function copyStdoutFile(fd: number, from: number, write: (chunk: Uint8Array) => void, out: { push(chunk: Uint8Array): void }, onStdout?: (chunk: Uint8Array) => void): number {
  const size = fstatSync(fd).size;
  if (size <= from) return from;
  const buf = new Uint8Array(Math.min(1024 * 1024, size - from));
  let at = from;
  while (at < size) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, size - at), at);
    if (n <= 0) break;
    const chunk = buf.subarray(0, n);
    write(chunk);
    out.push(chunk);
    if (onStdout) {
      try {
        onStdout(chunk);
      } catch {
        /* a live reader's failure must not lose the agent's output */
      }
    }
    at += n;
  }
  return at;
}

export function spawnLogged(spec: SpawnSpec): RunningProcess {
  // Agent output can hold anything the agent read: owner-only.
  ensurePrivateDir(dirname(spec.logPath));
  const logFd = openSync(spec.logPath, "a", PRIVATE_FILE_MODE);
  const write = (chunk: Uint8Array | string): void => {
    try {
      if (typeof chunk === "string") writeSync(logFd, chunk);
      else writeSync(logFd, chunk);
    } catch {
      /* a full disk must not kill the run; the outcome still counts */
    }
  };
  const startedAt = Date.now() / 1000;
  let proc: ReturnType<typeof Bun.spawn>;
  let stdoutFd: number | null = null;
  try {
    if (spec.stdoutPath) stdoutFd = openSync(spec.stdoutPath, "w+", PRIVATE_FILE_MODE);
    proc = Bun.spawn(spec.argv, {
      cwd: spec.cwd,
      env: spec.env,
      stdin: spec.stdin === null ? "ignore" : "pipe",
      stdout: stdoutFd ?? "pipe",
      stderr: "pipe",
      detached: true,
    });
  } catch (err) {
    if (stdoutFd !== null) closeSync(stdoutFd);
    const msg = (err as Error).message;
    write(`[bernstein] could not start ${spec.argv[0]}: ${msg}\n`);
    closeSync(logFd);
    const now = Date.now() / 1000;
    return {
      pid: null,
      done: Promise.resolve({ exitCode: null, signal: null, stdout: "", stderr: "", timedOut: false, killed: false, spawnError: msg, startedAt, endedAt: now }),
      kill() {},
    };
  }
  const pid = proc.pid;
  let timedOut = false;
  let killed = false;
  let exited = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;

  const terminate = (graceMs: number): void => {
    if (exited) return;
    signalGroup(pid, "SIGTERM");
    if (!killTimer) {
      killTimer = setTimeout(() => {
        if (!exited) signalGroup(pid, "SIGKILL");
      }, graceMs);
    }
  };
  const timeout = setTimeout(() => {
    timedOut = true;
    terminate(KILL_GRACE_MS);
  }, spec.timeoutMs);

  if (spec.stdin !== null) {
    const sink = proc.stdin as import("bun").FileSink;
    try {
      sink.write(spec.stdin);
      void Promise.resolve(sink.end()).catch(() => {});
    } catch {
      /* the agent closed stdin early: it does not want the prompt */
    }
  }

  /** The tail of one output stream, decoded as it arrives. */
  const tail = (max: number) => {
    const decoder = new TextDecoder();
    let text = "";
    return {
      push(chunk: Uint8Array) {
        text += decoder.decode(chunk, { stream: true });
        if (text.length > max * 2) text = text.slice(-max);
      },
      end(): string {
        text += decoder.decode();
        return text.length > max ? text.slice(-max) : text;
      },
    };
  };
  const out = tail(MAX_CAPTURE);
  const err = tail(MAX_STDERR_CAPTURE);
  const pump = async (stream: ReadableStream<Uint8Array>, into: ReturnType<typeof tail>, onChunk?: (chunk: Uint8Array) => void): Promise<void> => {
    try {
      for await (const chunk of stream) {
        write(chunk);
        into.push(chunk);
        if (onChunk) {
          try {
            onChunk(chunk);
          } catch {
            /* a live reader's failure must not lose the agent's output */
          }
        }
      }
    } catch {
      /* stream torn down by a kill */
    }
  };

  // The stdout file is read as it grows: the log and the live reader see each event when the CLI prints it.
  let copied = 0;
  const livePoll =
    stdoutFd === null
      ? undefined
      : setInterval(() => {
          try {
            copied = copyStdoutFile(stdoutFd!, copied, write, out, spec.onStdout);
          } catch {
            /* read again at the next tick, or at the end */
          }
        }, LIVE_POLL_MS);

  const done = (async (): Promise<ProcessOutcome> => {
    const pumps = Promise.all([stdoutFd === null ? pump(proc.stdout as ReadableStream<Uint8Array>, out, spec.onStdout) : null, pump(proc.stderr as ReadableStream<Uint8Array>, err)]);
    await proc.exited;
    exited = true;
    clearTimeout(timeout);
    if (killTimer) clearTimeout(killTimer);
    // The leader is gone; whatever it left running in its group (holding
    // the pipes open) goes too. Group only: the leader's pid may be reused.
    signalGroup(pid, "SIGKILL", false);
    await pumps;
    if (livePoll) clearInterval(livePoll);
    if (stdoutFd !== null) {
      copyStdoutFile(stdoutFd, copied, write, out, spec.onStdout);
      closeSync(stdoutFd);
    }
    closeSync(logFd);
    return {
      exitCode: proc.signalCode ? null : proc.exitCode,
      signal: proc.signalCode ? String(proc.signalCode) : null,
      stdout: out.end(),
      stderr: err.end(),
      timedOut,
      killed,
      spawnError: null,
      startedAt,
      endedAt: Date.now() / 1000,
    };
  })();

  return {
    pid,
    done,
    kill(graceMs = KILL_GRACE_MS) {
      killed = true;
      terminate(graceMs);
    },
  };
}
