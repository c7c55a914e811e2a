/**
 * Issue 16 item 4 through the compiled binary: `replay repair` removes at
 * most one unterminated final line (saved beside the journal); every other
 * shape, and a hard-linked journal, is repair_refused (exit 2) with the
 * file untouched. Step journals follow the same policy (the battery in
 * tools/fuzz/writers.ts runs both).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { linkSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostileTailChecks } from "../../../tools/fuzz/writers.ts";
import { Rng } from "../../../tools/fuzz/rng.ts";
import { StepJournal } from "../../../src/steps/writer.ts";
import { bernsteinJson, binPath } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("e2e-repair-policy");
afterAll(() => dirs.cleanup());

async function journalOf(events: number): Promise<{ cwd: string; path: string; good: Buffer }> {
  const cwd = dirs.make();
  const input = Array.from({ length: events }, (_, i) => JSON.stringify({ event: "tick", i, s: "é" }) + "\n").join("");
  const p = Bun.spawn([binPath(), "journal", "record", "r"], { cwd, stdin: new Blob([input]), stdout: "ignore", stderr: "ignore" });
  expect(await p.exited).toBe(0);
  const path = join(cwd, ".sdd", "runs", "r", "journal.jsonl");
  return { cwd, path, good: readFileSync(path) };
}

describe("replay repair: one torn-tail policy", () => {
  test("a UTF-16 re-encoded journal (PowerShell `>`) is refused, not emptied", async () => {
    const { cwd, path, good } = await journalOf(2000);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(good.toString("utf8"), "utf16le")]);
    writeFileSync(path, utf16);
    const r = await bernsteinJson(["replay", "repair", "r"], { cwd });
    expect([r.code, r.json.error]).toEqual([2, "repair_refused"]);
    expect(readFileSync(path).equals(utf16)).toBe(true);
  });

  test("5,000 complete trailing garbage lines are refused untouched", async () => {
    const { cwd, path, good } = await journalOf(20);
    const bytes = Buffer.concat([good, Buffer.from("garbage\n".repeat(5000))]);
    writeFileSync(path, bytes);
    const r = await bernsteinJson(["replay", "repair", "r"], { cwd });
    expect([r.code, r.json.error]).toEqual([2, "repair_refused"]);
    expect(r.json.detail).toContain("5000 trailing physical lines");
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  test("a journal hard-linked to a file outside .sdd is refused; neither name changes", async () => {
    const { cwd, path, good } = await journalOf(20);
    const bytes = Buffer.concat([good, Buffer.from('{"ts": 17')]);
    writeFileSync(path, bytes);
    const outside = join(cwd, "precious.jsonl");
    linkSync(path, outside);
    const r = await bernsteinJson(["replay", "repair", "r"], { cwd });
    expect([r.code, r.json.error, r.json.links]).toEqual([2, "repair_refused", 2]);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(readFileSync(outside).equals(bytes)).toBe(true);
  });

  test("one unterminated final line is cut, saved beside the journal (0600), and the chain resumes", async () => {
    const { cwd, path, good } = await journalOf(20);
    writeFileSync(path, Buffer.concat([good, Buffer.from('{"ts": 17, "elaps')]));
    const r = await bernsteinJson(["replay", "repair", "r"], { cwd });
    expect([r.code, r.json.repaired, r.json.event_count, r.json.removed_bytes]).toEqual([0, true, 20, 17]);
    expect(readFileSync(path).equals(good)).toBe(true);
    expect(readFileSync(r.json.saved_fragment, "utf8")).toBe('{"ts": 17, "elaps');
    expect(statSync(r.json.saved_fragment).mode & 0o777).toBe(0o600);
    const rec = await bernsteinJson(["journal", "record", "r", "after"], { cwd });
    expect([rec.code, rec.json.count]).toEqual([0, 21]);
  });

  test("a step journal's recovery uses the same policy: one torn line saved, anything more refused untouched", () => {
    const sdd = join(dirs.make(), ".sdd");
    const j = StepJournal.open(sdd, "a");
    for (let i = 0; i < 3; i++) j.append({ input_hash: `h${i}` });
    j.close();
    const bucket = join(sdd, "runtime", "journal", "a", "000000.jsonl");
    const good = readFileSync(bucket);
    const bad = Buffer.concat([good, Buffer.from("junk\n".repeat(10))]);
    writeFileSync(bucket, bad);
    expect(() => StepJournal.open(sdd, "a")).toThrow(expect.objectContaining({ code: "repair_refused", exitCode: 2 }));
    expect(readFileSync(bucket).equals(bad)).toBe(true);
    writeFileSync(bucket, Buffer.concat([good, Buffer.from('{"seq":3,"pre')]));
    StepJournal.open(sdd, "a").close();
    expect(readFileSync(bucket).equals(good)).toBe(true);
    const saved = readdirSync(join(bucket, "..")).filter((n) => n.startsWith("000000.jsonl.torn-"));
    expect(saved).toHaveLength(1);
    expect(statSync(join(bucket, "..", saved[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(bucket).mode & 0o777).toBe(0o600);
    expect(statSync(join(bucket, "..")).mode & 0o777).toBe(0o700);
  });

  test("the hostile-tail battery (every shape, run and step journals)", async () => {
    const work = dirs.make();
    mkdirSync(work, { recursive: true });
    expect(await hostileTailChecks(binPath(), work, new Rng(4))).toBeGreaterThanOrEqual(20);
  }, 30_000);
});
