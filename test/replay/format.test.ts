import { describe, expect, test } from "bun:test";
import { durationText, formatFixed, localTime, minutesSeconds, sizeKb } from "../../src/replay/format.ts";
import { runPython } from "../helpers/python.ts";

describe("Python number formatting", () => {
  test("formatFixed equals Python format(x, '.Nf') on ties, tiny, huge and random values", () => {
    const values: number[] = [0.25, 0.125, 0.375, 2.5, 3.5, -2.5, 0.03125, 0.00005, 1.00005, 0.5526, 0, -0, 1e-300, 5e-324, 1e21, 123456789.125, -0.04];
    for (let i = 0; i < 300; i++) values.push((Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 12 - 6));
    for (let k = 0; k < 64; k++) values.push(k / 1024, (k * 256) / 1024, k / 32);
    const jobs = values.flatMap((x) => [0, 1, 4].map((d) => ({ x: x.toString(), neg0: Object.is(x, -0), d })));
    const want = runPython(
      "import json,sys\njobs=json.load(sys.stdin)\nprint(json.dumps([format(-0.0 if j['neg0'] else float(j['x']), '.%df' % j['d']) for j in jobs]))",
      jobs,
    ) as string[];
    const got = jobs.map((j) => formatFixed(j.neg0 ? -0 : Number(j.x), j.d));
    expect(got).toEqual(want);
  });

  test("NaN and infinities print like Python", () => {
    expect(formatFixed(NaN, 4)).toBe("nan");
    expect(formatFixed(Infinity, 4)).toBe("inf");
    expect(formatFixed(-Infinity, 1)).toBe("-inf");
  });

  test("the Size column rounds half to even (256 bytes is 0.2 KB, as in Python)", () => {
    expect(sizeKb(256)).toBe("0.2 KB");
    expect(sizeKb(1331)).toBe("1.3 KB");
    expect(sizeKb(0)).toBe("0.0 KB");
  });

  test("m:ss and duration follow Python divmod (floor) semantics", () => {
    expect(minutesSeconds(0)).toBe("0:00");
    expect(minutesSeconds(65)).toBe("1:05");
    expect(minutesSeconds(-5)).toBe("-1:55");
    expect(durationText(455)).toBe("7m35s");
  });

  test("localTime equals Python datetime.fromtimestamp().strftime in this process's zone", () => {
    const ts = [0, 1727000000.1234567, 1763000001.3571386, 1700000000.9999996, 86399.5];
    const want = runPython(
      "import json,sys,datetime\nts=json.load(sys.stdin)\nprint(json.dumps([[datetime.datetime.fromtimestamp(t).strftime('%Y-%m-%d %H:%M:%S'), datetime.datetime.fromtimestamp(t).strftime('%Y-%m-%d %H:%M')] for t in ts]))",
      ts,
    ) as string[][];
    expect(ts.map((t) => [localTime(t, true), localTime(t, false)])).toEqual(want);
    expect(localTime(NaN, true)).toBeNull();
    expect(localTime(1e20, true)).toBeNull();
  });
});
