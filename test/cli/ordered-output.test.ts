import { describe, expect, test } from "bun:test";
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { openAnonymousFile } from "../../src/fsutil/anonymous-file.ts";
import { OrderedOutput } from "../../src/cli/ordered-output.ts";

/** A slow writer: each write takes a turn of the timer queue, as a write(2) by the thread pool does. */
function slowSink(delayMs = 1): { put: (b: Uint8Array) => Promise<void>; text: () => string; writes: number[] } {
  const parts: Buffer[] = [];
  const writes: number[] = [];
  return {
    put: async (b) => {
      await Bun.sleep(delayMs);
      // a copy: the caller may reuse its buffer once the write resolved
      parts.push(Buffer.from(b));
      writes.push(b.length);
    },
    text: () => Buffer.concat(parts).toString("utf8"),
    writes,
  };
}

const bytes = (s: string): Uint8Array => Buffer.from(s, "utf8");

describe("OrderedOutput", () => {
  test("awaited writes and held pieces go out in the order they were asked for", async () => {
    const sink = slowSink();
    const out = new OrderedOutput(sink.put);
    const w1 = out.write(bytes("a"));
    out.hold(bytes("b"));
    const w2 = out.write(bytes("c"));
    out.hold(bytes("d"));
    out.hold(bytes("e"));
    await Promise.all([w1, w2]);
    out.hold(bytes("f"));
    await out.flush();
    expect(sink.text()).toBe("abcdef");
    expect(out.busy()).toBe(false);
  });

  test("a held piece is a copy: the caller may reuse its buffer at once", async () => {
    const sink = slowSink();
    const out = new OrderedOutput(sink.put);
    const buf = bytes("xyz");
    out.hold(buf);
    buf.fill(0x21);
    await out.flush();
    expect(sink.text()).toBe("xyz");
  });

  test("small held pieces in a row are joined into one write", async () => {
    const sink = slowSink();
    const out = new OrderedOutput(sink.put);
    await out.write(bytes("first"));
    for (let i = 0; i < 100; i++) out.hold(bytes(`line ${i}\n`));
    await out.flush();
    expect(sink.writes.length).toBeLessThanOrEqual(3);
    expect(sink.text()).toBe("first" + Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join(""));
  });

  test("beyond heldMax a burst of pieces spills to the file, in order, and the file starts over once written", async () => {
    const sink = slowSink();
    let spillFd = -1;
    const out = new OrderedOutput(sink.put, 1000, () => (spillFd = openAnonymousFile("test-spill")));
    const expected: string[] = [];
    // a synchronous burst: nothing is written until it ends
    for (let i = 0; i < 500; i++) {
      const piece = `${i}:${"x".repeat(i % 37)}|`;
      expected.push(piece);
      out.hold(bytes(piece));
    }
    expect(spillFd).toBeGreaterThan(0);
    const spilled = fstatSync(spillFd).size;
    expect(spilled).toBeGreaterThan(0);
    await out.write(bytes("end"));
    expect(sink.text()).toBe(expected.join("") + "end");
    expect(fstatSync(spillFd).size).toBe(0);
    // spilled again after starting over: still in order
    for (let i = 0; i < 100; i++) out.hold(bytes(`again ${i};`.repeat(5)));
    await out.flush();
    expect(sink.text()).toBe(expected.join("") + "end" + Array.from({ length: 100 }, (_, i) => `again ${i};`.repeat(5)).join(""));
  });

  test("without a spill file the pieces stay in memory, still in order", async () => {
    const sink = slowSink();
    const out = new OrderedOutput(sink.put, 10, () => {
      throw new Error("no temp directory");
    });
    for (let i = 0; i < 50; i++) out.hold(bytes(`${i},`));
    await out.flush();
    expect(sink.text()).toBe(Array.from({ length: 50 }, (_, i) => `${i},`).join(""));
  });

  test("a spill file that cannot be written (a full disk): the pieces stay in memory, still in order", async () => {
    const sink = slowSink();
    const path = join(mkdtempSync(join(tmpdir(), "bern-oo-")), "ro");
    writeFileSync(path, "");
    let fd = -1;
    // opened for reading only: every write to it fails, as one to a full disk does
    const out = new OrderedOutput(sink.put, 10, () => (fd = openSync(path, "r")));
    for (let i = 0; i < 50; i++) out.hold(bytes(`${i};`));
    await out.flush();
    expect(fd).toBeGreaterThan(0);
    expect(sink.text()).toBe(Array.from({ length: 50 }, (_, i) => `${i};`).join(""));
    closeSync(fd);
    rmSync(dirname(path), { recursive: true, force: true });
  });

  test("a failed write rejects its writer; what follows is still asked of the sink", async () => {
    const seen: string[] = [];
    const out = new OrderedOutput(async (b) => {
      await Bun.sleep(1);
      const s = Buffer.from(b).toString();
      if (s === "bad") throw new Error("EIO");
      seen.push(s);
    });
    const bad = out.write(bytes("bad"));
    const good = out.write(bytes("good"));
    await expect(bad).rejects.toThrow("EIO");
    await good;
    expect(seen).toEqual(["good"]);
  });

  test("with putNow, a piece handed over while nothing is queued goes out at once; the rest waits its turn", async () => {
    const sink = slowSink();
    let room = 3;
    const now: string[] = [];
    const out = new OrderedOutput(sink.put, undefined, undefined, (b) => {
      const n = Math.min(room, b.length);
      room -= n;
      now.push(Buffer.from(b.subarray(0, n)).toString());
      return n;
    });
    out.hold(bytes("abcdef"));
    // written before hold returned: a diagnostic this thread writes next comes after it
    expect(now).toEqual(["abc"]);
    room = 100;
    // "def" is queued: later pieces go behind it, not through putNow
    out.hold(bytes("gh"));
    await out.write(bytes("ij"));
    expect(now.join("") + sink.text()).toBe("abcdefghij");
    // idle again: straight through
    out.hold(bytes("kl"));
    expect(now[now.length - 1]).toBe("kl");
  });

  test("abandon lets every waiting writer go and writes nothing more", async () => {
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const out = new OrderedOutput(async (b) => {
      seen.push(Buffer.from(b).toString());
      await stuck; // a reader who stopped reading
    });
    const first = out.write(bytes("1"));
    const second = out.write(bytes("2"));
    out.hold(bytes("3"));
    const flushed = out.flush();
    out.abandon();
    await Promise.all([first, second, flushed]);
    expect(seen).toEqual(["1"]);
    await out.write(bytes("4"));
    out.hold(bytes("5"));
    release();
    await Bun.sleep(5);
    expect(seen).toEqual(["1"]);
  });
});
