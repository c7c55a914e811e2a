import { setSystemTime } from "bun:test";
import { readFileSync } from "node:fs";
import { setStepKernelEnabled } from "../../src/steps/kernel.ts";

/**
 * For tests that compare a receipt the binary wrote with one the exact path
 * wrote in the test's process: the tar with what carries the time blanked
 * (each header's mtime and checksum, the manifest's created_at, and the
 * bytes of a signature over that manifest), so equal bytes mean the same
 * layout, members and contents.
 */
export function timelessTar(path: string): Buffer {
  const b = Buffer.from(readFileSync(path));
  for (let off = 0; off + 512 <= b.length; ) {
    if (b.subarray(off, off + 512).every((x) => x === 0)) break;
    const name = b.subarray(off, off + 100).toString("latin1").replace(/\0.*$/s, "");
    const size = parseInt(b.subarray(off + 124, off + 136).toString("latin1").replace(/[\0 ]/g, "") || "0", 8);
    b.fill(0, off + 136, off + 156);
    if (name === "manifest.sig") b.fill(0, off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return Buffer.from(b.toString("latin1").replace(/"created_at":"[^"]*"/, '"created_at":""'), "latin1");
}

/** `f` on the exact path (the step kernel off) at a fixed clock. */
export async function exactly<T>(f: () => Promise<T>): Promise<T> {
  setStepKernelEnabled(false);
  setSystemTime(new Date("2026-03-04T05:06:07Z"));
  try {
    return await f();
  } finally {
    setSystemTime();
    setStepKernelEnabled(true);
  }
}
