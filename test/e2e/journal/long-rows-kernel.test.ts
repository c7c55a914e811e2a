/**
 * A journal of ~1 MB rows (longer than verify's 256 KiB read area) through
 * the compiled binary: the WebAssembly kernel takes those rows too
 * (BERNSTEIN_VERIFY_STATS), and the verdict is the Python reference's,
 * clean and tampered (a payload byte, the event hash, the prev link, the
 * stored index, a re-chained row), on one thread and two, the JSON
 * byte-identical between them; a proof's root and audit path are those
 * of the rows' event hashes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateJournal } from "../../../bench/journal-gen.ts";
import { eventHash } from "../../../src/journal/hash.ts";
import { leafHash, TreeBuilder, verifyInclusion } from "../../../src/tlog/merkle.ts";
import { bernstein, bernsteinJson, ROOT } from "../../helpers/cli.ts";
import { referenceVerdicts, tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("e2e-long-rows");
afterAll(() => dirs.cleanup());

function stats(stderr: string): number[] {
  const m = /verify stats: rows by kernel (\d+), exact (\d+); threads (\d+)/.exec(stderr);
  if (!m) throw new Error(`no stats line in: ${stderr}`);
  return m.slice(1).map(Number);
}

const STATS = { BERNSTEIN_VERIFY_STATS: "1" };
/** Two threads even on a few MB (a tuning knob: it never changes a verdict). */
const TWO = { ...STATS, BERNSTEIN_FAST_VERIFY_MIN_RANGE: String(1 << 20) };

