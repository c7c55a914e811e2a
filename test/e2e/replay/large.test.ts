import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeBigJournal } from "../../helpers/big-journal.ts";
import { binPath } from "../../helpers/cli.ts";
import { makeSdd, type SddTree } from "./fixture.ts";

const ROWS = 1_000_000;
const TIME = "/usr/bin/time";

/** Run the binary under /usr/bin/time (when present) and return stdout, exit code and peak RSS in MB. */
async function measured(args: string[], cwd: string): Promise<{ code: number; stdout: string; peakMb: number | null }> {
  const useTime = existsSync(TIME);
  const cmd = useTime ? [TIME, "-f", "PEAK_RSS_KB=%M", binPath(), ...args] : [binPath(), ...args];
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const m = /PEAK_RSS_KB=(\d+)/.exec(stderr);
  if (useTime && !m) throw new Error(`no peak RSS reported by ${TIME}:\n${stderr}`);
  return { code, stdout, peakMb: m ? Number(m[1]) / 1024 : null };
}

describe("a 1,000,000-event journal (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd();
    mkdirSync(t.runDir("big"), { recursive: true });
    const head = writeBigJournal(t.journal("big"), ROWS);
    // A matching seal: the limited display must not claim to have compared it.
    writeFileSync(join(t.runDir("big"), "seal.json"), JSON.stringify({ event_count: ROWS, head }));
  }, 60_000); // writing a million rows: a budget for a loaded machine (hooks default to 5 s)
  afterAll(() => t.cleanup());

  test("--limit 20 shows the first screen from what it read, with flat memory", async () => {
    const r = await measured(["replay", "big", "--limit", "20"], t.cwd);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Events: 20 (first 20 events shown)");
    expect(r.stdout).toContain("Duration: 0m19s");
    expect(r.stdout.match(/^\d+:\d\d /gm)).toHaveLength(20);
    // The seal line wraps at the terminal width: compare with whitespace folded.
    expect(r.stdout.replace(/\s+/g, " ")).toContain("not compared, because only the first 20 events were read");
    if (r.peakMb !== null) expect(r.peakMb).toBeLessThan(150);
  });

  test("--as-json --limit 20 streams the first 20 events", async () => {
    const r = await measured(["replay", "big", "--limit", "20", "--as-json"], t.cwd);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.events).toHaveLength(20);
    expect(doc.events.map((e: any) => e.index)).toEqual([...Array(20).keys()]);
    if (r.peakMb !== null) expect(r.peakMb).toBeLessThan(150);
  });
});
