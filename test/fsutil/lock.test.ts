/** The writer lock: the OS lock (Linux/macOS) and the exclusive-create fallback (Windows, forced here with BERNSTEIN_NO_OS_LOCK=1). */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireLock, lockIsHeld } from "../../src/fsutil/lock.ts";
import { ownerText, parseOwner, processStartTime } from "../../src/fsutil/owner.ts";
import { ROOT } from "../helpers/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "lock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("OS lock", () => {
  test("exclusive across open file descriptions of one process; released and removed by its holder; probe sees it", () => {
    const p = join(dir, "a.lock");
    const l = acquireLock(p);
    expect(lockIsHeld(p)).toBe(true);
    expect(() => acquireLock(p)).toThrow(expect.objectContaining({ name: "LockHeldError", ownerPid: process.pid }));
    l.release();
    expect(existsSync(p)).toBe(false);
    expect(lockIsHeld(p)).toBe(false);
    writeFileSync(p, "1\n"); // a pid-only file holds nothing
    expect(lockIsHeld(p)).toBe(false);
    acquireLock(p).release();
  });

  test("owner text carries the start time from /proc; parse refuses garbage", () => {
    const start = processStartTime(process.pid);
    expect(ownerText(process.pid)).toBe(start === null ? `${process.pid}\n` : `${process.pid} ${start}\n`);
    expect(parseOwner("12 345\n")).toEqual({ pid: 12, start: "345" });
    expect(parseOwner("")).toBeNull();
    expect(parseOwner("x")).toBeNull();
    expect(parseOwner("-4")).toBeNull();
  });
});

describe("exclusive-create fallback (no OS lock)", () => {
  test("a live owner with the same start time holds; a reused pid (other start time), a dead pid or garbage is stale", () => {
    const script = `
      import { writeFileSync } from "node:fs";
      import { acquireLock } from ${JSON.stringify(join(ROOT, "src/fsutil/lock.ts"))};
      import { ownerText } from ${JSON.stringify(join(ROOT, "src/fsutil/owner.ts"))};
      const p = process.argv[1];
      const out = [];
      const ppid = process.ppid;
      for (const text of [ownerText(ppid), ppid + " 1\\n", "999999999\\n", "", "junk"]) {
        writeFileSync(p, text);
        try { acquireLock(p).release(); out.push("taken"); } catch (e) { out.push(e.name); }
      }
      console.log(JSON.stringify(out));`;
    const r = Bun.spawnSync([process.execPath, "-e", script, join(dir, "fb.lock")], { env: { ...process.env, BERNSTEIN_NO_OS_LOCK: "1" }, stdout: "pipe", stderr: "pipe" });
    expect(r.stderr.toString()).toBe("");
    const hasProc = processStartTime(process.pid) !== null;
    expect(JSON.parse(r.stdout.toString())).toEqual(["LockHeldError", hasProc ? "taken" : "LockHeldError", "taken", "taken", "taken"]);
  });
});
