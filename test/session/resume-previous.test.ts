/** session/resume.ts: naming the run and session a resumed run continues. */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventJournal } from "../../src/journal/index.ts";
import { previousRunId, sessionId } from "../../src/session/resume.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

describe("previousRunId", () => {
  test("the run that started last; null without runs; the runs folder is left as it was", () => {
    const dir = mkdtempSync(join(tmpdir(), "bern-prev-"));
    made.push(dir);
    expect(previousRunId(dir)).toBeNull();
    for (const [id, ts] of [["20260101-000002", 100], ["20260101-000001", 200]] as const) {
      const j = EventJournal.create(id, { sddDir: dir, metadata: { started_at: ts } });
      j.record("run_started", { run_id: id });
      j.close();
    }
    expect(previousRunId(dir)).toBe("20260101-000001");
    expect(existsSync(join(dir, "runs", ".replay-list-cache.json"))).toBe(false);
    expect(readdirSync(join(dir, "runs")).sort()).toEqual(["20260101-000001", "20260101-000002"]);
  });
});

describe("sessionId", () => {
  test("whole seconds of saved_at, null when unknown", () => {
    expect(sessionId(1767344400.75)).toBe("1767344400");
    expect(sessionId(0)).toBeNull();
    expect(sessionId(Number.NaN)).toBeNull();
  });
});
