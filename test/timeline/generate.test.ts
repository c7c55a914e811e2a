/**
 * renderTimeline with its rows read while worker threads verify the
 * journal (drawn while verified: more than one thread, a journal split
 * for them) against the reference pass (every row parsed whole, after the
 * verify): the same page and result, byte for byte; the same refusal,
 * with nothing written; a writer appending between the two snapshots
 * gets the page of the verified bytes; a reader going away stops it.
 * BERNSTEIN_FAST_VERIFY_MIN_RANGE=1 splits these small journals for
 * workers, as a big journal is split.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateJournal, SHAPES } from "../../bench/journal-gen.ts";
import { readMetadata } from "../../src/journal/metadata.ts";
import { renderTimeline, type TimelineInput } from "../../src/timeline/generate.ts";
import { EventJournal } from "../../src/journal/writer.ts";
import { HOSTILE_LINES } from "../replay/hostile-rows.ts";

const KNOB = "BERNSTEIN_FAST_VERIFY_MIN_RANGE";
const before = process.env[KNOB];
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bern-timeline-generate-"));
  process.env[KNOB] = "1";
});
afterAll(() => {
  if (before === undefined) delete process.env[KNOB];
  else process.env[KNOB] = before;
  rmSync(dir, { recursive: true, force: true });
});

/** The page (or the refusal) a pass writes, and whether the rows were read while the journal was verified. */
async function draw(journal: string, runDir: string, o: Partial<TimelineInput> = {}, reader = () => true): Promise<{ text: string; whileVerified: boolean }> {
  let out = "";
  // the page is a stream of bytes: a character may straddle two chunks (a spool is read back in pieces)
  const text = new TextDecoder();
  let whileVerified = false;
  try {
    const r = await renderTimeline(
      {
        runId: "r1",
        journal,
        metadata: readMetadata(runDir),
        seal: null,
        sealPath: null,
        threads: 2,
        ...o,
        onPageSnapshot: (n) => {
          whileVerified = true;
          o.onPageSnapshot?.(n);
        },
      },
      (chunk) => {
        out += typeof chunk === "string" ? chunk : text.decode(chunk, { stream: true });
        return reader();
      },
    );
    const { verdict, durationMs: _, ...rest } = r;
    return { text: `${out}\n--\n${JSON.stringify({ ...rest, verdict: { ...verdict, threads: undefined, bytes_read: undefined } })}`, whileVerified };
  } catch (err) {
    return { text: `${out}\n--\nrefused: ${(err as Error).message}`, whileVerified };
  }
}

function same(a: string, b: string): void {
  // compared as booleans first: a diff of megabytes is not a useful failure message
  if (a !== b) {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    expect(a.slice(Math.max(0, i - 200), i + 200)).toBe(b.slice(Math.max(0, i - 200), i + 200));
  }
  expect(a === b).toBe(true);
}

function run(name: string): { sdd: string; runDir: string } {
  const sdd = join(dir, name);
  return { sdd, runDir: join(sdd, "runs", "r1") };
}

