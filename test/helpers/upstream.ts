import { join } from "node:path";
import { ROOT } from "./cli.ts";

/** The upstream-shaped fixtures of issue 21 (see test/fixtures/upstream/verdicts/SOURCE.md). */
export const UPSTREAM_VERDICTS = join(ROOT, "test", "fixtures", "upstream", "verdicts");
const WRITERS = join(ROOT, "test", "reference", "upstream_writers.py");

/**
 * Run jobs of the independent Python writers (test/reference/upstream_writers.py:
 * journals, spine entries, gateway logs, provider-state payloads, written from
 * the spec) in one process; one answer per job.
 */
export function upstreamWrite(jobs: Record<string, unknown>[]): any[] {
  const r = Bun.spawnSync(["python3", WRITERS], { stdin: new TextEncoder().encode(JSON.stringify(jobs)), stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`upstream_writers.py failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}
