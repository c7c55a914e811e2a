import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { cleanupRuns, demoRun, journalRows, type RunDir } from "./fixture.ts";

/** The JSON data blocks of a page, parsed (what its script reads). */
function blocks(html: string, kind: string): any[] {
  const out: any[] = [];
  for (const m of html.matchAll(/<script type="application\/json" class="tl-data" data-kind="(\w+)">([^<]*)<\/script>/g)) {
    if (m[1] === kind) out.push(JSON.parse(m[2]!));
  }
  return out;
}

let run: RunDir;
beforeAll(async () => {
  run = await demoRun("demo");
}, 60_000);
afterAll(cleanupRuns);

describe("replay <RUN> --html (compiled binary)", () => {
  test("writes <run_dir>/timeline.html after verifying, and says what it wrote", async () => {
    const r = await bernsteinJson(["replay", "latest", "--html", "--sdd-dir", run.sddDir]);
    expect(r.code).toBe(0);
    const out = join(run.sddDir, "runs", run.runId, "timeline.html");
    const rows = journalRows(run.journal);
    expect(r.json).toMatchObject({ ok: true, run_id: run.runId, output: out, events: rows.length, embedded_events: rows.length, attempts: 5, untracked_claims: 0 });
    expect(r.json.verify).toMatchObject({ ok: true, chain_consistent: true, identity: "verified", count: rows.length });
    expect(r.json.bytes).toBe(statSync(out).size);
    expect(statSync(out).mode & 0o777).toBe(0o644);
    const html = readFileSync(out, "utf8");
    // Self-contained: no URL of any scheme, no external resource, our own script and style allowed by hash only.
    expect(html.match(/[a-z][a-z0-9+.-]*:\/\/.{0,20}/i)?.[0] ?? null).toBeNull();
    expect(html.match(/\s(src|href)=.{0,20}/i)?.[0] ?? null).toBeNull();
    expect(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-/.test(html)).toBe(true);
    const scripts = html.match(/<script[^>]*>/g)!;
    expect(scripts.filter((s) => s === "<script>")).toHaveLength(1);
    expect(scripts.filter((s) => s !== "<script>").every((s) => s.includes('type="application/json"'))).toBe(true);
    // The data the page draws: every row, and one attempt per claim.
    const events = blocks(html, "events").flat();
    expect(events.map((e) => e[2])).toEqual(rows.map((row) => row.event));
    expect(events.map((e) => JSON.parse(e[6]).event_hash)).toEqual(rows.map((row) => row.event_hash));
    const attempts = blocks(html, "attempts").flat();
    const claims = rows.filter((row) => row.event === "task_claimed");
    expect(attempts.map((a) => `${a[0]}/${a[1]}`).sort()).toEqual(claims.map((c) => `${c.agent_id}/${c.task_id}`).sort());
    expect(attempts.every((a) => a[6] === "done")).toBe(true);
    const [summary] = blocks(html, "summary");
    expect(summary).toMatchObject({ run_id: run.runId, events: rows.length, attempts: 5, head: rows.at(-1)!.event_hash, ticks: rows.filter((row) => row.event === "tick_start").length });
    expect(summary.cost_usd).toBe(Math.max(...rows.filter((row) => row.event === "task_completed").map((row) => row.cost_usd)));
    expect(summary.cost_known).toBe(true);
    expect(summary.verdict.ok).toBe(true);

    const prose = await bernstein(["replay", run.runId, "--html", "--sdd-dir", run.sddDir]);
    expect(prose.code).toBe(0); // the default path is bernstein's own: refreshed without --force
    expect(prose.stdout).toContain(`Timeline written -> ${out}`);
  });

  test("the page is the same bytes on stdout (-) as in a file", async () => {
    const file = join(run.dir, "same.html");
    expect((await bernstein(["replay", run.runId, "--html", file, "--sdd-dir", run.sddDir])).code).toBe(0);
    const r = await bernstein(["replay", run.runId, "--html", "-", "--sdd-dir", run.sddDir]);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("<!doctype html>")).toBe(true);
    expect(r.stdout === readFileSync(file, "utf8")).toBe(true);
  });

  test("output rules: an existing OUT needs --force; never over the journal or into .sdd/runs", async () => {
    const out = join(run.dir, "page.html");
    writeFileSync(out, "mine");
    const refused = await bernsteinJson(["replay", run.runId, "--html", out, "--sdd-dir", run.sddDir]);
    expect(refused.code).toBe(2);
    expect(refused.json).toMatchObject({ ok: false, error: "output_exists" });
    expect(readFileSync(out, "utf8")).toBe("mine");
    const forced = await bernsteinJson(["replay", run.runId, "--html", out, "--force", "--sdd-dir", run.sddDir]);
    expect(forced.code).toBe(0);
    expect(readFileSync(out, "utf8").startsWith("<!doctype html>")).toBe(true);

    const before = readFileSync(run.journal);
    for (const target of [run.journal, join(run.sddDir, "runs", run.runId, "seal.json"), join(run.sddDir, "runs", "page.html")]) {
      const r = await bernsteinJson(["replay", run.runId, "--html", target, "--force", "--sdd-dir", run.sddDir]);
      expect(r.code).toBe(2);
      expect(r.json.error).toBe("output_forbidden");
    }
    expect(readFileSync(run.journal)).toEqual(before);
    expect(existsSync(join(run.sddDir, "runs", "page.html"))).toBe(false);
  });

  test("usage: - with --as-json, --limit, --verify, a third word", async () => {
    for (const args of [
      ["--html", "-", "--as-json"],
      ["--html", "--limit", "3", "--as-json"],
      ["--html", "--verify", "--as-json"],
      ["--html", "a.html", "b.html", "--as-json"],
    ]) {
      const r = await bernstein(["replay", run.runId, ...args, "--sdd-dir", run.sddDir]);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout).ok).toBe(false);
    }
    // --html on another verb is refused by name, not ignored
    const r = await bernsteinJson(["replay", "diff", run.runId, run.runId, "--html", "--sdd-dir", run.sddDir]);
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("flag_not_applicable");
  });

  test("a broken chain: the page shows the divergence, the command exits 1", async () => {
    const rows = readFileSync(run.journal, "utf8").split("\n");
    const tampered = join(run.dir, "tampered");
    const runDir = join(tampered, "runs", "20990101-000000");
    await Bun.write(join(runDir, "journal.jsonl"), rows.map((l, i) => (i === 7 ? l.replace('"design-api"', '"design-APX"') : l)).join("\n"));
    const out = join(run.dir, "broken.html");
    const r = await bernsteinJson(["replay", "20990101-000000", "--html", out, "--sdd-dir", tampered]);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: "chain_broken", output: out });
    expect(r.json.verify).toMatchObject({ chain_consistent: false, divergent_index: 7 });
    const html = readFileSync(out, "utf8");
    expect(html.includes('<div id="verdict" class="verdict bad">DIVERGENCE at step 7')).toBe(true);
    const [summary] = blocks(html, "summary");
    expect(summary.verdict).toMatchObject({ ok: false, divergent_index: 7 });
    expect(summary.head).toBe("");
    // On stdout the page is all there is: the verdict goes to stderr, and the exit code says it.
    const piped = await bernstein(["replay", "20990101-000000", "--html", "-", "--sdd-dir", tampered]);
    expect(piped.code).toBe(1);
    expect(piped.stdout === html).toBe(true);
    expect(piped.stderr).toContain("chain_broken: ");
  });
});
