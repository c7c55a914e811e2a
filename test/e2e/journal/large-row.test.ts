/**
 * A row over the old 16 MiB limit (a Python run that journaled a 20 MB tool
 * result): `journal verify` takes rows up to 256 MiB by default and gives
 * the Python reference's verdict; `--max-row-bytes` lowers the limit, and a
 * longer line is `row_too_large` naming its line; a bad size is a usage error.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson, ROOT } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("bigrow30");
afterAll(() => dirs.cleanup());

function bigRowJournal(bytes: number): string {
  const dir = dirs.make();
  const path = join(dir, "runs", "big", "journal.jsonl");
  const r = Bun.spawnSync(["python3", join(ROOT, "test", "fixtures", "big-row", "write_big_row.py"), String(bytes), path]);
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return path;
}

function reference(path: string): { ok: boolean; count: number; head: string } {
  const r = Bun.spawnSync(["python3", join(ROOT, "test", "reference", "verify_journal.py"), path]);
  return JSON.parse(r.stdout.toString());
}

describe("rows over 16 MiB", () => {
  test(
    "a 20 MB row verifies by default with the Python reference's verdict, threaded or not; a tampered one is caught",
    async () => {
      const path = bigRowJournal(20e6);
      const lines = readFileSync(path, "utf8").split("\n");
      expect(Buffer.byteLength(lines[1]!)).toBeGreaterThan(16 * 1024 * 1024);
      const ref = reference(path);
      expect(ref.ok).toBe(true);
      for (const threads of ["1", "2"]) {
        const r = await bernsteinJson(["journal", "verify", path, "--threads", threads]);
        expect([r.code, r.json.ok, r.json.event_count ?? r.json.count, r.json.head]).toEqual([0, true, ref.count, ref.head]);
      }
      // one character of the big row changed: the chain breaks at that row
      writeFileSync(path, [lines[0], lines[1]!.replace("break", "brake"), ...lines.slice(2)].join("\n"));
      expect(reference(path).ok).toBe(false);
      const bad = await bernsteinJson(["journal", "verify", path]);
      expect([bad.code, bad.json.ok, bad.json.divergent_index]).toEqual([1, false, 1]);
    },
    120_000,
  );

  test("--max-row-bytes: a line over the limit is row_too_large naming it; a bad size is a usage error", async () => {
    const path = bigRowJournal(3e6);
    const r = await bernsteinJson(["journal", "verify", path, "--max-row-bytes", "1M"]);
    expect([r.code, r.json.ok, r.json.error]).toEqual([3, false, "row_too_large"]);
    expect(r.json.detail).toContain("line 2");
    expect((await bernsteinJson(["journal", "verify", path, "--max-row-bytes", "4M"])).code).toBe(0);
    for (const bad of ["0", "12", "1T", "-1", "lots"]) {
      const u = await bernsteinJson(["journal", "verify", path, "--max-row-bytes", bad]);
      expect([bad, u.code, u.json.error]).toEqual([bad, 2, "invalid_row_limit"]);
    }
    const prose = await bernstein(["journal", "verify", path, "--max-row-bytes", "1M"]);
    expect(prose.code).toBe(3);
    expect(prose.stderr).toContain("row limit");
  });

  test(
    "replay repair cuts a torn tail after a 20 MB row (it reads rows up to the limit the writer writes them)",
    async () => {
      const path = bigRowJournal(20e6);
      const sdd = join(path, "..", "..", "..");
      const whole = readFileSync(path);
      const torn = Buffer.concat([whole, Buffer.from('{"ts": 1727000003.5, "index": 3, "event": "tor')]);
      writeFileSync(path, torn);
      const r = await bernsteinJson(["replay", "repair", "big", "--sdd-dir", sdd]);
      expect([r.code, r.json.ok, r.json.repaired, r.json.removed_line_indices, r.json.event_count]).toEqual([0, true, true, [3], 3]);
      expect(readFileSync(path).equals(whole)).toBe(true);
      expect(r.json.head).toBe(reference(path).head);
    },
    120_000,
  );
});
