/**
 * The bench's tables, made from what `npm run bench` stores in
 * bench/results.json: the bench prints them, and scripts/gen-performance.ts
 * writes the same tables into docs/performance.md and the README, so no
 * figure there is copied by hand.
 */
import { table } from "./measure.ts";
import { over, shapeCaption, shapeLabel, shapeTable, verbCaption, verbTable, type VerbResults, type VerbRow } from "./verbs.ts";

/** One contender's medians. */
export interface Figure {
  name: string;
  wallS: number;
  mbPerS: number;
  rowsPerS: number;
  rssMB: number;
  cpuS: number;
}

/** The full suite's figures (verify, record, receipt, start-up, scaling, seals). */
export interface SuiteResults {
  params: { mb: number; reps: number; threads: number; quick: boolean };
  journal: { bytes: number; rows: number };
  verify: Figure[];
  small_journal_rss_mb: number;
  /** The small journal's size (older results: unknown). */
  small_journal_bytes?: number;
  /** `rss_mb`: the median peak (older results: none). */
  record: { events: number; wall_s: number; events_per_s: number; rss_mb?: number };
  receipt: { steps: number; tar_bytes: number; ours: Figure; python: Figure };
  version_ms: number;
  spawn_floor_ms: number;
  /** `openssl`: the hash alone of the same file on one core (older results, or a machine without openssl: none). */
  scaling: { bytes: number; rows: number; one: Figure; many: Figure; speedup: number; openssl?: Figure | null } | null;
  seals?: { ratio: number; checkpointS: number; verifyS: number; proveS: number; rssMB: number } | null;
  ratios: { verify_vs_sha256sum: number; verify_vs_python: number | null; threads_speedup: number; receipt_vs_python: number };
}

/** When and where a part of the results was measured. */
export interface Stamp {
  generated_at: string;
  machine: { cpus: number; model: string | null; memory_gb: number; load_average_at_end: number[] };
}

/** bench/results.json: the last full run's figures, and the last verb table (which `--verbs` alone replaces). */
export type StoredResults = Partial<Stamp & SuiteResults> & { verbs?: Stamp & VerbResults };

/** The contender that hashes the file once with SHA-256 on one core: what verify's CPU time is held to. */
export const OPENSSL = "openssl dgst -sha256";
/** Issue 30's bars: verify's CPU time against the hash alone, and `journal record`'s rate. */
export const VERIFY_CPU_VS_HASH = 1.6;
export const RECORD_EVENTS_PER_S = 300_000;

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
const count = (n: number): string => Math.round(n).toLocaleString("en-US");
const yes = (b: boolean | null): string => (b === null ? "-" : b ? "yes" : "**no**");

/** "2 CPUs (AMD EPYC), load average at the end 1.48 / 0.99 / 0.95" */
export function stampText(s: Stamp): string {
  const load = s.machine.load_average_at_end.map((x) => x.toFixed(2)).join(" / ");
  return `${s.generated_at.slice(0, 16).replace("T", " ")} UTC, ${s.machine.cpus} CPUs (${s.machine.model ?? "?"}), load average at the end ${load}`;
}

const figureRow = (f: Figure): (string | number)[] => [f.name, f.wallS.toFixed(3), f.mbPerS.toFixed(0), count(f.rowsPerS), f.cpuS.toFixed(2), f.rssMB.toFixed(1)];
const FIGURE_HEADERS = ["contender", "wall s", "MB/s", "rows/s", "CPU s", "peak RSS MB"];

