import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LARGE_OUTPUT, LARGE_WRITE, widenPipe, widens } from "../../src/cli/pipe-buffer.ts";

const dir = mkdtempSync(join(tmpdir(), "pipe-buffer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const F_GETPIPE_SZ = 1032;
/** A pipe's size as Python's fcntl reads it: an oracle that is not the code under test. */
function pipeSize(fifo: string): number {
  const py = Bun.spawnSync(["python3", "-c", `import fcntl,os,sys; fd=os.open(sys.argv[1], os.O_RDWR); print(fcntl.fcntl(fd, ${F_GETPIPE_SZ}))`, fifo]);
  return Number(py.stdout.toString().trim());
}

describe("widenPipe", () => {
  test("a pipe grows to 1 MiB (or the system's ceiling), once per fd", () => {
    const fifo = join(dir, "fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    // O_RDWR: Linux opens a FIFO without a peer this way, and the fd holds both ends
    const fd = openSync(fifo, "r+");
    try {
      const ceiling = Math.min(1 << 20, Number(readFileSync("/proc/sys/fs/pipe-max-size", "utf8").trim()));
      expect(widenPipe(fd)).toBe(ceiling);
      expect(pipeSize(fifo)).toBe(ceiling);
      // asked once: a second call does not ask again
      expect(widenPipe(fd)).toBeNull();
    } finally {
      closeSync(fd);
    }
  });

  test("a file is left as it is", () => {
    const file = join(dir, "file");
    writeFileSync(file, "x");
    const fd = openSync(file, "r+");
    try {
      expect(widenPipe(fd)).toBeNull();
    } finally {
      closeSync(fd);
    }
  });
});

describe("widens: a large document written in large pieces", () => {
  test("both bounds, inclusive", () => {
    expect(widens(LARGE_OUTPUT - LARGE_WRITE, LARGE_WRITE)).toBe(true);
    expect(widens(LARGE_OUTPUT - LARGE_WRITE, LARGE_WRITE - 1)).toBe(false);
    expect(widens(LARGE_OUTPUT - LARGE_WRITE - 1, LARGE_WRITE)).toBe(false);
    expect(widens(0, LARGE_OUTPUT)).toBe(true);
    // a prose display's pieces (~64 KiB) never widen, however long the output
    expect(widens(1 << 30, 65_600)).toBe(false);
  });
});
