import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { publishReceipt } from "../../../src/receipts/export.ts";
import { generateKeyPair } from "../../../src/receipts/keys.ts";
import { exactly, timelessTar } from "../../helpers/receipt-bytes.ts";
import { bernsteinJson } from "../../helpers/cli.ts";
import { dictFormJournal, journalBytes, rng, writeAgentJournal } from "../../helpers/step-journals.ts";

/**
 * `replay publish` through the compiled binary (the step kernel's publish
 * mode, whole-line chunks, the placed tar writer) against the exact path
 * run in this process with the kernel off: the same receipt bytes (but
 * for the time written into them, and a signature over that time), the
 * same heads and warnings (JSON and stderr), on journals whose rows the
 * kernel must leave to the exact path (non-canonical spellings, a row over
 * 1 MiB), rows with path leaks in every unredacted field (the home
 * directory too), several read chunks, extra --redact fields, and --sign.
 */

const tmp = mkdtempSync(join(tmpdir(), "publish-fast-e2e-"));
const sdd = join(tmp, ".sdd");
const buckets: Record<string, string> = {};
const bucketOf = (id: string) => buckets[id]!;
let key = "";
let pub = "";
beforeAll(() => {
  writeAgentJournal(sdd, "mixed", journalBytes({ rows: 4000, seed: 31 }));
  writeAgentJournal(sdd, "huge", journalBytes({ rows: 300, seed: 32, hugeAt: 120 }));
  buckets.plain = writeAgentJournal(sdd, "plain", journalBytes({ rows: 5000, seed: 34, plain: true }));
  // dict-form rows only, 3 MB: every row is the kernel's, across read chunks
  const r = rng(33);
  const home = homedir();
  const paths = ["src/a.ts", "/etc/hosts", `x${home}/y`, "~/notes", "C:\\Users\\b", "rel/only", "(/usr/lib)", "k=/var/x", ""];
  const p = () => paths[Math.floor(r() * paths.length)]!;
  writeAgentJournal(
    sdd,
    "leaky",
    dictFormJournal(12_000, (seq) => ({
      model: seq % 97 === 0 ? `/models/${seq}` : "claude",
      prompt: `step ${seq} ${p()} ${"pad ".repeat(20)}`,
      tool_call: { args: { path: p(), argv: [p(), p()] }, name: "edit", cwd: seq % 5 === 0 ? null : p() },
      tool_result: { ok: true, out: p() },
      effort: seq % 3 === 0 ? "high" : undefined,
    })),
  );
  const k = generateKeyPair(tmp, "k");
  key = k.private_key;
  pub = k.public_key;
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("replay publish (binary): the exact path's receipt, heads and warnings", () => {
  const variants: [string, string[]][] = [
    ["default", []],
    ["--redact model,tool_call", ["model", "tool_call"]],
    ["--redact tool_call --sign", ["tool_call"]],
  ];
  for (const id of ["mixed", "huge", "leaky", "plain"]) {
    test(id, async () => {
      for (const [label, redact] of variants) {
        const signed = label.includes("--sign");
        const out = join(tmp, `${id}.tar`);
        const args = ["replay", "publish", id, out, "--sdd-dir", sdd, "--yes-i-want-to-publish", "--force", ...redact.flatMap((f) => ["--redact", f])];
        if (signed) args.push("--sign", key);
        const p = await bernsteinJson([...args, "--as-json"]);
        expect({ label, code: p.code }).toEqual({ label, code: 0 });
        const ref = join(tmp, `${id}-ref.tar`);
        const pr = await exactly(() => publishReceipt({ sddDir: sdd, agentId: id, out: ref, redact, force: true, signingKeyPath: signed ? key : undefined }));
        expect({ label, same: timelessTar(out).equals(timelessTar(ref)) }).toEqual({ label, same: true });
        expect([p.json.head_hash, p.json.original_head_hash, p.json.steps, p.json.signed, p.json.warnings]).toEqual([pr.head_hash, pr.original_head_hash, pr.steps, pr.signed, pr.warnings]);
        // the same warnings on stderr, one a line
        const warned = p.stderr.split("\n").filter((l) => l.includes("still holds an absolute path"));
        expect(warned.map((l) => l.replace(/^\s*WARN\s+/, ""))).toEqual(pr.warnings);
        const v = await bernsteinJson(["replay", "verify", out, "--as-json", ...(signed ? ["--public-key", pub] : [])]);
        expect([v.code, v.json.head_hash]).toEqual([0, pr.head_hash]);
        // leaks in tool_call (several fields) and model (one); none left once both are redacted too
        if (id === "leaky") expect({ label, n: Math.min(pr.warnings.length, 2) }).toEqual({ label, n: [2, 0, 1][variants.findIndex((v) => v[0] === label)] });
      }
    }, 120_000);
  }

  test("a home directory the kernel cannot look for byte by byte (every row goes to the host's check): the same receipt and warnings", async () => {
    const bytes = readFileSync(bucketOf("plain"), "latin1");
    // no value holds either home, so the two runs' homes make no difference to what is found
    expect(bytes.includes(homedir()) || bytes.includes("not-absolute-home")).toBe(false);
    const out = join(tmp, "relhome.tar");
    const p = await bernsteinJson(["replay", "publish", "plain", out, "--sdd-dir", sdd, "--yes-i-want-to-publish", "--as-json"], { env: { HOME: "not-absolute-home" } });
    expect(p.code).toBe(0);
    const ref = join(tmp, "relhome-ref.tar");
    const pr = await exactly(() => publishReceipt({ sddDir: sdd, agentId: "plain", out: ref }));
    expect(timelessTar(out).equals(timelessTar(ref))).toBe(true);
    expect(p.json.warnings).toEqual(pr.warnings);
    expect(pr.warnings.length).toBeGreaterThan(0);
  }, 120_000);
});
