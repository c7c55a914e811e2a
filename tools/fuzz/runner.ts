import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "./rng.ts";
import { crashSignature } from "./signature.ts";
import type { FuzzTarget } from "./types.ts";

/**
 * Drives one target: the fixed extremes first, then mutated cases until
 * the case count or the time budget is reached. Every case gets its own
 * generator forked from the seed, so case K of seed S is always the same
 * input. Failures are deduplicated by crash signature; the first input of
 * each signature is saved under `crashDir`.
 */
export interface FuzzOptions {
  seed: number;
  /** Stop after this many seconds (cases started before the deadline finish). */
  seconds?: number;
  /** Stop after this many cases. */
  cases?: number;
  /** Fraction of cases also run through the compiled binary (needs target.runBinary). */
  binarySample?: number;
  /** Cases between batched (python) checks. */
  flushEvery?: number;
  /** Where to save the first input of every distinct crash (null: do not save). */
  crashDir?: string | null;
  /** Skip the extreme inputs (100 MB line, deep nesting). */
  skipExtremes?: boolean;
  /** Progress callback, at most once per second. */
  onProgress?: (p: { target: string; cases: number; crashes: number; elapsedMs: number }) => void;
}

export interface CrashRecord {
  signature: string;
  count: number;
  message: string;
  /** Case index of the first occurrence (-1: an extreme or a batched check). */
  firstCase: number;
  savedAs: string | null;
}

export interface ExtremeOutcome {
  name: string;
  ok: boolean;
  detail: string;
  ms: number;
}

export interface FuzzReport {
  target: string;
  seed: number;
  cases: number;
  binaryCases: number;
  extremes: ExtremeOutcome[];
  crashes: CrashRecord[];
  distinctCrashes: number;
  /** Target counters (python-checked cases, ...). */
  stats: Record<string, number>;
  elapsedMs: number;
  casesPerSecond: number;
}

function targetSalt(name: string): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The generator of case `index` of `seed` for `target` (reproduce a single case). */
export function caseRng(target: string, seed: number, index: number): Rng {
  const master = new Rng((seed ^ targetSalt(target)) >>> 0);
  let r = master.fork();
  for (let i = 0; i < index; i++) r = master.fork();
  return r;
}

export async function runFuzz(target: FuzzTarget, opts: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const deadline = opts.seconds !== undefined ? started + opts.seconds * 1000 : Infinity;
  const maxCases = opts.cases ?? (opts.seconds !== undefined ? Infinity : 1000);
  const flushEvery = opts.flushEvery ?? 2000;
  const crashes = new Map<string, CrashRecord>();
  const extremes: ExtremeOutcome[] = [];
  let closed = false;

  const record = (err: unknown, input: Uint8Array | null, caseIndex: number): void => {
    const sig = crashSignature(err);
    const existing = crashes.get(sig);
    if (existing) {
      existing.count++;
      return;
    }
    const message = err instanceof Error ? err.message.split("\n")[0]!.slice(0, 400) : String(err);
    let savedAs: string | null = null;
    if (opts.crashDir && input) {
      mkdirSync(opts.crashDir, { recursive: true });
      const id = `${target.name}-${opts.seed}-${caseIndex >= 0 ? caseIndex : `batch${crashes.size}`}`;
      savedAs = join(opts.crashDir, `${id}.bin`);
      writeFileSync(savedAs, input);
      const stack = err instanceof Error ? err.stack ?? "" : "";
      writeFileSync(join(opts.crashDir, `${id}.txt`), `signature: ${sig}\nseed: ${opts.seed}\ncase: ${caseIndex}\n\n${message}\n\n${stack}\n`);
    }
    crashes.set(sig, { signature: sig, count: 1, message, firstCase: caseIndex, savedAs });
  };

  const flush = async (): Promise<void> => {
    if (!target.flush) return;
    try {
      for (const v of await target.flush()) record(v.error, v.input, -1);
    } catch (err) {
      record(err, null, -1);
    }
  };

  try {
    if (!opts.skipExtremes && target.extremes) {
      for (const x of target.extremes()) {
        const t0 = performance.now();
        try {
          await x.run();
          extremes.push({ name: x.name, ok: true, detail: "refused or handled cleanly", ms: Math.round(performance.now() - t0) });
        } catch (err) {
          extremes.push({ name: x.name, ok: false, detail: (err as Error).message ?? String(err), ms: Math.round(performance.now() - t0) });
          record(err, null, -1);
        }
      }
    }

    const seeds = target.seeds();
    const master = new Rng((opts.seed ^ targetSalt(target.name)) >>> 0);
    let cases = 0;
    let binaryCases = 0;
    let lastProgress = performance.now();
    while (cases < maxCases && performance.now() < deadline) {
      const rng = master.fork();
      const index = cases++;
      let input: Uint8Array;
      try {
        input = target.mutate(rng, seeds);
      } catch (err) {
        record(err, null, index);
        continue;
      }
      try {
        await target.run(input, rng);
      } catch (err) {
        record(err, input, index);
      }
      if (target.runBinary && opts.binarySample && rng.chance(opts.binarySample)) {
        binaryCases++;
        try {
          await target.runBinary(input, rng);
        } catch (err) {
          record(err, input, index);
        }
      }
      if (cases % flushEvery === 0) await flush();
      const now = performance.now();
      if (opts.onProgress && now - lastProgress > 1000) {
        lastProgress = now;
        opts.onProgress({ target: target.name, cases, crashes: crashes.size, elapsedMs: now - started });
      }
    }
    await flush();
    // Closing runs the end-of-run invariants (server health, diagnostics).
    closed = true;
    try {
      await target.close?.();
    } catch (err) {
      record(err, null, -1);
    }
    const elapsedMs = Math.round(performance.now() - started);
    return {
      target: target.name,
      seed: opts.seed,
      cases,
      binaryCases,
      extremes,
      crashes: [...crashes.values()],
      distinctCrashes: crashes.size,
      stats: target.stats?.() ?? {},
      elapsedMs,
      casesPerSecond: Math.round((cases / Math.max(1, elapsedMs)) * 1000),
    };
  } finally {
    if (!closed) await target.close?.();
  }
}