/** The suite's tables: verify on the bench journal, thread scaling, and every figure against its target. */
export function suiteTables(s: SuiteResults): string {
  const n = s.params.threads;
  const one = s.verify.find((f) => f.name === "bernstein verify --threads 1");
  const many = s.verify.find((f) => f.name === `bernstein verify --threads ${n}`);
  const rss = Math.max(one?.rssMB ?? 0, many?.rssMB ?? 0);
  const out = [`Journal verify: ${mb(s.journal.bytes)}, ${count(s.journal.rows)} rows; median of ${s.params.reps}, interleaved`, "", table(FIGURE_HEADERS, s.verify.map(figureRow))];
  if (s.scaling) {
    const figs = [s.scaling.one, s.scaling.many, ...(s.scaling.openssl ? [s.scaling.openssl] : [])];
    out.push("", `Thread scaling, and the hash alone: ${mb(s.scaling.bytes)}, ${count(s.scaling.rows)} rows`, "", table(FIGURE_HEADERS, figs.map(figureRow)));
  }
  const rows: string[][] = [
    [`verify --threads ${n} / sha256sum (MB/s)`, `${s.ratios.verify_vs_sha256sum.toFixed(2)}×`, "≥ 1.5×", yes(s.ratios.verify_vs_sha256sum >= 1.5)],
    [`verify --threads ${n} / Python reference`, s.ratios.verify_vs_python === null ? "-" : `${s.ratios.verify_vs_python.toFixed(1)}×`, "≥ 25×", yes(s.ratios.verify_vs_python === null ? null : s.ratios.verify_vs_python >= 25)],
    [`--threads ${n} / --threads 1`, `${s.ratios.threads_speedup.toFixed(2)}×`, "≥ 1.7×", yes(s.ratios.threads_speedup >= 1.7)],
  ];
  if (s.scaling) rows.push([`  the same on ${mb(s.scaling.bytes)}`, `${s.scaling.speedup.toFixed(2)}×`, "≥ 1.7×", yes(s.scaling.speedup >= 1.7)]);
  if (s.scaling?.openssl) {
    const cpu = s.scaling.one.cpuS / s.scaling.openssl.cpuS;
    rows.push([`verify --threads 1 CPU / \`${OPENSSL}\` CPU, ${mb(s.scaling.bytes)}`, `${cpu.toFixed(2)}×`, `≤ ${VERIFY_CPU_VS_HASH}×`, yes(cpu <= VERIFY_CPU_VS_HASH)]);
  }
  rows.push(
    ["peak RSS of verify", `${rss.toFixed(1)} MB`, "≤ 64 MB", yes(rss <= 64)],
    [`peak RSS of verify, ${s.small_journal_bytes === undefined ? "a small journal" : mb(s.small_journal_bytes)}`, `${s.small_journal_rss_mb.toFixed(1)} MB`, "≤ 64 MB", yes(s.small_journal_rss_mb <= 64)],
    [`journal record from stdin (${count(s.record.events)} events)`, `${count(s.record.events_per_s)} events/s`, `≥ ${count(RECORD_EVENTS_PER_S)}`, yes(s.record.events_per_s >= RECORD_EVENTS_PER_S)],
    ...(s.record.rss_mb === undefined ? [] : [["peak RSS of journal record", `${s.record.rss_mb.toFixed(1)} MB`, "≤ 64 MB", yes(s.record.rss_mb <= 64)]]),
    [`receipt verify (${count(s.receipt.steps)} steps) / Python \`tarfile\``, `${s.ratios.receipt_vs_python.toFixed(1)}× (${s.receipt.ours.wallS.toFixed(3)} s)`, "≥ 10×", yes(s.ratios.receipt_vs_python >= 10)],
  );
  if (s.seals) {
    rows.push(
      [`journal checkpoint / verify --threads ${n}`, `${s.seals.ratio.toFixed(2)}×`, "≤ 1.5×", yes(s.seals.ratio <= 1.5)],
      ["journal prove-consistency (half → whole)", `${s.seals.proveS.toFixed(2)} s`, "≤ 1 s", yes(s.seals.proveS <= 1)],
      ["peak RSS of checkpoint", `${s.seals.rssMB.toFixed(1)} MB`, "≤ 64 MB", yes(s.seals.rssMB <= 64)],
    );
  }
  rows.push([`\`bernstein --version\` (spawning \`true\`: ${s.spawn_floor_ms.toFixed(1)} ms)`, `${s.version_ms.toFixed(1)} ms`, "≤ 15 ms", yes(s.version_ms <= 15)]);
  out.push("", table(["figure", "measured", "target", "met"], rows));
  return out.join("\n");
}

/** The verb table (and the verb × shape table when several shapes were measured), with their captions. */
export function verbTables(v: VerbResults): string {
  const out = [verbCaption(v), "", verbTable(v), "", `every target met: ${v.all_met ? "yes" : "no"}`];
  const byShape = shapeTable(v);
  if (byShape !== null) out.push("", shapeCaption(v), "", byShape, "", `every target met on every shape: ${v.all_shapes_met ? "yes" : "no"}`);
  return out.join("\n");
}

/** docs/performance.md's generated part: both tables of the stored results, each with when and where it was measured. */
export function performanceSection(r: StoredResults): string {
  const out: string[] = [];
  if (r.verify && r.generated_at && r.machine) {
    out.push("### Verify, record, receipts, start-up", "", `Measured ${stampText(r as Stamp)}.`, "", suiteTables(r as SuiteResults));
  }
  if (r.verbs) {
    out.push(...(out.length > 0 ? [""] : []), "### Every verb on every shape", "", `Measured ${stampText(r.verbs)}.`, "", verbTables(r.verbs));
  }
  return out.join("\n");
}

