import { describe, expect, test } from "bun:test";
import type { FastVerifyResult } from "../../src/journal/fast/engine.ts";
import { HeldPage } from "../../src/timeline/held-page.ts";

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

function page(end: number, head: (v: FastVerifyResult) => string = (v) => `head(${v.count})`, reader = () => true) {
  const v = deferred();
  const out: string[] = [];
  const p = new HeldPage(v.promise, end, head, (c) => {
    out.push(String(c));
    return reader();
  });
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
});
