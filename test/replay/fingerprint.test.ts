import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readJournal } from "../../src/journal/reader.ts";
import { ReplayFingerprint } from "../../src/replay/fingerprint.ts";
import { VECTORS } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";

const DIR = join(VECTORS, "run-journal");

// The Python recipe (compute_replay_fingerprint): per non-blank line that
// parses to an object, json.dumps(row minus ts/elapsed_s, sort_keys=True,
// separators=(",", ":"), default=str) + "\n"; lines Python cannot decode are skipped.
const PY = `
import hashlib, json, sys
out = {}
for path in json.load(sys.stdin):
    h = hashlib.sha256()
    with open(path, encoding="utf-8", errors="surrogateescape", newline=None) as f:
        for line in f:
            line = line.strip()
            if not line or any(0xdc80 <= ord(c) <= 0xdcff for c in line if ord(c) >= 0xdc80):
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if not isinstance(row, dict):
                continue
            row = {k: v for k, v in row.items() if k not in ("ts", "elapsed_s")}
            h.update((json.dumps(row, sort_keys=True, separators=(",", ":"), default=str) + "\\n").encode())
    out[path] = h.hexdigest()
print(json.dumps(out))
`;

describe("replay display fingerprint", () => {
  test("equals Python's timing-excluded fingerprint for every run-journal vector", async () => {
    const files = readdirSync(DIR)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(DIR, f));
    const want = runPython(PY, files) as Record<string, string>;
    // Not vacuous: the reference hashed rows (the empty input hashes to e3b0c442…).
    expect(Object.values(want)).not.toContain("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    // Vectors whose edits leave the usable rows unchanged (blank lines, CRLF, a junk line) share it; edits of rows do not.
    expect(want[join(DIR, "hazards-blank-lines.jsonl")]).toBe(want[join(DIR, "hazards.jsonl")]!);
    expect(want[join(DIR, "hazards-payload-edit.jsonl")]).not.toBe(want[join(DIR, "hazards.jsonl")]!);

    for (const f of files) {
      const fp = new ReplayFingerprint();
      for await (const item of readJournal(f)) if (item.kind === "row") fp.update(item.row);
      expect(`${f} ${fp.digest()}`).toBe(`${f} ${want[f]}`);
    }
  });

  test("clock fields do not change it; chain fields do", async () => {
    const { parse } = await import("../../src/pyjson/parse.ts");
    const a = new ReplayFingerprint();
    a.update(parse('{"ts": 1.5, "elapsed_s": 0.1, "index": 0, "event": "x"}') as Map<string, any>);
    const b = new ReplayFingerprint();
    b.update(parse('{"ts": 99.0, "elapsed_s": 7, "index": 0, "event": "x"}') as Map<string, any>);
    const c = new ReplayFingerprint();
    c.update(parse('{"ts": 1.5, "elapsed_s": 0.1, "index": 1, "event": "x"}') as Map<string, any>);
    expect(a.digest()).toBe(b.digest());
    expect(a.digest()).not.toBe(c.digest());
  });
});