/** The worst figure of one verb across the shapes it ran on. */
interface Worst {
  verb: string;
  met: boolean | null;
  target: number | null;
  ratio: number;
  ratioShape: string;
  rss: number;
  rssShape: string;
}

/**
 * The README's summary: verify's throughput, and each verb's worst ratio
 * and worst peak over every shape measured, against its target.
 */
export function readmeSummary(r: StoredResults): string {
  const out: string[] = [];
  if (r.verify && r.journal && r.params) {
    const n = r.params.threads;
    const one = r.verify.find((f) => f.name === "bernstein verify --threads 1");
    const many = r.verify.find((f) => f.name === `bernstein verify --threads ${n}`);
    const sha = r.verify.find((f) => f.name === "sha256sum");
    const speeds = [one && `${one.mbPerS.toFixed(0)} MB/s on one thread`, many && `${many.mbPerS.toFixed(0)} MB/s on ${n}`].filter(Boolean).join(", ");
    const against = sha ? ` (\`sha256sum\`: ${sha.mbPerS.toFixed(0)} MB/s)` : "";
    const scale = r.scaling ? `; ${r.scaling.many.mbPerS.toFixed(0)} MB/s on ${n} threads over ${mb(r.scaling.bytes)}` : "";
    const hash = r.scaling?.openssl ? `; on that journal one thread used ${(r.scaling.one.cpuS / r.scaling.openssl.cpuS).toFixed(2)}× the CPU time of \`${OPENSSL}\` hashing it once` : "";
    const when = r.generated_at && r.machine ? ` (measured ${stampText(r as Stamp)})` : "";
    out.push(`\`journal verify\` of a ${mb(r.journal.bytes)} journal: ${speeds}${against}${scale}${hash}; peak RSS ${Math.max(one?.rssMB ?? 0, many?.rssMB ?? 0).toFixed(1)} MB.`);
    if (r.record) out.push(`\`journal record\`: ${count(r.record.events_per_s)} events/s${r.record.rss_mb === undefined ? "" : `, peak RSS ${r.record.rss_mb.toFixed(1)} MB`}${when}.`);
  }
  if (r.verbs) {
    const worst = new Map<string, Worst>();
    const note = (shape: string, v: VerbRow): void => {
      if (v.target_ratio === null) return;
      const w = worst.get(v.key);
      if (!w) worst.set(v.key, { verb: shapeLabel(v), met: v.ratio_met, target: v.target_ratio, ratio: v.ratio, ratioShape: shape, rss: v.rss_mb, rssShape: shape });
      else {
        if (v.ratio > w.ratio) Object.assign(w, { ratio: v.ratio, ratioShape: shape, met: v.ratio_met });
        if (v.rss_mb > w.rss) Object.assign(w, { rss: v.rss_mb, rssShape: shape });
      }
    };
    const shapes = r.verbs.shapes.length > 0 ? r.verbs.shapes : [];
    for (const s of shapes) for (const v of s.verbs) note(s.shape, v);
    const runKeys = new Set(shapes.flatMap((s) => s.verbs.map((v) => v.key)));
    for (const v of r.verbs.rows) if (!runKeys.has(v.key)) note(r.verbs.receipt ? "agent" : (r.verbs.run_journal?.shape ?? "bench"), v);
    const names = [...shapes.map((s) => s.shape), ...(r.verbs.receipt ? [`agent (${count(r.verbs.receipt.steps)} steps)`] : [])];
    out.push(
      ...(out.length > 0 ? [""] : []),
      `Every other verb as a ratio to \`journal verify --threads 1\` of the same journal (receipt verbs: to \`replay verify\`), its worst over the shapes ${names.join(", ")} (${(r.verbs.params.mb).toFixed(0)} MB each; measured ${stampText(r.verbs)}):`,
      "",
      table(
        ["verb", "worst ×", "target", "worst peak MB (target ≤ 64)"],
        [...worst.values()].map((w) => [w.verb, over(`${w.ratio.toFixed(2)}×`, w.met) + ` (${w.ratioShape})`, `≤ ${w.target}×`, over(w.rss.toFixed(1), w.rss <= 64) + ` (${w.rssShape})`]),
      ),
    );
  }
  return out.join("\n");
}
