/**
 * Run-receipt verification speed and memory (issue 21): `bernstein verify
 * receipt` against a Python verifier, interleaved, on
 *   - upstream's `valid-10000.json` (10,000 rows, 3.7 MB as Python writes it);
 *   - a large receipt written by `bernstein verify run` (--rows, default 100,000)
 *     to show that memory stays flat while the file grows.
 * Upstream's own Python (`verify_run_receipt` of bernstein v3.19.2) is not
 * available here; the contender is test/helpers/run_receipt_oracle.py, a
 * stdlib verifier of the same spec (json.loads + hashlib, like upstream's).
 * Upstream's recorded figure for valid-10000 (cpu_timing.json) is printed beside.
 *
 *   bun scripts/bench-run-receipt.ts [--bin PATH] [--reps 7] [--rows 100000]
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const ROOT = join(import.meta.dir, "..");
const { values } = parseArgs({ options: { bin: { type: "string" }, reps: { type: "string", default: "7" }, rows: { type: "string", default: "100000" } } });
const bin = values.bin ?? join(ROOT, "dist", "bernstein");
const reps = Number(values.reps);
const rows = Number(values.rows);
const out = join(ROOT, "bench", "out", "run-receipt");
mkdirSync(out, { recursive: true });

function timed(cmd: string[], cwd = out): { ms: number; rssMb: number; code: number } {
  const r = Bun.spawnSync(["/usr/bin/time", "-f", "%e %M", ...cmd], { cwd, stdout: "ignore", stderr: "pipe" });
  const last = r.stderr.toString().trim().split("\n").at(-1)!.split(" ");
  return { ms: Number(last[0]) * 1000, rssMb: Number(last[1]) / 1024, code: r.exitCode };
}

// valid-10000: the receipt bytes Python wrote (CJ(input) + "\n").
const small = join(out, "valid-10000.receipt.json");
Bun.spawnSync(["python3", "-c", "import json,sys,gzip; d=json.load(gzip.open(sys.argv[1])); open(sys.argv[2],'wb').write((json.dumps(d['input'],sort_keys=True,separators=(',',':'))+'\\n').encode())", join(ROOT, "test", "fixtures", "upstream", "valid-10000.json.gz"), small]);

// A large receipt of our own: a journal of `rows` events, signed by verify run.
const big = join(out, `ours-${rows}.json`);
try {
  statSync(big);
} catch {
  Bun.spawnSync(["rm", "-rf", join(out, ".sdd")]);
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) lines.push(JSON.stringify({ event: i % 5 === 0 ? "agent_spawned" : "task_completed", task_id: `T-${i}`, endpoint_adapter_name: "claude", rate: 1.5, note: `row ${i} тест` }));
  const rec = Bun.spawnSync([bin, "journal", "record", "big"], { cwd: out, stdin: new TextEncoder().encode(lines.join("\n") + "\n"), stdout: "ignore" });
  if (rec.exitCode !== 0) throw new Error("journal record failed");
  Bun.spawnSync([bin, "keys", "generate", "--out-dir", ".", "--name", "bench"], { cwd: out, stdout: "ignore" });
  const v = Bun.spawnSync([bin, "verify", "run", "big", "--signing-key-path", "bench.key", "-o", big], { cwd: out, stdout: "ignore" });
  if (v.exitCode !== 0) throw new Error("verify run failed");
}

const oracle = join(ROOT, "test", "helpers", "run_receipt_oracle.py");
const results: Record<string, { ms: number[]; rss: number[] }> = {};
const add = (k: string, r: { ms: number; rssMb: number; code: number }) => {
  if (r.code !== 0) throw new Error(`${k} exited ${r.code}`);
  (results[k] ??= { ms: [], rss: [] }).ms.push(r.ms);
  results[k]!.rss.push(r.rssMb);
};
for (let i = 0; i < reps; i++) {
  add("bernstein valid-10000", timed([bin, "verify", "receipt", small]));
  add("python    valid-10000", timed(["python3", oracle, small]));
  add("bernstein big", timed([bin, "verify", "receipt", big]));
  add("python    big", timed(["python3", oracle, big]));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const upstream = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "upstream", "cpu_timing.json"), "utf8"));
const report: Record<string, unknown> = { reps, rows, small_bytes: statSync(small).size, big_bytes: statSync(big).size, upstream_python_verify_median_ms: upstream.verify_total_median_ms };
console.log(`valid-10000: ${statSync(small).size} bytes; ours-${rows}: ${statSync(big).size} bytes; ${reps} interleaved runs, wall time of the whole process (start-up included)`);
for (const [k, r] of Object.entries(results)) {
  console.log(`${k.padEnd(24)} median ${median(r.ms).toFixed(0).padStart(6)} ms   min ${Math.min(...r.ms).toFixed(0).padStart(6)} ms   peak RSS ${median(r.rss).toFixed(0).padStart(5)} MB`);
  report[k] = { median_ms: median(r.ms), min_ms: Math.min(...r.ms), peak_rss_mb: median(r.rss) };
}
console.log(`upstream's own figure for valid-10000 (verify_run_receipt in-process, no interpreter start-up): ${upstream.verify_total_median_ms} ms`);
writeFileSync(join(out, "results.json"), JSON.stringify(report, null, 2) + "\n");
