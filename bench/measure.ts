/**
 * How `npm run bench` measures one process: wall time around the child, its
 * own peak RSS and CPU time from the kernel, and its standard output counted
 * (and kept up to a cap, so a verb that prints 300 MB is read through a pipe
 * without holding it). Shared by scripts/bench.ts and bench/verbs.ts.
 */
import { closeSync, constants, existsSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Sample {
  wallS: number;
  cpuS: number;
  rssMB: number;
  code: number;
  /** Standard output, at most KEEP_STDOUT bytes of it. */
  stdout: string;
  /** Every byte the child wrote to standard output. */
  stdoutBytes: number;
  /** The last TAIL_STDOUT bytes of standard output (a verdict printed after a long display). */
  stdoutTail: string;
}

export interface RunOptions {
  stdin?: string;
  cwd?: string;
  env?: Record<string, string>;
  /** No GNU time in between (start-up figures must not include its exec). */
  direct?: boolean;
}

export interface Contender {
  name: string;
  cmd: string[];
  env?: Record<string, string>;
  /** Runs before every repetition, outside the timing (e.g. removing a cache for a cold run). */
  before?: () => void;
  check: (s: Sample) => void;
}

/** Enough for any verdict or error document; the rest of a large output is counted, not kept. */
const KEEP_STDOUT = 1 << 20;
const TAIL_STDOUT = 4096;

/**
 * GNU time reports one process's own peak RSS (wait4's ru_maxrss); Bun's
 * resourceUsage() reports the maximum over all children so far.
 */
const GNU_TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
let scratchDir = tmpdir();
let timeFileSeq = 0;

/** Where GNU time's report files go (the bench's own scratch directory). */
export function useScratchDir(dir: string): void {
  scratchDir = dir;
}

/** Read a stream to its end, counting every byte and keeping the first `keep`. */
async function drain(stream: ReadableStream<Uint8Array>, keep: number): Promise<{ text: string; bytes: number; tail: string }> {
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  let bytes = 0;
  let tail: Uint8Array = new Uint8Array(0);
  for await (const chunk of stream) {
    bytes += chunk.length;
    if (keptBytes < keep) {
      const part = chunk.subarray(0, keep - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    const both = chunk.length >= TAIL_STDOUT ? chunk : Buffer.concat([tail, chunk]);
    tail = both.slice(Math.max(0, both.length - TAIL_STDOUT));
  }
  return { text: Buffer.concat(kept).toString("utf8"), bytes, tail: Buffer.from(tail).toString("utf8") };
}

/**
 * A pipe for the child's standard output: what a user's `bernstein … | jq`
 * gives it (Bun.spawn's "pipe" is a socket pair, which a writer sees and
 * fills differently). Made as a FIFO whose name is removed at once; the
 * read end is non-blocking, which Bun's file stream waits on.
 */
function stdoutPipe(seq: number): { read: number; write: number } {
  const path = join(scratchDir, `stdout.${process.pid}.${seq}.fifo`);
  rmSync(path, { force: true });
  if (Bun.spawnSync(["mkfifo", path]).exitCode !== 0) throw new Error(`mkfifo ${path} failed`);
  try {
    const read = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    return { read, write: openSync(path, constants.O_WRONLY) };
  } finally {
    rmSync(path, { force: true });
  }
}

/** Run a command; wall time around the child, its peak RSS and CPU time from the kernel. */
export async function run(cmd: string[], opts: RunOptions = {}): Promise<Sample> {
  const seq = timeFileSeq++;
  const timeFile = join(scratchDir, `time.${process.pid}.${seq}.txt`);
  const gnuTime = opts.direct ? null : GNU_TIME;
  const full = gnuTime ? [gnuTime, "-f", "%M %U %S", "-o", timeFile, ...cmd] : cmd;
  const stdout = stdoutPipe(seq);
  const t0 = performance.now();
  let p: Bun.Subprocess<"ignore" | Bun.BunFile, number, "pipe">;
  try {
    p = Bun.spawn(full, {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: "1", ...opts.env },
      stdin: opts.stdin ? Bun.file(opts.stdin) : "ignore",
      stdout: stdout.write,
      stderr: "pipe",
    });
  } catch (err) {
    closeSync(stdout.read);
    throw err;
  } finally {
    // the child holds the write end now: the stream ends when it (and GNU time) exit
    closeSync(stdout.write);
  }
  let drained: [{ text: string; bytes: number; tail: string }, unknown, number];
  try {
    drained = await Promise.all([drain(Bun.file(stdout.read).stream(), KEEP_STDOUT), drain(p.stderr, KEEP_STDOUT), p.exited]);
  } finally {
    // Bun's stream of an fd leaves it open
    closeSync(stdout.read);
  }
  const [out, , code] = drained;
  const wallS = (performance.now() - t0) / 1000;
  if (gnuTime) {
    const [kb, user, sys] = readFileSync(timeFile, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
    rmSync(timeFile, { force: true });
    return { wallS, cpuS: user! + sys!, rssMB: (kb! * 1024) / 1e6, code, stdout: out.text, stdoutBytes: out.bytes, stdoutTail: out.tail };
  }
  const ru = p.resourceUsage();
  const cpuS = ru ? Number(ru.cpuTime.total) / 1e6 : NaN;
  return { wallS, cpuS, rssMB: ru ? ru.maxRSS / 1e6 : NaN, code, stdout: out.text, stdoutBytes: out.bytes, stdoutTail: out.tail };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Each repetition runs every contender once, in an order rotated per repetition (A B C, B C A, ...). */
export async function interleaved(contenders: Contender[], reps: number): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(contenders.map((c) => [c.name, []]));
  for (let rep = 0; rep < reps; rep++) {
    // rotate the order each repetition so no contender always runs first
    const order = contenders.map((_, i) => contenders[(i + rep) % contenders.length]!);
    for (const c of order) {
      c.before?.();
      // the dirty pages an earlier run left (a receipt, an export) are written out now, not inside the next one's timing
      Bun.spawnSync(["sync"]);
      const s = await run(c.cmd, { env: c.env });
      c.check(s);
      samples.get(c.name)!.push(s);
      console.error(`  ${c.name.padEnd(28)} ${s.wallS.toFixed(3)} s  ${s.rssMB.toFixed(1)} MB`);
    }
  }
  return samples;
}

/** A Markdown table: the first column left-aligned, the others right-aligned. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map(String));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => "| " + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ") + " |";
  return [line(headers), "|" + widths.map((w, i) => (i === 0 ? "-" : "") + "-".repeat(w + 1) + (i === 0 ? "" : ":")).join("|") + "|", ...cells.map(line)].join("\n");
}
