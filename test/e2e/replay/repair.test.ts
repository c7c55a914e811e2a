import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { RUN_VECTORS, makeSdd, type SddTree } from "./fixture.ts";

const expectOf = (name: string) => JSON.parse(readFileSync(join(RUN_VECTORS, `${name}.expect.json`), "utf8"));

describe("replay repair <RUN_ID> (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd({
      torn: "hazards-torn-tail",
      torn2: "hazards-torn-tail",
      torn3: "hazards-torn-tail",
      middle: "hazards-junk-line-middle",
      clean: "hazards",
    });
  });
  afterAll(() => t.cleanup());

  test("truncates only the torn tail: the survivors are a byte-exact prefix, and verify is clean afterwards", async () => {
    const before = readFileSync(t.journal("torn"));
    const want = expectOf("hazards-torn-tail");
    const r = await bernsteinJson(["replay", "repair", "torn"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      ok: true,
      run_id: "torn",
      journal: t.journal("torn"),
      repaired: true,
      removed_line_indices: [299],
      event_count: 299,
      head: want.head,
      saved_fragment: expect.stringMatching(/journal\.jsonl\.torn-\d+$/),
      removed_bytes: expect.any(Number),
    });
    const after = readFileSync(t.journal("torn"));
    expect(after.length).toBeLessThan(before.length);
    expect(readFileSync(r.json.saved_fragment as string)).toEqual(before.subarray(after.length));
    expect(Buffer.compare(after, before.subarray(0, after.length))).toBe(0);
    const v = await bernsteinJson(["replay", "torn", "--verify"], { cwd: t.cwd });
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true, count: 299, head: want.head });
    // A second repair has nothing to do.
    const again = await bernstein(["replay", "repair", "torn"], { cwd: t.cwd });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`Nothing to repair: journal tail is intact.\nhead=${want.head} events=299\n`);
  });

  test("prose for a repair", async () => {
    const r = await bernstein(["replay", "repair", "torn2"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `Repaired: truncated torn tail (physical line(s): 299).\nhead=${expectOf("hazards-torn-tail").head} events=299\njournal now resumable: bernstein replay torn2\n` +
        r.stdout.split("\n").slice(3).join("\n"),
    );
    expect(r.stdout).toMatch(/^removed fragment \(\d+ bytes\) saved to .*journal\.jsonl\.torn-\d+$/m);
  });

  test("middle corruption is refused (exit 2) without touching the file", async () => {
    const before = readFileSync(t.journal("middle"));
    const r = await bernsteinJson(["replay", "repair", "middle"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ ok: false, error: "repair_refused" });
    expect(r.json.detail).toContain("corruption");
    const prose = await bernstein(["replay", "repair", "middle"], { cwd: t.cwd });
    expect(prose.code).toBe(2);
    expect(prose.stderr).toContain("Repair refused");
    expect(Buffer.compare(readFileSync(t.journal("middle")), before)).toBe(0);
  });

  test("a seal the survivors do not match refuses the repair before any write", async () => {
    const before = readFileSync(t.journal("torn3"));
    writeFileSync(join(t.runDir("torn3"), "seal.json"), JSON.stringify({ event_count: 300, head: expectOf("hazards").head }));
    const r = await bernsteinJson(["replay", "repair", "torn3"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("repair_refused");
    expect(r.json.detail).toContain("seal");
    expect(Buffer.compare(readFileSync(t.journal("torn3")), before)).toBe(0);
    // With a seal that commits to the surviving prefix the repair goes ahead.
    writeFileSync(join(t.runDir("torn3"), "seal.json"), JSON.stringify({ event_count: 299, head: expectOf("hazards-torn-tail").head }));
    const ok = await bernsteinJson(["replay", "repair", "torn3"], { cwd: t.cwd });
    expect(ok.code).toBe(0);
    expect(ok.json.repaired).toBe(true);
  });

  test("a clean journal is a no-op", async () => {
    const before = readFileSync(t.journal("clean"));
    const r = await bernsteinJson(["replay", "repair", "clean"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ repaired: false, removed_line_indices: [], event_count: 300, head: expectOf("hazards").head });
    expect(Buffer.compare(readFileSync(t.journal("clean")), before)).toBe(0);
  });

  test("usage, missing runs and invalid ids", async () => {
    let r = await bernsteinJson(["replay", "repair"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("usage");
    r = await bernsteinJson(["replay", "repair", "a", "b"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    r = await bernsteinJson(["replay", "repair", "nope"], { cwd: t.cwd });
    expect(r.code).toBe(3);
    expect(r.json.error).toBe("run_not_found");
    r = await bernsteinJson(["replay", "repair", "../../etc"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("invalid_run_id");
    r = await bernsteinJson(["replay", "repair", "clean", "--limit", "2"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("flag_not_applicable");
  });
});
