/**
 * `replay <RUN> --html` through the compiled binary (the page's fast pass:
 * rows through the codec index, src/timeline/rows.ts) against the exact
 * pass run in this process (every row parsed whole): the same page, byte
 * for byte, on generated journals of each shape with hostile lines
 * appended (so some rows take the exact path and the chain does not
 * verify: the page is still written, exit 1). Each journal is drawn three
 * times: by default (the rows the verify reads, in one pass; drawn again
 * after it where the chain breaks), with two threads after the verify, and
 * while worker threads verify it (its rows read meanwhile:
 * BERNSTEIN_FAST_VERIFY_MIN_RANGE=1 splits a small journal for workers, as
 * a big one is split).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateJournal, SHAPES } from "../../../bench/journal-gen.ts";
import { readMetadata } from "../../../src/journal/metadata.ts";
import { renderTimeline } from "../../../src/timeline/generate.ts";
import { bernstein } from "../../helpers/cli.ts";
import { HOSTILE_LINES } from "../../replay/hostile-rows.ts";

const dir = mkdtempSync(join(tmpdir(), "bern-timeline-fast-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The page the exact pass writes, with the names the command gives the run's paths. */
async function exactPage(sdd: string, runDir: string, journal: string): Promise<string> {
  let page = "";
  await renderTimeline(
    {
      runId: "r1",
      journal,
      metadata: readMetadata(runDir),
      seal: null,
      sealPath: null,
      exactPass: true,
      paths: { [journal]: "<run_dir>/journal.jsonl", [runDir]: "<run_dir>", [sdd]: "<sdd_dir>" },
    },
    (chunk) => {
      page += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    },
  );
  return page;
}

describe("replay <RUN> --html: the compiled binary's page is the exact pass's", () => {
  for (const shape of SHAPES) {
    for (const hostile of [false, true]) {
      test(`${shape} journal${hostile ? " with hostile lines appended" : ""}`, async () => {
        const sdd = join(dir, `${shape}-${hostile}`);
        const runDir = join(sdd, "runs", "r1");
        const { path } = generateJournal(sdd, "r1", shape === "large-rows" ? 3e6 : 4e6, 11, shape);
        if (hostile) appendFileSync(path, HOSTILE_LINES.join("\n") + "\n");
        const exact = await exactPage(sdd, runDir, path);
        for (const [threads, env] of [[[], {}], [["--threads", "2"], {}], [["--threads", "2"], { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "1" }]] as const) {
          const out = join(dir, `${shape}-${hostile}-${threads.length}-${Object.keys(env).length}.html`);
          const r = await bernstein(["replay", "r1", "--html", out, ...threads, "--sdd-dir", sdd], { env });
          expect(r.code).toBe(hostile ? 1 : 0);
          const page = readFileSync(out, "utf8");
          expect(page.length).toBeGreaterThan(100_000);
          expect(page === exact).toBe(true);
        }
      }, 120_000);
    }
  }
});
