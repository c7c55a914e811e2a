import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureStateDir, STATE_GITIGNORE } from "../../src/fsutil/state-dir.ts";

const root = mkdtempSync(join(tmpdir(), "bern-state-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("ensureStateDir", () => {
  test("a state directory made here gets .gitignore '*' (0644), and nothing else beside it", () => {
    const sdd = join(root, "a", "deep", ".sdd");
    ensureStateDir(sdd);
    expect(readFileSync(join(sdd, ".gitignore"), "utf8")).toBe(STATE_GITIGNORE);
    expect(STATE_GITIGNORE).toBe("*\n");
    expect(statSync(join(sdd, ".gitignore")).mode & 0o777).toBe(0o644);
    expect(readdirSync(sdd)).toEqual([".gitignore"]);
  });

  test("a directory that exists is left as it is: no .gitignore added, an existing one kept byte-identical", () => {
    const bare = join(root, "bare");
    mkdirSync(bare);
    ensureStateDir(bare);
    expect(existsSync(join(bare, ".gitignore"))).toBe(false);

    const mine = join(root, "mine");
    mkdirSync(mine);
    writeFileSync(join(mine, ".gitignore"), "runs/\n");
    ensureStateDir(mine);
    expect(readFileSync(join(mine, ".gitignore"), "utf8")).toBe("runs/\n");
  });

  test("the second call changes nothing", () => {
    const sdd = join(root, "twice");
    ensureStateDir(sdd);
    writeFileSync(join(sdd, ".gitignore"), "edited\n");
    ensureStateDir(sdd);
    expect(readFileSync(join(sdd, ".gitignore"), "utf8")).toBe("edited\n");
  });
});
