import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nonBlockingTwin, writeAllWaiting, writesMayWait } from "../../src/cli/fd-write.ts";

const dir = mkdtempSync(join(tmpdir(), "bern-fd-write-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A named pipe opened for reading and writing (so opening it never waits for the other end). */
function fifo(name: string): { fd: number; path: string } {
  const path = join(dir, name);
  expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);
  return { fd: openSync(path, "r+"), path };
}

describe.skipIf(process.platform !== "linux")("fd-write", () => {
  test("a pipe may wait on its reader; a file and /dev/null never do", () => {
    const file = join(dir, "f");
    writeFileSync(file, "");
    const f = openSync(file, "w");
    const nul = openSync("/dev/null", "w");
    const full = openSync("/dev/full", "w");
    const p = fifo("p1");
    expect(writesMayWait(f)).toBe(false);
    expect(writesMayWait(nul)).toBe(false);
    expect(writesMayWait(full)).toBe(false);
    expect(writesMayWait(p.fd)).toBe(true);
    expect(nonBlockingTwin(f)).toBeNull();
    expect(nonBlockingTwin(nul)).toBeNull();
    for (const fd of [f, nul, full, p.fd]) closeSync(fd);
  });

  test("writeAllWaiting writes every byte once through a pipe that fills, its reader reading late", async () => {
    const p = fifo("p2");
    const twin = nonBlockingTwin(p.fd);
    expect(twin).not.toBeNull();
    // ~3 MB: far more than the pipe holds, so the twin fills it and the pool's thread waits
    const data = Buffer.alloc(3 << 20);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 13)) & 0xff;
    const got: Buffer[] = [];
    let reading = true;
    const reader = (async () => {
      await Bun.sleep(50);
      const buf = Buffer.alloc(1 << 16);
      let total = 0;
      while (reading || total < data.length) {
        const n = readSync(p.fd, buf, 0, buf.length, null);
        got.push(Buffer.from(buf.subarray(0, n)));
        total += n;
        if (total >= data.length) break;
        await Bun.sleep(0);
      }
    })();
    await writeAllWaiting(p.fd, twin, data);
    reading = false;
    await reader;
    expect(Buffer.concat(got).equals(data)).toBe(true);
    closeSync(twin!);
    closeSync(p.fd);
  });
});
