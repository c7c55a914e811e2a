import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkOutputTarget } from "../../src/fsutil/output-target.ts";

const dir = mkdtempSync(join(tmpdir(), "bernstein-output-target-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refused = (path: string, why: RegExp) =>
  expect(() => checkOutputTarget(path, "the receipt")).toThrow(expect.objectContaining({ code: "output_forbidden", exitCode: 2, message: expect.stringMatching(why) }));

describe("checkOutputTarget", () => {
  test("a new name, a regular file, and a chain of symlinks to a regular file are accepted", () => {
    writeFileSync(join(dir, "file"), "x");
    symlinkSync(join(dir, "file"), join(dir, "l1"));
    symlinkSync("l1", join(dir, "l2"));
    for (const p of ["new.tar", "file", "l1", "l2"]) expect(() => checkOutputTarget(join(dir, p))).not.toThrow();
  });

  test("devices, directories, /proc and links into it, dangling links and loops are refused", () => {
    mkdirSync(join(dir, "sub"));
    symlinkSync("/proc/self/fd/1", join(dir, "fd1"));
    symlinkSync("/dev/stdout", join(dir, "via-dev"));
    symlinkSync("/dev/null", join(dir, "null"));
    symlinkSync(join(dir, "missing", "x"), join(dir, "dangling"));
    symlinkSync("loop-b", join(dir, "loop-a"));
    symlinkSync("loop-a", join(dir, "loop-b"));
    refused("/dev/null", /character device/);
    refused(join(dir, "sub"), /directory/);
    refused("/dev/stdout", /pseudo filesystem/);
    refused("/proc/self/fd/1", /pseudo filesystem/);
    refused("/proc/self/new-file", /pseudo filesystem/);
    refused(join(dir, "fd1"), /pseudo filesystem/);
    refused(join(dir, "via-dev"), /pseudo filesystem/);
    refused(join(dir, "null"), /character device/);
    refused(join(dir, "dangling"), /does not exist/);
    refused(join(dir, "loop-a"), /loop/);
  });
});
