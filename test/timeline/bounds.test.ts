import { describe, expect, test } from "bun:test";
import { clipText, pagePaths } from "../../src/timeline/bounds.ts";

describe("clipText", () => {
  test("short text as is; long text cut and marked, never inside a surrogate pair", () => {
    expect(clipText("abc", 3)).toBe("abc");
    expect(clipText("abcd", 3)).toBe("abc…");
    expect(clipText("ab\u{1F600}cd", 3)).toBe("ab…");
  });
});

describe("pagePaths", () => {
  test("known paths by their names (the longest first), any other absolute path as …/its last part", () => {
    const shown = pagePaths({ "/home/u/p/.sdd/runs/r1": "<run_dir>", "/home/u/p/.sdd/runs/r1/journal.jsonl": "<run_dir>/journal.jsonl", "/": "root" });
    expect(shown("chain broken in /home/u/p/.sdd/runs/r1/journal.jsonl at row 3")).toBe("chain broken in <run_dir>/journal.jsonl at row 3");
    expect(shown("seal (/home/u/p/.sdd/runs/r1/seal.json) differs")).toBe("seal (<run_dir>/seal.json) differs");
    expect(shown("seal /srv/keep/seal.json differs; C:\\Users\\me\\seal.json too")).toBe("seal …/seal.json differs; …/seal.json too");
    // Not paths: ratios, hashes, relative names.
    expect(shown("2/3 rows, sha256/abc, runs/r1/journal.jsonl")).toBe("2/3 rows, sha256/abc, runs/r1/journal.jsonl");
  });
});
