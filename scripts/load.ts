/**
 * Task-server load test through the compiled binary.
 *
 *   bun scripts/load.ts [--clients 50] [--requests 200] [--seed N] [--lease-s S] [--bin PATH] [--json] [--out FILE]
 *
 * With --lease-s the server runs with that lease, a share of claims is
 * abandoned, and the run checks that every claim not completed expired back
 * to open and was journaled once in runtime/task_events.jsonl.
 *
 * Starts `bernstein server --port 0` on loopback in a temp state dir, runs
 * the create/claim/complete mix of tools/fuzz/load.ts, checks the final store
 * (no lost update, no double claim, no 5xx), stops the server with SIGTERM
 * and checks it exited 0 without a stack trace or its token on stderr.
 * Prints throughput and latency percentiles; exit 0 when every invariant
 * held, 1 otherwise, 2 on bad flags.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { looksLikeStackTrace } from "../tools/fuzz/binary.ts";
import { harnessBinary } from "../tools/fuzz/build.ts";
import { runLoad } from "../tools/fuzz/load.ts";

function usage(msg: string): never {
  process.stderr.write(`load: ${msg}\nusage: bun scripts/load.ts [--clients 50] [--requests 200] [--seed N] [--bin PATH] [--json] [--out FILE]\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let clients = 50;
let requests = 200;
let seed = 1;
let bin: string | null = null;
let json = false;
let out: string | null = null;
let leaseS: number | undefined;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  const num = () => {
    const n = Number(argv[++i]);
    if (!Number.isInteger(n) || n < 1) usage(`${a} needs a positive integer`);
    return n;
  };
  if (a === "--clients") clients = num();
  else if (a === "--requests") requests = num();
  else if (a === "--seed") seed = num();
  else if (a === "--bin") bin = argv[++i] ?? usage("--bin needs a path");
  else if (a === "--json") json = true;
  else if (a === "--lease-s") leaseS = num();
  else if (a === "--out") out = resolve(argv[++i] ?? usage("--out needs a path"));
  else usage(`unknown flag ${a}`);
}

const binary = harnessBinary(bin);
const sdd = mkdtempSync(join(tmpdir(), "bernstein-load-"));
const proc = Bun.spawn([binary, "server", "--port", "0", "--sdd-dir", sdd, ...(leaseS ? ["--lease-s", String(leaseS)] : [])], { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
const output = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
const infoPath = join(sdd, "runtime", "server.json");
for (let i = 0; i < 400 && !existsSync(infoPath); i++) await Bun.sleep(25);
if (!existsSync(infoPath)) {
  proc.kill("SIGKILL");
  usage(`the server did not start: ${(await output)[1].slice(0, 500)}`);
}
const info = JSON.parse(readFileSync(infoPath, "utf8")) as { url: string; token: string; host: string };
const infoMode = statSync(infoPath).mode & 0o777;

const report = await runLoad({ url: info.url, token: info.token, clients, requests, seed, leaseS });
// Every claim that was not completed expired exactly once, and each expiry is journaled.
const eventsPath = join(sdd, "runtime", "task_events.jsonl");
const journaledExpiries = existsSync(eventsPath)
  ? readFileSync(eventsPath, "utf8").split("\n").filter((l) => l.includes('"reason": "lease_expired"')).length
  : 0;
proc.kill("SIGTERM");
const code = await proc.exited;
const [stdout, stderr] = await output;
rmSync(sdd, { recursive: true, force: true });
const extra: string[] = [];
if (leaseS && journaledExpiries !== report.claims_granted - report.completed) {
  extra.push(`${journaledExpiries} lease expiries journaled, expected ${report.claims_granted - report.completed} (claims granted - completed)`);
}
if (code !== 0) extra.push(`server exited ${code}`);
if (looksLikeStackTrace(stderr)) extra.push("server printed a stack trace");
if ((stdout + stderr).includes(info.token)) extra.push("server printed its token");
if (info.host !== "127.0.0.1") extra.push(`server bound ${info.host}, not loopback`);
if (infoMode !== 0o600) extra.push(`server.json mode ${infoMode.toString(8)}`);
const ok = report.ok && extra.length === 0;
const result = { ...report, journaled_expiries: journaledExpiries, lease_s: leaseS ?? null, server_checks: extra, ok, host: info.host, seed };

if (json) process.stdout.write(JSON.stringify(result, null, 2) + "\n");
else {
  const l = report.latency;
  process.stdout.write(
    [
      `load: ${clients} clients x ${requests} requests = ${report.total_requests} requests in ${report.elapsed_s} s (${report.requests_per_s}/s) on ${info.host}`,
      `  created ${report.created}, claimed ${report.claimed}, completed ${report.completed}, empty claims ${report.empty_claims}`,
      `  5xx ${report.server_errors}, connection errors ${report.connection_errors}, double claims ${report.double_claims}, lost updates ${report.lost_updates}`,
      `  theft attempts ${report.theft_attempts}, stolen completions ${report.stolen_completions}` +
        (leaseS ? `; lease ${leaseS} s: abandoned ${report.abandoned}, expired as expected ${report.expired_ok}, expiries journaled ${journaledExpiries}` : ""),
      `  latency ms  all p50 ${l.all.p50_ms} p90 ${l.all.p90_ms} p99 ${l.all.p99_ms} max ${l.all.max_ms}`,
      `              create p99 ${l.create.p99_ms}, claim p99 ${l.claim.p99_ms}, complete p99 ${l.complete.p99_ms}`,
      ...report.problems.map((p) => `  problem: ${p}`),
      ...extra.map((p) => `  problem: ${p}`),
      ok ? "load: ok" : "load: FAILED",
    ].join("\n") + "\n",
  );
}
if (out) await Bun.write(out, JSON.stringify(result, null, 2) + "\n");
process.exitCode = ok ? 0 : 1;
