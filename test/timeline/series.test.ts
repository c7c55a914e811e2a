import { describe, expect, test } from "bun:test";
import { BUCKETS, LaneDensity, OTHER_LANE, Series } from "../../src/timeline/series.ts";

describe("LaneDensity", () => {
  test("busy time per lane and bucket survives the span doubling; failures counted where they start", () => {
    const d = new LaneDensity("role", 8);
    // Two qa attempts overlapping for 1 s of the first 2 s, one failed; a backend attempt an hour later.
    d.add("qa", 0, 2000, false);
    d.add("qa", 1000, 2000, true);
    d.add("backend", 3_600_000, 3_600_500, false);
    d.extend(3_600_500);
    const j = d.toJson();
    expect(j.by).toBe("role");
    expect(j.bucket_ms * BUCKETS).toBeGreaterThan(3_600_500);
    expect(j.lanes.map((l) => [l.key, l.attempts])).toEqual([["qa", 2], ["backend", 1]]);
    const qa = j.lanes[0]!;
    // 3,000 attempt-ms in the first bucket (it holds the first 2 s): that many ms / bucket_ms attempts at once.
    expect(qa.busy[0]).toBe(Math.round((3000 / j.bucket_ms) * 100) / 100);
    expect(qa.busy.slice(1).every((v) => v === 0)).toBe(true);
    expect(qa.failed.reduce((a, b) => a + b, 0)).toBe(1);
    const backend = j.lanes[1]!;
    expect(backend.busy.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // Every lane shares the run series' time axis.
    const s = new Series();
    s.add(0, false, null, 0);
    s.add(3_600_500, false, null, 0);
    expect(s.toJson().bucket_ms).toBe(j.bucket_ms);
    for (const l of j.lanes) expect(l.busy).toHaveLength(s.toJson().events.length);
  });

  test("lanes beyond the bound fold into (other), counted", () => {
    const d = new LaneDensity("agent", 4);
    for (let i = 0; i < 10; i++) d.add(`agent-${i}`, i * 10, i * 10 + 5, false);
    const j = d.toJson();
    expect(j.lanes.map((l) => l.key)).toEqual(["agent-0", "agent-1", "agent-2", OTHER_LANE]);
    expect(j.lanes.at(-1)!.attempts).toBe(7);
    expect(j.folded_attempts).toBe(7);
  });
});