describe("a page drawn while the journal is verified is the page drawn after it", () => {
  for (const shape of SHAPES) {
    for (const hostile of [false, true]) {
      test(`${shape} journal${hostile ? " with hostile lines appended (a chain that does not verify)" : ""}`, async () => {
        const { sdd, runDir } = run(`${shape}-${hostile}`);
        const { path } = generateJournal(sdd, "r1", shape === "large-rows" ? 3e6 : 2e6, 13, shape);
        if (hostile) appendFileSync(path, HOSTILE_LINES.join("\n") + "\n");
        const drawn = await draw(path, runDir);
        expect(drawn.whileVerified).toBe(true);
        same(drawn.text, (await draw(path, runDir, { exactPass: true })).text);
      }, 60_000);
    }
  }

  test("a journal with no row is refused before the page's first byte", async () => {
    const { runDir } = run("no-row");
    mkdirSync(runDir, { recursive: true });
    const path = join(runDir, "journal.jsonl");
    writeFileSync(path, "not a row\n".repeat(5000));
    const drawn = await draw(path, runDir);
    expect(drawn.whileVerified).toBe(true);
    expect(drawn.text).toStartWith("\n--\nrefused: ");
    expect(drawn.text).toBe((await draw(path, runDir, { exactPass: true })).text);
  });

  test("a writer appending between the two snapshots: the page of the bytes the verify read", async () => {
    const { sdd, runDir } = run("appended");
    const { path } = generateJournal(sdd, "r1", 2e6, 17, "mixed");
    const drawn = await draw(path, runDir, { onPageSnapshot: () => appendFileSync(path, `${HOSTILE_LINES[0]}\n`) });
    expect(drawn.whileVerified).toBe(true);
    // the appended row is on the page: the reference, drawn after the append, shows it too
    same(drawn.text, (await draw(path, runDir, { exactPass: true })).text);
    expect(drawn.text).toContain('"events":');
  }, 60_000);

  test("a journal cut or removed between the two snapshots: the page (or the refusal) of what the verify read", async () => {
    for (const [name, change] of [
      ["cut", (path: string) => truncateSync(path, readFileSync(path).lastIndexOf(10, statSync(path).size / 2) + 1)],
      ["removed", (path: string) => rmSync(path)],
    ] as const) {
      const { sdd, runDir } = run(`changed-${name}`);
      const { path } = generateJournal(sdd, "r1", 2e6, 23, "bench");
      const drawn = await draw(path, runDir, { onPageSnapshot: () => change(path) });
      expect(drawn.whileVerified).toBe(true);
      same(drawn.text, (await draw(path, runDir, { exactPass: true })).text);
      // (a journal gone is an empty chain to the library; the command refuses one that is missing before it starts)
      if (name === "removed") expect(drawn.text).toContain('"events":0,');
    }
  }, 60_000);

  test("a reader that goes away: the pass stops, and what went out is the page's beginning", async () => {
    const { sdd, runDir } = run("reader-gone");
    const { path } = generateJournal(sdd, "r1", 2e6, 19, "bench");
    const whole = (await draw(path, runDir, { exactPass: true })).text;
    let chunks = 3;
    const drawn = await draw(path, runDir, {}, () => --chunks > 0);
    const [page, result] = drawn.text.split("\n--\n");
    expect(JSON.parse(result!).stopped).toBe(true);
    expect(page!.length).toBeGreaterThan(0);
    expect(whole.startsWith(page!)).toBe(true);
  }, 60_000);
});

describe("rows too long for the page's kernel: the exact path, their long strings kept as bytes", () => {
  // A row over LONG_LINE_MAX takes the exact path; its strings of a megabyte or more stay bytes, the
  // payload is made from them in pieces and cut at PAYLOAD_CHARS (appendRowPayload). `shift` moves the
  // cut across the surrogate pairs of the string: in one of the three the cut leaves a high surrogate
  // alone, as `slice` does. Fields the page reads (agent_id, reason) are long strings too.
  for (const shift of [0, 1, 2]) {
    test(`a payload cut ${shift} code units further along`, async () => {
      const { sdd, runDir } = run(`huge-${shift}`);
      const j = EventJournal.create("r1", { sddDir: sdd });
      j.record("run_started", { goal: "huge" });
      j.record("task_claimed", { task_id: "t1", agent_id: "a1", role: "backend" });
      j.record("tool_result", { task_id: "t1", agent_id: "a1", output: "x".repeat(shift) + "😀x".repeat(400_000), nested: [1.5, { k: "é".repeat(200_000) }] });
      j.record("task_failed", { task_id: "t1", agent_id: `a-${"é".repeat(400_000)}`, reason: "r😀".repeat(300_000) });
      j.record("run_completed", {});
      j.close();
      const path = join(runDir, "journal.jsonl");
      expect(Math.max(...readFileSync(path, "latin1").split("\n").map((l) => l.length))).toBeGreaterThan(2 << 20);
      const drawn = await draw(path, runDir);
      expect(drawn.text).toContain("characters as recorded");
      same(drawn.text, (await draw(path, runDir, { exactPass: true })).text);
    }, 60_000);
  }
});
