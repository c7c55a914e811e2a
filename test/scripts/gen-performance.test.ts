/**
 * docs/performance.md's tables and the README's performance summary are
 * generated from bench/results.json (scripts/gen-performance.ts): they must
 * be exactly what the stored results generate, and say what the results say.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { performanceSection, readmeSummary, type StoredResults } from "../../bench/report.ts";
import { generated, PAGE_BEGIN, PAGE_END, PERFORMANCE_PAGE, README, readResults, SUMMARY_BEGIN, SUMMARY_END, withBlock } from "../../scripts/gen-performance.ts";

describe("the performance docs", () => {
  test("are what bench/results.json generates (run `bun scripts/gen-performance.ts` when this fails)", () => {
    for (const [path, text] of generated(readResults())) expect({ path, text: readFileSync(path, "utf8") }).toEqual({ path, text });
  });

  test("carry each stored figure: verify's speed, every verb's ratio and peak on every shape", () => {
    const r = readResults();
    const page = readFileSync(PERFORMANCE_PAGE, "utf8");
    const readme = readFileSync(README, "utf8");
    const one = r.verify!.find((f) => f.name === "bernstein verify --threads 1")!;
    expect(page).toMatch(new RegExp(`\\| +${one.wallS.toFixed(3)} \\|`));
    expect(readme).toContain(`${one.mbPerS.toFixed(0)} MB/s on one thread`);
    for (const s of r.verbs!.shapes) {
      for (const v of s.verbs) {
        if (v.target_ratio === null) continue;
        expect(page).toContain(v.ratio.toFixed(2) + "×");
        expect(page).toContain(v.rss_mb.toFixed(1));
      }
    }
    // the README's summary names each verb's worst ratio over the shapes
    const worstHtml = Math.max(...r.verbs!.shapes.map((s) => s.verbs.find((v) => v.key === "html")!.ratio));
    expect(readme).toContain(`${worstHtml.toFixed(2)}×`);
  });

  test("verify's CPU against the hash alone and journal record's peak, each with its bar, when the results hold them", () => {
    const r = readResults();
    const figure = (name: string, cpuS: number) => ({ name, wallS: cpuS, mbPerS: 1, rowsPerS: 1, cpuS, rssMB: 40 });
    const base = { ...r, verbs: undefined } as StoredResults;
    const scaling = { bytes: 1e9, rows: 1, one: figure("bernstein verify --threads 1", 1.06), many: figure("bernstein verify --threads 2", 1.07), speedup: 1.9 };
    const page = (over: Partial<StoredResults>) => performanceSection({ ...base, ...over } as StoredResults);
    const withHash = page({ scaling: { ...scaling, openssl: figure("openssl dgst -sha256", 0.5) }, record: { events: 1e6, wall_s: 2, events_per_s: 5e5, rss_mb: 70.25 } });
    expect(withHash).toMatch(/verify --threads 1 CPU \/ `openssl dgst -sha256` CPU, 1000.0 MB +\| +2\.12× \| +≤ 1\.6× \| +\*\*no\*\* \|/);
    expect(withHash).toMatch(/peak RSS of journal record +\| +70\.3 MB \| +≤ 64 MB \| +\*\*no\*\* \|/);
    expect(withHash).toMatch(/journal record from stdin \(1,000,000 events\) +\| +500,000 events\/s \| +≥ 300,000 \| +yes \|/);
    const summary = readmeSummary({ ...base, scaling: { ...scaling, openssl: figure("openssl dgst -sha256", 0.5) }, record: { events: 1e6, wall_s: 2, events_per_s: 5e5, rss_mb: 70.25 } } as StoredResults);
    expect(summary).toContain("on that journal one thread used 2.12× the CPU time of `openssl dgst -sha256` hashing it once");
    expect(summary).toContain("`journal record`: 500,000 events/s, peak RSS 70.3 MB");
    // older results, or no openssl on the machine: no such rows
    const without = page({ scaling, record: { events: 1e6, wall_s: 2, events_per_s: 5e5 } });
    expect(without).not.toContain("openssl");
    expect(without).not.toContain("peak RSS of journal record");
  });

  test("a figure past its target is bold, one within it is not", () => {
    const r = readResults();
    const shapes = r.verbs!.shapes.map((s) => ({ ...s, verbs: s.verbs.map((v) => ({ ...v })) }));
    const html = shapes[0]!.verbs.find((v) => v.key === "html")!;
    const at = (ratio: number, met: boolean): StoredResults => {
      for (const s of shapes) for (const v of s.verbs) if (v.key === "html") Object.assign(v, { ratio: ratio / 2, ratio_met: true });
      Object.assign(html, { ratio, ratio_met: met });
      return { verbs: { ...r.verbs!, shapes } };
    };
    expect(readmeSummary(at(9.87, false))).toContain("**9.87×**");
    const within = readmeSummary(at(1.23, true));
    expect(within).toContain("1.23×");
    expect(within).not.toContain("**1.23×**");
  });

  test("results with only a verb table make only its tables; stale or missing markers are refused", () => {
    const r = readResults();
    const verbsOnly: StoredResults = { verbs: r.verbs };
    expect(performanceSection(verbsOnly)).not.toContain("### Verify, record");
    expect(performanceSection(verbsOnly)).toContain("### Every verb on every shape");
    expect(readmeSummary(verbsOnly)).not.toContain("`journal verify` of a");
    expect(withBlock(`a\n${SUMMARY_BEGIN}\nold\n${SUMMARY_END}\nb`, SUMMARY_BEGIN, SUMMARY_END, "new", "x")).toBe(`a\n${SUMMARY_BEGIN}\n\nnew\n\n${SUMMARY_END}\nb`);
    expect(() => withBlock("no markers", PAGE_BEGIN, PAGE_END, "new", "page")).toThrow("markers");
  });
});
