import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";

/** Signed seals, checkpoints and proofs through the compiled binary. */

function events(from: number, to: number, tweak?: (i: number) => string): string {
  let s = "";
  for (let i = from; i <= to; i++) s += JSON.stringify({ event: "task_completed", task_id: `T-${i}`, note: tweak ? tweak(i) : `n${i}` }) + "\n";
  return s;
}

async function workspace() {
  const cwd = mkdtempSync(join(tmpdir(), "bernstein-tlog-"));
  const env = { BERNSTEIN_CHECKPOINT_STORE: join(cwd, "store") };
  for (const name of ["log", "witness"]) expect((await bernstein(["keys", "generate", "--name", name], { cwd })).code).toBe(0);
  return { cwd, env, run: (args: string[], stdin?: string) => bernstein(args, { cwd, env, stdin }), json: (args: string[]) => bernsteinJson(args, { cwd, env }) };
}

describe("seals and proofs (binary)", () => {
  test("record -> seal --sign -> grow -> checkpoint -> prove-consistency -> verify-consistency", async () => {
    const w = await workspace();
    expect((await w.run(["journal", "record", "r1"], events(1, 1000))).code).toBe(0);
    const sealed = await w.json(["journal", "seal", "r1", "--sign", "log.key"]);
    expect(sealed.code).toBe(0);
    expect(sealed.json.event_count).toBe(1000);
    const note = readFileSync(join(w.cwd, ".sdd/runs/r1/seal.note"), "utf8");
    expect(note.startsWith("bernstein-seal/v1\norigin bernstein/r1\nrun r1\nevents 1000\n")).toBe(true);
    expect(note).toContain("\n\n— bernstein/r1 ");
    // seal.json stays the Python orchestrator's {"event_count", "head"}.
    expect(JSON.parse(readFileSync(join(w.cwd, ".sdd/runs/r1/seal.json"), "utf8"))).toEqual({ event_count: 1000, head: sealed.json.head });

    // journal verify checks the signed seal: signature, count, head and root.
    const v = await w.json(["journal", "verify", "r1", "--seal", ".sdd/runs/r1/seal.note", "--public-key", "log.pub"]);
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true, identity: "verified", signature: "valid", signed_by: ["bernstein/r1"], root: sealed.json.root });
    // A key given means a signature required: against the unsigned seal.json it is refused, never ignored.
    const unsigned = await w.json(["journal", "verify", "r1", "--public-key", "log.pub"]);
    expect([unsigned.code, unsigned.json.error]).toEqual([2, "flag_not_applicable"]);
    const wrong = await w.json(["journal", "verify", "r1", "--seal", ".sdd/runs/r1/seal.note", "--public-key", "witness.pub"]);
    expect([wrong.code, wrong.json.error]).toEqual([1, "signature_missing"]);

    // Growing a sealed run means retiring its seal.json; the signed note stays as the old tree head.
    copyFileSync(join(w.cwd, ".sdd/runs/r1/seal.note"), join(w.cwd, "old.note"));
    renameSync(join(w.cwd, ".sdd/runs/r1/seal.json"), join(w.cwd, "old-seal.json"));
    expect((await w.run(["journal", "record", "r1"], events(1001, 2000))).code).toBe(0);

    const grown = await w.json(["journal", "verify", "r1", "--seal", "old.note", "--public-key", "log.pub"]);
    expect(grown.code).toBe(1);
    expect(grown.json).toMatchObject({ ok: false, error: "seal_mismatch", identity: "mismatched" });
    const since = await w.json(["journal", "verify", "r1", "--since", "old.note", "--public-key", "log.pub"]);
    expect(since.code).toBe(0);
    expect(since.json).toMatchObject({ ok: true, consistency: "extends", since_size: 1000, count: 2000 });

    const cp = await w.json(["journal", "checkpoint", "r1", "--sign", "log.key"]);
    expect(cp.code).toBe(0);
    expect(cp.json.size).toBe(2000);
    const cpText = readFileSync(join(w.cwd, ".sdd/runs/r1/checkpoint"), "utf8");
    expect(cpText.split("\n").slice(0, 2)).toEqual(["bernstein/r1", "2000"]);

    const proved = await w.json(["journal", "prove-consistency", "r1", "--from", "old.note", "--out", "proof.txt"]);
    expect(proved.code).toBe(0);
    expect(proved.json.old_size).toBe(1000);
    expect(proved.json.hashes.length).toBeGreaterThan(0);

    const ok = await w.json(["journal", "verify-consistency", "old.note", ".sdd/runs/r1/checkpoint", "proof.txt", "--public-key", "log.pub"]);
    expect(ok.code).toBe(0);
    expect(ok.json).toMatchObject({ ok: true, consistency: "extends", old_size: 1000, new_size: 2000 });
    expect(ok.json.new.signature).toBe("valid");

    // Without a key: signatures unchecked, said plainly; with the wrong key: refused.
    const unchecked = await w.json(["journal", "verify-consistency", "old.note", ".sdd/runs/r1/checkpoint", "proof.txt"]);
    expect(unchecked.json.new.signature).toBe("unchecked");
    const wrongKey = await w.json(["journal", "verify-consistency", "old.note", ".sdd/runs/r1/checkpoint", "proof.txt", "--public-key", "witness.pub"]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.json).toMatchObject({ ok: false, error: "signature_missing" });

    // A one-byte edit of the proof, or of the signed checkpoint, fails.
    const proof = readFileSync(join(w.cwd, "proof.txt"), "utf8").split("\n");
    proof[3] = (proof[3]![0] === "A" ? "B" : "A") + proof[3]!.slice(1);
    writeFileSync(join(w.cwd, "bad-proof.txt"), proof.join("\n"));
    const bad = await w.json(["journal", "verify-consistency", "old.note", ".sdd/runs/r1/checkpoint", "bad-proof.txt", "--public-key", "log.pub"]);
    expect(bad.code).toBe(1);
    expect(bad.json.error).toBe("consistency_forked");
    writeFileSync(join(w.cwd, "edited.cp"), cpText.replace("\n2000\n", "\n2001\n"));
    const edited = await w.json(["journal", "verify-consistency", "old.note", "edited.cp", "proof.txt", "--public-key", "log.pub"]);
    expect(edited.code).toBe(1);
    expect(edited.json.error).toBe("signature_invalid");

    // Witness cosignature policy: two distinct trusted signers required.
    const vkey = (await w.run(["keys", "vkey", "--key", "log.pub", "--name", "bernstein/r1"])).stdout.trim();
    expect(vkey).toMatch(/^bernstein\/r1\+[0-9a-f]{8}\+/);
    const two = await w.json(["journal", "verify-consistency", "old.note", ".sdd/runs/r1/checkpoint", "proof.txt", "--vkey", vkey, "--min-signatures", "2"]);
    expect(two.code).toBe(1);
    expect(two.json.error).toBe("signature_missing");

    // Trust on first use: once 2000 is remembered, a later checkpoint must be proven from it.
    expect((await w.run(["journal", "verify-consistency", "old.note", ".sdd/runs/r1/checkpoint", "proof.txt", "--public-key", "log.pub", "--remember"])).code).toBe(0);
    copyFileSync(join(w.cwd, ".sdd/runs/r1/checkpoint"), join(w.cwd, "cp2000"));
    expect((await w.run(["journal", "record", "r1"], events(2001, 3000))).code).toBe(0);
    expect((await w.run(["journal", "checkpoint", "r1", "--sign", "log.key"])).code).toBe(0);
    expect((await w.run(["journal", "prove-consistency", "r1", "--from", "old.note", "--out", "p1000"])).code).toBe(0);
    expect((await w.run(["journal", "prove-consistency", "r1", "--from", "cp2000", "--out", "p2000"])).code).toBe(0);
    const skipped = await w.json(["journal", "verify-consistency", "old.note", ".sdd/runs/r1/checkpoint", "p1000", "--public-key", "log.pub", "--remember"]);
    expect(skipped.code).toBe(1);
    expect(skipped.json.error).toBe("consistency_unproven");
    const fromKnown = await w.json(["journal", "verify-consistency", "cp2000", ".sdd/runs/r1/checkpoint", "p2000", "--public-key", "log.pub", "--remember"]);
    expect(fromKnown.code).toBe(0);
    expect(fromKnown.json.remembered).toBe(true);
  }, 60_000);

  test("a journal whose early payload was edited and re-chained fails consistency against the old checkpoint", async () => {
    const w = await workspace();
    expect((await w.run(["journal", "record", "honest"], events(1, 300))).code).toBe(0);
    expect((await w.run(["journal", "checkpoint", "honest", "--sign", "log.key"])).code).toBe(0);
    copyFileSync(join(w.cwd, ".sdd/runs/honest/checkpoint"), join(w.cwd, "old.cp"));
    // The rewrite: same events but #5 edited, chain rebuilt from scratch, then grown.
    expect((await w.run(["journal", "record", "forged"], events(1, 300, (i) => (i === 5 ? "rewritten" : `n${i}`)) + events(301, 400))).code).toBe(0);
    const forged = join(w.cwd, ".sdd/runs/forged/journal.jsonl");
    // Its own chain is internally valid...
    expect((await w.json(["journal", "verify", forged])).code).toBe(0);
    copyFileSync(forged, join(w.cwd, ".sdd/runs/honest/journal.jsonl"));
    // ...but it is not an extension of what was checkpointed.
    const cp = await w.json(["journal", "checkpoint", "honest", "--sign", "log.key"]);
    expect(cp.code).toBe(1);
    expect(cp.json).toMatchObject({ ok: false, error: "consistency_forked", consistency: "forked" });
    const proved = await w.json(["journal", "prove-consistency", "honest", "--from", "old.cp"]);
    expect(proved.code).toBe(1);
    expect(proved.json.error).toBe("consistency_forked");
    const verified = await w.json(["journal", "verify", "honest", "--since", "old.cp", "--public-key", "log.pub"]);
    expect(verified.code).toBe(1);
    expect(verified.json).toMatchObject({ ok: false, error: "consistency_forked", consistency: "forked", chain_consistent: true });
  }, 60_000);

  test("inclusion proofs verify for every index of a 1,000-event journal and fail for a tampered row", async () => {
    const w = await workspace();
    expect((await w.run(["journal", "record", "r"], events(1, 1000))).code).toBe(0);
    expect((await w.run(["journal", "checkpoint", "r", "--sign", "log.key"])).code).toBe(0);
    const cp = join(w.cwd, ".sdd/runs/r/checkpoint");
    // Every index, in-process against the binary's proofs would take 1,000 spawns; the
    // binary proves a sample end to end and the library every index (test/tlog).
    for (const index of [0, 1, 2, 511, 512, 998, 999]) {
      const p = await w.json(["journal", "prove", "r", "--index", String(index), "--out", `p${index}`]);
      expect(p.code).toBe(0);
      const v = await w.json(["journal", "verify-inclusion", cp, `p${index}`, `p${index}.row`, "--public-key", "log.pub"]);
      expect(v.code).toBe(0);
      expect(v.json).toMatchObject({ ok: true, included: true, index, size: 1000 });
    }
    const row = readFileSync(join(w.cwd, "p511.row"), "utf8");
    writeFileSync(join(w.cwd, "tampered.row"), row.replace('"n512"', '"n5120"'));
    const t = await w.json(["journal", "verify-inclusion", cp, "p511", "tampered.row", "--public-key", "log.pub"]);
    expect(t.code).toBe(1);
    expect(t.json.error).toBe("row_mismatch");
    const other = await w.json(["journal", "verify-inclusion", cp, "p511", "p512.row", "--public-key", "log.pub"]);
    expect(other.code).toBe(1);
    expect(["row_mismatch", "inclusion_failed"]).toContain(other.json.error);
    const outOfRange = await w.json(["journal", "prove", "r", "--index", "1000"]);
    expect(outOfRange.code).toBe(2);
  }, 60_000);
});
