/**
 * How `npm run bench` measures one process: wall time around the child, its
 * own peak RSS and CPU time from the kernel, and its standard output counted
 * (and kept up to a cap, so a verb that prints 300 MB is read through a pipe
 * without holding it). Shared by scripts/bench.ts and bench/verbs.ts.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
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
async function drain(stream: ReadableStream<Uint8Array>, keep: number): Promise<{ text: string; bytes: number }> {
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    if (keptBytes < keep) {
      const part = chunk.subarray(0, keep - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
  }
  return { text: Buffer.concat(kept).toString("utf8"), bytes };
}

/** Run a command; wall time around the child, its peak RSS and CPU time from the kernel. */
export async function run(cmd: string[], opts: RunOptions = {}): Promise<Sample> {
  const timeFile = join(scratchDir, `time.${process.pid}.${timeFileSeq++}.txt`);
  const gnuTime = opts.direct ? null : GNU_TIME;
  const full = gnuTime ? [gnuTime, "-f", "%M %U %S", "-o", timeFile, ...cmd] : cmd;
  const t0 = performance.now();
  const p = Bun.spawn(full, {
    cwd: opts.cwd,
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
    stdin: opts.stdin ? Bun.file(opts.stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, , code] = await Promise.all([drain(p.stdout, KEEP_STDOUT), drain(p.stderr, KEEP_STDOUT), p.exited]);
  const wallS = (performance.now() - t0) / 1000;
  if (gnuTime) {
    const [kb, user, sys] = readFileSync(timeFile, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
    rmSync(timeFile, { force: true });
    return { wallS, cpuS: user! + sys!, rssMB: (kb! * 1024) / 1e6, code, stdout: out.text, stdoutBytes: out.bytes };
  }
  const ru = p.resourceUsage();
  const cpuS = ru ? Number(ru.cpuTime.total) / 1e6 : NaN;
  return { wallS, cpuS, rssMB: ru ? ru.maxRSS / 1e6 : NaN, code, stdout: out.text, stdoutBytes: out.bytes };
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
