/** CLI glue of the fast verifier: --threads parsing, the progress line (TTY only, after a second). */
import { describe, expect, test } from "bun:test";
import { parseThreads, progressLine } from "../../src/cli/fast-verify.ts";
import { UsageError } from "../../src/errors.ts";

function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; out: string[] } {
  const out: string[] = [];
  const stream = { isTTY, write: (s: string) => out.push(s) } as unknown as NodeJS.WriteStream;
  return { stream, out };
}

describe("progressLine", () => {
  test("draws nothing when stderr is not a terminal", async () => {
    const { stream, out } = fakeStream(false);
    const p = progressLine(stream);
    await Bun.sleep(1050);
    p.onProgress(50e6, 100e6);
    p.finish();
    expect(out).toEqual([]);
  });

  test("on a terminal: silent for the first second, then bytes, rate and ETA on one rewritten line, erased at the end", async () => {
    const { stream, out } = fakeStream(true);
    const p = progressLine(stream);
    p.onProgress(1e6, 100e6);
    expect(out).toEqual([]);
    await Bun.sleep(1050);
    p.onProgress(50e6, 100e6);
    expect(out.length).toBe(1);
    expect(out[0]).toMatch(/^\r\x1b\[Kverifying 50 MB \/ 100 MB \(50%\), [0-9.]+ MB\/s, ETA \d+s$/);
    p.finish();
    expect(out[1]).toBe("\r\x1b[K");
  });
});

describe("parseThreads", () => {
  test("positive integers up to the cap; anything else is a usage error", () => {
    expect(parseThreads(undefined)).toBeUndefined();
    expect(parseThreads("1")).toBe(1);
    expect(parseThreads(" 8 ")).toBe(8);
    for (const bad of ["0", "-2", "1.5", "x", "", "1e3", "100000"]) {
      expect(() => parseThreads(bad)).toThrow(UsageError);
    }
  });
});
