/**
 * The codec's row index, in process: MB/s of rows indexed by the
 * JavaScript scanner, the WebAssembly one and `indexObjectAt` (which picks
 * one by row length), on a journal of each shape (bench/journal-gen.ts),
 * the three interleaved in every pass, best pass by CPU time. Every row is
 * first indexed by both scanners and the tapes compared (a differing row
 * stops the bench with exit 1).
 *
 *   bun bench/row-index.ts [--mb 30] [--passes 15] [--shapes bench,mixed,large-rows,python] [--work-dir DIR]
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { indexObjectAt, indexObjectAtJs, indexObjectAtWasm, KeyTable, RowIndex } from "../src/codec/row-index.ts";
import { generateJournal, isShape, type JournalShape } from "./journal-gen.ts";

const ENVELOPE = new KeyTable(["timestamp", "event_type", "payload", "index", "prev_hash", "event_hash", "payload_hash"]);
const SCANNERS = [
  ["JavaScript", indexObjectAtJs],
  ["WebAssembly", indexObjectAtWasm],
  ["auto", indexObjectAt],
] as const;

export interface ShapeResult {
  shape: JournalShape;
  rows: number;
  bytes: number;
  /** MB/s by scanner name. */
  mbs: Record<string, number>;
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Line bounds [s0, e0, s1, e1, ...] of the rows of b. */
function lineBounds(b: Uint8Array): number[] {
  const out: number[] = [];
  let s = 0;
  for (let i = b.indexOf(0x0a); i >= 0; s = i + 1, i = b.indexOf(0x0a, s)) out.push(s, i);
  return out;
}

/** Both scanners on every row: the first row where they differ, or -1. */
function firstDifference(b: Uint8Array, lines: number[]): number {
  const js = new RowIndex();
  const wasm = new RowIndex();
  for (let r = 0; r < lines.length; r += 2) {
    const x = indexObjectAtJs(b, lines[r]!, lines[r + 1]!, js, ENVELOPE);
    const y = indexObjectAtWasm(b, lines[r]!, lines[r + 1]!, wasm, ENVELOPE);
    if (x !== y || js.count !== wasm.count || js.members !== wasm.members) return r / 2;
    for (let i = 0; x >= 0 && i < 4 * js.count; i++) if (js.tape[i] !== wasm.tape[i]) return r / 2;
  }
  return -1;
}

export function measureShape(shape: JournalShape, workDir: string, mb: number, passes: number): ShapeResult {
  const sdd = join(workDir, `row-index-${shape}-${mb}`);
  const path = join(sdd, "runs", "r1", "journal.jsonl");
  if (!existsSync(path)) {
    mkdirSync(sdd, { recursive: true });
    generateJournal(sdd, "r1", mb * 1e6, 8, shape);
  }
  const b = new Uint8Array(readFileSync(path));
  const lines = lineBounds(b);
  const bad = firstDifference(b, lines);
  if (bad >= 0) throw new Error(`${shape}: the scanners differ on row ${bad + 1}`);
  const ix = new RowIndex();
  const best: Record<string, number> = {};
  for (let pass = 0; pass < passes; pass++) {
    for (const [name, index] of SCANNERS) {
      const t0 = cpuSeconds();
      for (let r = 0; r < lines.length; r += 2) index(b, lines[r]!, lines[r + 1]!, ix, ENVELOPE);
      const t = cpuSeconds() - t0;
      if (!(t >= best[name]!)) best[name] = t;
    }
  }
  const mbs: Record<string, number> = {};
  for (const [name] of SCANNERS) mbs[name] = Math.round(b.length / 1e6 / Math.max(best[name]!, 1e-6));
  return { shape, rows: lines.length / 2, bytes: b.length, mbs };
}

export function table(results: ShapeResult[]): string {
  const head = `| shape | rows | mean row | ${SCANNERS.map(([n]) => n).join(" | ")} | WebAssembly ÷ JavaScript |`;
  const rule = `|---|---:|---:|${SCANNERS.map(() => "---:").join("|")}|---:|`;
  const rows = results.map((r) => {
    const mean = r.bytes / Math.max(r.rows, 1);
    const size = mean >= 1e6 ? `${(mean / 1e6).toFixed(1)} MB` : mean >= 1e3 ? `${(mean / 1e3).toFixed(1)} KB` : `${Math.round(mean)} B`;
    return `| ${r.shape} | ${r.rows} | ${size} | ${SCANNERS.map(([n]) => r.mbs[n]).join(" | ")} | ${(r.mbs.WebAssembly! / r.mbs.JavaScript!).toFixed(2)}× |`;
  });
  return [head, rule, ...rows].join("\n");
}

function main(argv: string[]): number {
  const opts = { mb: 30, passes: 15, shapes: ["bench", "mixed", "large-rows", "python"] as JournalShape[], workDir: join(import.meta.dir, "out") };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[++i];
    if (value === undefined) return usage(`${flag} needs a value`);
    if (flag === "--mb" && Number(value) > 0) opts.mb = Number(value);
    else if (flag === "--passes" && Number.isInteger(Number(value)) && Number(value) > 0) opts.passes = Number(value);
    else if (flag === "--work-dir") opts.workDir = value;
    else if (flag === "--shapes" && value.split(",").every(isShape)) opts.shapes = value.split(",") as JournalShape[];
    else return usage(`bad option ${flag} ${value}`);
  }
  const results: ShapeResult[] = [];
  for (const shape of opts.shapes) {
    try {
      results.push(measureShape(shape, opts.workDir, opts.mb, opts.passes));
    } catch (err) {
      console.error(`row-index bench: ${(err as Error).message}`);
      return 1;
    }
  }
  console.log(table(results));
  return 0;
}

function usage(msg: string): number {
  console.error(`row-index bench: ${msg}\nusage: bun bench/row-index.ts [--mb 30] [--passes 15] [--shapes bench,mixed,large-rows,python] [--work-dir DIR]`);
  return 2;
}

if (import.meta.main) process.exit(main(process.argv.slice(2)));
