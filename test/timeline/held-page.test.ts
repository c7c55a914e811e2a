import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastVerifyResult } from "../../src/journal/fast/engine.ts";
import { HELD_IN_MEMORY, HeldPage } from "../../src/timeline/held-page.ts";

/**
 * HeldPage: the page's chunks made while the journal is still being
 * verified go out only after the head the verdict makes, in order; nothing
 * goes out when the verify fails, when its snapshot is not the rows', or
 * when the head is refused.
 */

function deferred(): { promise: Promise<FastVerifyResult>; resolve: (v: FastVerifyResult) => void; reject: (e: Error) => void } {
  let resolve!: (v: FastVerifyResult) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<FastVerifyResult>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}

const verdictOf = (snapshot: number) => ({ snapshot_bytes: snapshot, count: 3 }) as FastVerifyResult;
/** A turn of the event loop: the verdict's handlers run. */
const turn = () => new Promise<void>((r) => setTimeout(r, 0));

const spools = mkdtempSync(join(tmpdir(), "held-page-"));
afterAll(() => rmSync(spools, { recursive: true, force: true }));

function page(end: number, head: (v: FastVerifyResult) => string = (v) => `head(${v.count})`, reader = () => true, spoolDir = spools) {
  const v = deferred();
  const out: string[] = [];
  // the page is a stream of bytes: a character may straddle two chunks (a spool is read back in pieces)
  const text = new TextDecoder();
  const p = new HeldPage(
    v.promise,
    (verdict) => verdict.snapshot_bytes === end,
    head,
    (c) => {
      out.push(typeof c === "string" ? c : text.decode(c, { stream: true }));
      return reader();
    },
    spoolDir,
  );
  return { v, out, p };
}

describe("HeldPage", () => {
  test("chunks before the verdict are held, then written after its head, in order; later ones as they come", async () => {
    const { v, out, p } = page(100);
    expect(await p.put("a")).toBe(true);
    expect(await p.put("b")).toBe(true);
    expect(out).toEqual([]);
    expect(p.started).toBe(false);
    v.resolve(verdictOf(100));
    await turn();
    expect(await p.put("c")).toBe(true);
    expect(out).toEqual(["head(3)", "a", "b", "c"]);
    expect(await p.put("d")).toBe(true);
    expect(out).toEqual(["head(3)", "a", "b", "c", "d"]);
    expect(p.started).toBe(true);
  });

  test("settle between chunks: the head and the held chunks go out once the verdict is known, with no chunk after it", async () => {
    const { v, out, p } = page(100);
    expect(await p.put("a")).toBe(true);
    expect(await p.settle()).toBe(true);
    expect(out).toEqual([]);
    v.resolve(verdictOf(100));
    await turn();
    expect(await p.settle()).toBe(true);
    expect(out).toEqual(["head(3)", "a"]);
    expect(p.started).toBe(true);
    expect(await p.put("b")).toBe(true);
    expect(out).toEqual(["head(3)", "a", "b"]);
    for (const [name, end] of [["again", (v: ReturnType<typeof deferred>) => v.resolve(verdictOf(120))], ["failed", (v: ReturnType<typeof deferred>) => v.reject(new Error("x"))]] as const) {
      const other = page(100);
      await other.p.put("a");
      end(other.v);
      await turn();
      expect({ name, settled: await other.p.settle() }).toEqual({ name, settled: false });
      expect(other.out).toEqual([]);
    }
  });

  test("a verify whose snapshot is not the rows': nothing written, the pass told to stop", async () => {
    const { v, out, p } = page(100);
    await p.put("a");
    v.resolve(verdictOf(120));
    await turn();
    expect(await p.put("b")).toBe(false);
    expect(await p.put("c")).toBe(false);
    expect(p.again).toBe(true);
    expect(out).toEqual([]);
  });

  test("a verify that fails: nothing written, the pass told to stop", async () => {
    const { v, out, p } = page(100);
    await p.put("a");
    v.reject(new Error("unreadable"));
    await turn();
    expect(await p.put("b")).toBe(false);
    expect(p.again).toBe(false);
    expect(p.started).toBe(false);
    expect(out).toEqual([]);
  });

  test("a head refused (it throws): the refusal, and nothing written", async () => {
    const { v, out, p } = page(100, () => {
      throw new Error("input_empty");
    });
    await p.put("a");
    v.resolve(verdictOf(100));
    await turn();
    await expect(p.put("b")).rejects.toThrow("input_empty");
    expect(out).toEqual([]);
  });

  test("a reader that goes away: the held chunks after it are not written, and the pass is told to stop", async () => {
    let left = 2;
    const { v, out, p } = page(100, undefined, () => --left > 0);
    await p.put("a");
    await p.put("b");
    v.resolve(verdictOf(100));
    await turn();
    expect(await p.put("c")).toBe(false);
    expect(out).toEqual(["head(3)", "a"]);
    expect(p.open).toBe(false);
  });

  for (const [where, dir] of [
    ["a spool file", () => spools],
    ["memory (no spool can be made)", () => join(spools, "no such directory")],
  ] as const) {
    test(`held past ${HELD_IN_MEMORY} bytes, in ${where}: the same bytes, in order, and no file left behind`, async () => {
      const { v, out, p } = page(100, undefined, undefined, dir());
      // text, bytes, and characters of every UTF-8 length, each chunk whole
      const chunks = Array.from({ length: 7 }, (_, i) => `${i}:${"é€😀x".repeat(40_000 + i)}`);
      for (const [i, c] of chunks.entries()) expect(await p.put(i % 2 ? new TextEncoder().encode(c) : c)).toBe(true);
      expect(p.spooled).toBe(where === "a spool file");
      expect(readdirSync(spools).filter((f) => f.endsWith(".spool"))).toEqual([]);
      v.resolve(verdictOf(100));
      await turn();
      expect(await p.put("end")).toBe(true);
      expect(out.join("")).toBe(["head(3)", ...chunks, "end"].join(""));
      // read back from the spool in pieces, each the sink's only during its call (the pieces share one buffer)
      if (where === "a spool file") expect(out.length).toBeGreaterThan(chunks.length + 2);
      p.close();
    });
  }
});