describe("journal verify on ~1 MB rows (compiled binary)", () => {
  test("clean and tampered: the Python reference's verdict, threads 1 and 2 identical, the long rows taken by the kernel", async () => {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "lr", 6_000_000, 3, "large-rows");
    const lines = readFileSync(gen.path, "utf8").split("\n").filter(Boolean);
    expect(lines.slice(1).every((l) => Buffer.byteLength(l) > 1 << 19)).toBe(true);
    expect(lines.length).toBeGreaterThanOrEqual(5);
    const k = 3;
    const row = lines[k]!;
    const o = JSON.parse(row) as { event: string; prev_hash: string; payload_hash: string; event_hash: string };
    const flip = (h: string) => h.slice(0, 20) + (h[20] === "0" ? "1" : "0") + h.slice(21);
    const foreign = "ab".repeat(32);
    const mid = row.indexOf(" ", row.length >> 1);
    const variants: [string, string[]][] = [
      ["payload byte", lines.map((l, i) => (i === k ? row.slice(0, mid) + "_" + row.slice(mid + 1) : l))],
      ["event_hash", lines.map((l, i) => (i === k ? row.replace(o.event_hash, flip(o.event_hash)) : l))],
      ["prev link", lines.map((l, i) => (i === k ? row.replace(`"prev_hash": "${o.prev_hash}"`, `"prev_hash": "${flip(o.prev_hash)}"`) : l))],
      ["stored index", lines.map((l, i) => (i === k ? row.replace(`"index": ${k},`, `"index": ${k + 7},`) : l))],
      ["re-chained", lines.map((l, i) => (i === k ? row.replace(`"prev_hash": "${o.prev_hash}"`, `"prev_hash": "${foreign}"`).replace(o.event_hash, eventHash(foreign, o.event, o.payload_hash, k)) : l))],
    ];
    const files = [gen.path];
    for (const [name, ls] of variants) {
      const p = join(dir, `${name.replace(" ", "-")}.jsonl`);
      writeFileSync(p, ls.join("\n") + "\n");
      files.push(p);
    }
    const python = referenceVerdicts(files);
    for (const [i, file] of files.entries()) {
      const want = python[i]!;
      const one = await bernsteinJson(["journal", "verify", file, "--threads", "1"], { env: STATS });
      const two = await bernsteinJson(["journal", "verify", file, "--threads", "2"], { env: TWO });
      expect([file, one.code]).toEqual([file, want.ok ? 0 : 1]);
      for (const key of Object.keys(want)) expect([file, key, one.json[key]]).toEqual([file, key, want[key]]);
      // byte-identical JSON, whichever thread took which row
      expect(two.stdout).toBe(one.stdout);
      const [kernel1, exact1, threads1] = stats(one.stderr);
      const [kernel2, exact2, threads2] = stats(two.stderr);
      expect([threads1, threads2]).toEqual([1, 2]);
      if (i === 0) {
        // every row but the genesis row (its prev_hash is empty) by the kernel: on one thread and on two
        expect([kernel1, exact1]).toEqual([lines.length - 1, 1]);
        expect([kernel2, exact2]).toEqual([lines.length - 1, 1]);
      } else {
        // the rows before the tampered one at least
        expect([file, kernel1 >= k - 1]).toEqual([file, true]);
      }
    }
    expect(python.slice(1).map((v) => v.divergent_index)).toEqual([k, k, k, null, k]);

    // links-only: the kernel checks the long rows' links
    const links = await bernsteinJson(["journal", "verify", gen.path, "--links-only"], { env: STATS });
    expect([links.code, stats(links.stderr).slice(0, 2)]).toEqual([0, [lines.length - 1, 1]]);
  }, 120_000);

  test("standard input: rows of 3 MB (on the kernel, never read back further than the stream keeps) and of 9 MB (over the kernel's 8 MiB: the exact path)", async () => {
    const dir = dirs.make();
    for (const mb of [3, 9]) {
      const path = join(dir, `big${mb}`, "runs", "big", "journal.jsonl");
      const w = Bun.spawnSync(["python3", join(ROOT, "test", "fixtures", "big-row", "write_big_row.py"), String(mb * 1e6), path]);
      expect(w.exitCode).toBe(0);
      const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
      const k = 1;
      const tampered = join(dir, `big${mb}-tampered.jsonl`);
      writeFileSync(tampered, [lines[0], lines[k]!.replace("break", "brake"), ...lines.slice(2)].join("\n") + "\n");
      const python = referenceVerdicts([path, tampered]);
      expect(python.map((v) => v.ok)).toEqual([true, false]);
      for (const [i, file] of [path, tampered].entries()) {
        const fromFile = await bernsteinJson(["journal", "verify", file], { env: STATS });
        const fromStdin = await bernsteinJson(["journal", "verify", "-"], { env: STATS, stdin: readFileSync(file) });
        for (const r of [fromFile, fromStdin]) {
          expect([mb, i, r.code, r.json.error]).toEqual([mb, i, python[i]!.ok ? 0 : 1, python[i]!.ok ? undefined : "chain_broken"]);
          for (const key of ["ok", "count", "head", "divergent_index", "expected_hash", "actual_hash"]) {
            expect([mb, i, key, r.json[key]]).toEqual([mb, i, key, python[i]![key]]);
          }
        }
        // intact: the 3 MB row on the kernel, the 9 MB one exactly (both ways in), the run_completed row after it on the kernel;
        // tampered: the big row fails on the exact path, the row after it is only counted
        const want = i === 1 ? [0, 2] : mb === 3 ? [2, 1] : [1, 2];
        expect([mb, i, stats(fromFile.stderr).slice(0, 2)]).toEqual([mb, i, want]);
        expect([mb, i, stats(fromStdin.stderr).slice(0, 2)]).toEqual([mb, i, want]);
      }
    }
  }, 120_000);

  test("journal prove over ~1 MB rows: the root and audit path of the rows' event hashes, and the row's line itself", async () => {
    const dir = dirs.make();
    const sdd = join(dir, "sdd");
    const gen = generateJournal(sdd, "lr", 4_000_000, 5, "large-rows");
    const lines = readFileSync(gen.path, "utf8").split("\n").filter(Boolean);
    const leaves = lines.map((l) => leafHash(Buffer.from((JSON.parse(l) as { event_hash: string }).event_hash, "hex")));
    const tree = new TreeBuilder();
    for (const l of leaves) tree.addLeafHash(l);
    const root = Buffer.from(tree.root()).toString("base64");
    for (const index of [0, 2, lines.length - 1]) {
      const r = await bernsteinJson(["journal", "prove", "lr", "--index", String(index), "--sdd-dir", sdd]);
      expect([index, r.code, r.json.root, r.json.size]).toEqual([index, 0, root, lines.length]);
      const proof = (r.json.hashes as string[]).map((h) => new Uint8Array(Buffer.from(h, "base64")));
      expect(verifyInclusion(index, lines.length, leaves[index]!, proof, tree.root())).toBe(true);
      expect(r.json.row).toBe(lines[index]!);
    }
    // and the prose form runs too
    expect((await bernstein(["journal", "prove", "lr", "--index", "1", "--sdd-dir", sdd])).code).toBe(0);
  }, 120_000);
});
