import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { changedFiles, snapshotWorkdir } from "../../src/orchestrator/changes.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tree(): string {
  const d = mkdtempSync(join(tmpdir(), "bern-changes-"));
  dirs.push(d);
  mkdirSync(join(d, ".sdd"));
  writeFileSync(join(d, "keep.txt"), "keep\n");
  writeFileSync(join(d, "edit.txt"), "a\n");
  writeFileSync(join(d, "gone.txt"), "x\n");
  return d;
}
const git = (cwd: string, ...args: string[]) =>
  expect(Bun.spawnSync(["git", ...args], { cwd, stdout: "ignore", stderr: "ignore", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } }).exitCode).toBe(0);

function act(d: string): void {
  writeFileSync(join(d, "edit.txt"), "a\nbb\n");
  unlinkSync(join(d, "gone.txt"));
  mkdirSync(join(d, "new"));
  writeFileSync(join(d, "new", "file.txt"), "n\n");
  writeFileSync(join(d, ".sdd", "state.json"), "{}");
}

describe("changedFiles", () => {
  test("plain directory: written, edited and deleted files; .sdd and untouched files are not listed", () => {
    const d = tree();
    const before = snapshotWorkdir(d);
    act(d);
    expect(changedFiles(before, snapshotWorkdir(d), d)).toEqual(["edit.txt", "gone.txt", "new/file.txt"]);
  });

  test("git work tree: the same, and a file dirty before but left alone is not listed; a dirty file edited again is", () => {
    const d = tree();
    writeFileSync(join(d, "dirty.txt"), "1\n");
    writeFileSync(join(d, "again.txt"), "1\n");
    git(d, "init", "-q");
    git(d, "add", "-A", "--", ".", ":!.sdd");
    git(d, "commit", "-qm", "base");
    writeFileSync(join(d, "dirty.txt"), "2\n");
    writeFileSync(join(d, "again.txt"), "2\n");
    utimesSync(join(d, "again.txt"), 1_000_000, 1_000_000);
    const before = snapshotWorkdir(d);
    act(d);
    writeFileSync(join(d, "again.txt"), "3\n");
    expect(changedFiles(before, snapshotWorkdir(d), d)).toEqual(["again.txt", "edit.txt", "gone.txt", "new/file.txt"]);
  });
});
