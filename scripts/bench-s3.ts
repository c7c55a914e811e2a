/**
 * `bun scripts/bench-s3.ts [--mb 221] [--runs 3]`: journal verify of the
 * benchmark journal (bench/journal-gen.ts, seed 8) from a local file and
 * from object storage — s3:// (SigV4) and a public URL, with one and two threads —
 * against OpenStack Swift with s3api started on loopback
 * (test/helpers/swift-s3.ts). Checks that every place gives the same
 * verdict (and the same divergent_index for a tampered copy), and reports
 * wall time, MB/s and peak RSS (GNU time) per run, median of --runs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateJournal } from "../bench/journal-gen.ts";
import { startSwiftS3 } from "../test/helpers/swift-s3.ts";

const ROOT = join(import.meta.dir, "..");
const OUT = join(ROOT, "bench", "out");
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MB = arg("mb", 221);
const RUNS = arg("runs", 3);

function build(): string {
  const out = join(OUT, "bernstein");
  const r = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "build.ts"), "--out", out], { cwd: ROOT, stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`build failed: ${r.stderr.toString()}`);
  return out;
}

function journal(): string {
  const path = join(OUT, "sdd", "runs", `bench-${MB}mb`, "journal.jsonl");
  if (!existsSync(path)) generateJournal(join(OUT, "sdd"), `bench-${MB}mb`, MB * 1e6, 8);
  return path;
}

interface Run {
  seconds: number;
  rssKb: number;
  code: number;
  verdict: Record<string, unknown>;
}

function verifyOnce(bin: string, target: string, env: Record<string, string>, extra: string[] = []): Run {
  const timeFile = join(OUT, "s3-bench.time");
  const t = performance.now();
  const r = Bun.spawnSync(["/usr/bin/time", "-f", "%M", "-o", timeFile, bin, "journal", "verify", target, "--as-json", ...extra], {
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const seconds = (performance.now() - t) / 1000;
  const doc = JSON.parse(r.stdout.toString()) as Record<string, unknown>;
  const { path: _p, ...verdict } = doc;
  return { seconds, rssKb: Number(readFileSync(timeFile, "utf8").trim().split("\n").pop()), code: r.exitCode ?? -1, verdict };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

mkdirSync(OUT, { recursive: true });
const bin = build();
const path = journal();
const bytes = Bun.file(path).size;
const tamperedPath = join(OUT, `bench-${MB}mb.tampered.jsonl`);
if (!existsSync(tamperedPath)) {
  const b = readFileSync(path);
  const at = b.indexOf('"tick": ', Math.floor(b.length * 0.7)) + 8;
  b[at] = b[at] === 0x31 ? 0x32 : 0x31;
  writeFileSync(tamperedPath, b);
}
console.error(`starting Swift + s3api, uploading ${(bytes / 1e6).toFixed(1)} MB twice ...`);
const s3 = await startSwiftS3();
try {
  await s3.createBucket("public", true);
  const client = new Bun.S3Client({ endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
  await client.write("bench.jsonl", Bun.file(path));
  await client.write("tampered.jsonl", Bun.file(tamperedPath));
  await s3.putObject("public", "bench.jsonl", Bun.file(path));
  const one = ["--threads", "1"];
  const two = ["--threads", "2"];
  const cases: [string, string, Record<string, string>, string[]][] = [
    ["local file, --threads 1", path, {}, one],
    ["local file, --threads 2", path, {}, two],
    ["s3://, --threads 1", `s3://${s3.bucket}/bench.jsonl`, s3.env, one],
    ["s3://, --threads 2", `s3://${s3.bucket}/bench.jsonl`, s3.env, two],
    ["public URL, --threads 2", s3.publicUrl("public", "bench.jsonl"), {}, two],
    ["s3:// through Bun.s3, --threads 2", `s3://${s3.bucket}/bench.jsonl`, { ...s3.env, BERNSTEIN_S3_CLIENT: "bun" }, two],
  ];
  const rows: Record<string, unknown>[] = [];
  let reference: string | null = null;
  for (const [name, target, env, extra] of cases) {
    const runs = Array.from({ length: RUNS }, () => verifyOnce(bin, target, env, extra));
    const v = JSON.stringify(runs[0]!.verdict);
    reference ??= v;
    const secs = median(runs.map((r) => r.seconds));
    rows.push({ case: name, seconds: +secs.toFixed(2), mb_per_s: Math.round(bytes / 1e6 / secs), peak_rss_mb: Math.round(median(runs.map((r) => r.rssKb)) / 1024), same_verdict: v === reference && runs.every((r) => r.code === 0) });
  }
  const tl = verifyOnce(bin, tamperedPath, {});
  const tr = verifyOnce(bin, `s3://${s3.bucket}/tampered.jsonl`, s3.env, two);
  console.table(rows);
  console.log(`tampered copy: divergent_index local ${tl.verdict.divergent_index}, s3:// ${tr.verdict.divergent_index}; same verdict: ${JSON.stringify(tl.verdict) === JSON.stringify(tr.verdict)}`);
  writeFileSync(join(OUT, "s3-results.json"), JSON.stringify({ bytes, runs: RUNS, rows, tampered: { local: tl.verdict.divergent_index, s3: tr.verdict.divergent_index } }, null, 2));
} finally {
  await s3.stop();
}
