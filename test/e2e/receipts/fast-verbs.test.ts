import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportReceipt, publishReceipt } from "../../../src/receipts/export.ts";
import { diffJournals } from "../../../src/receipts/diff.ts";
import { sourceEntries } from "../../../src/receipts/source.ts";
import { renderJson } from "../../../src/render/json.ts";
import { exactly, timelessTar } from "../../helpers/receipt-bytes.ts";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { exactAgentView } from "../../helpers/agent-view.ts";
import { journalBytes, writeAgentJournal } from "../../helpers/step-journals.ts";

/**
 * The step-journal verbs through the compiled binary (fast paths) on
 * 20,000-step journals, against the exact path run in this process with
 * the step kernel off: the same receipt bytes (but for the time written
 * into them), the same agent-view document, the same diff verdicts.
 */

const tmp = mkdtempSync(join(tmpdir(), "fast-verbs-e2e-"));
const sdd = join(tmp, ".sdd");
const buckets: Record<string, string> = {};
beforeAll(() => {
  // (written once: a few seconds of hashing)
  buckets.plain = writeAgentJournal(sdd, "plain", journalBytes({ rows: 20_000, seed: 21, plain: true }));
  buckets.mixed = writeAgentJournal(sdd, "mixed", journalBytes({ rows: 20_000, seed: 22 }));
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("replay export / publish (binary, 20,000 steps)", () => {
  for (const id of ["plain", "mixed"]) {
    test(`${id}: the receipt the exact path writes, and it verifies`, async () => {
      const out = join(tmp, `${id}.tar`);
      const r = await bernsteinJson(["replay", "export", id, out, "--sdd-dir", sdd, "--as-json"]);
      expect(r.code).toBe(0);
      expect(r.json.steps).toBe(20_000);
      const ref = join(tmp, `${id}-ref.tar`);
      await exactly(() => exportReceipt({ sddDir: sdd, agentId: id, out: ref }));
      expect(timelessTar(out).equals(timelessTar(ref))).toBe(true);
      const v = await bernsteinJson(["replay", "verify", out, "--as-json"]);
      expect([v.code, v.json.ok, v.json.steps, v.json.head_hash]).toEqual([0, true, 20_000, r.json.head_hash]);

      const pub = join(tmp, `${id}.published.tar`);
      const p = await bernsteinJson(["replay", "publish", id, pub, "--sdd-dir", sdd, "--yes-i-want-to-publish", "--redact", "tool_call", "--as-json"]);
      expect(p.code).toBe(0);
      const pubRef = join(tmp, `${id}-ref.published.tar`);
      const pr = await exactly(() => publishReceipt({ sddDir: sdd, agentId: id, out: pubRef, redact: ["tool_call"] }));
      expect(timelessTar(pub).equals(timelessTar(pubRef))).toBe(true);
      expect([p.json.head_hash, p.json.original_head_hash, p.json.warnings]).toEqual([pr.head_hash, pr.original_head_hash, pr.warnings]);
      const pv = await bernsteinJson(["replay", "verify", pub, "--as-json"]);
      expect([pv.code, pv.json.head_hash]).toEqual([0, pr.head_hash]);
    }, 120_000);
  }
});

describe("replay <AGENT_ID> --as-json (binary, 20,000 steps)", () => {
  for (const id of ["plain", "mixed"]) {
    test(`${id}: the document the exact path renders`, async () => {
      const r = await bernstein(["replay", id, "--as-json", "--sdd-dir", sdd]);
      expect(r.code).toBe(0);
      const exact = await exactAgentView(sdd, id);
      expect("document" in exact && r.stdout === exact.document).toBe(true);
      expect(JSON.parse(r.stdout).entries.length).toBe(20_000);
    }, 120_000);
  }
});

describe("replay diff-journal (binary, 20,000 steps)", () => {
  test("a receipt against its journal matches; one changed step and a shorter copy diverge where the exact path says", async () => {
    const receipt = join(tmp, "plain-diff.tar");
    expect((await bernstein(["replay", "export", "plain", receipt, "--sdd-dir", sdd])).code).toBe(0);
    const same = await bernstein(["replay", "diff-journal", receipt, buckets.plain!]);
    expect([same.code, same.stdout]).toEqual([0, "No divergence; chains match end-to-end.\n"]);

    const lines = readFileSync(buckets.plain!, "utf8").split("\n");
    const changed = join(tmp, "changed.jsonl");
    writeFileSync(changed, lines.map((l, i) => (i === 17_345 ? l.replace('"ok":true', '"ok":false') : l)).join("\n"));
    const shorter = join(tmp, "shorter.jsonl");
    writeFileSync(shorter, lines.slice(0, 12_000).join("\n") + "\n");
    for (const [a, b] of [[receipt, changed], [shorter, receipt], [buckets.mixed!, buckets.plain!]] as const) {
      const r = await bernsteinJson(["replay", "diff-journal", a, b, "--as-json"]);
      const kind = (p: string) => (p.endsWith(".tar") ? "receipt" : "file");
      const exact = await diffJournals(sourceEntries({ kind: kind(a), path: a }), sourceEntries({ kind: kind(b), path: b }));
      expect(r.code).toBe(1);
      expect(JSON.parse(renderJson({ ...r.json, ok: undefined, error: undefined, detail: undefined }))).toEqual(JSON.parse(renderJson(exact)));
    }
  }, 120_000);
});
