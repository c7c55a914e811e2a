import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventJournal } from "../../src/journal/writer.ts";
import { INCLUSION_PROOF_VERSION, verifyInclusionFiles } from "../../src/tlog/flows.ts";
import { checkpointText } from "../../src/tlog/checkpoint.ts";
import { forEachVerifiedLeaf } from "../../src/tlog/leaves.ts";
import { inclusionRanges, leafHash, RangeHasher } from "../../src/tlog/merkle.ts";
import { signNote } from "../../src/tlog/note.ts";
import { generateKeyPairSync } from "node:crypto";

describe("inclusion proofs over a real journal", () => {
  test("every index of a 1,000-event journal verifies from its row; a tampered row fails", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bernstein-incl-"));
    const j = EventJournal.create("r", { sddDir: join(dir, ".sdd") });
    for (let i = 0; i < 1000; i++) j.record("task_completed", { task_id: `T-${i}`, cost_usd: i / 7 });
    j.close();
    const leaves: Uint8Array[] = [];
    const rows: string[] = [];
    await forEachVerifiedLeaf(j.path, (r) => {
      leaves.push(leafHash(r.hash));
      rows.push(new TextDecoder().decode(r.line));
    });
    expect(leaves.length).toBe(1000);
    const { privateKey } = generateKeyPairSync("ed25519");
    const whole = new RangeHasher([]);
    for (const l of leaves) whole.addLeafHash(l);
    writeFileSync(join(dir, "cp"), signNote(checkpointText({ origin: "o", size: 1000, root: whole.root() }), [{ name: "o", key: privateKey }]));
    for (let i = 0; i < 1000; i++) {
      const h = new RangeHasher(inclusionRanges(i, 1000));
      for (const l of leaves) h.addLeafHash(l);
      const proof = [INCLUSION_PROOF_VERSION, `index ${i}`, "size 1000", ...h.proof().map((x) => Buffer.from(x).toString("base64"))].join("\n") + "\n";
      writeFileSync(join(dir, "p"), proof);
      writeFileSync(join(dir, "row"), rows[i]! + "\n");
      expect(verifyInclusionFiles(join(dir, "cp"), join(dir, "p"), join(dir, "row"), { publicKeys: [], vkeys: [] }).index).toBe(i);
      if (i % 97 === 0) {
        writeFileSync(join(dir, "row"), rows[i]!.replace(`"T-${i}"`, `"T-${i}x"`) + "\n");
        expect(() => verifyInclusionFiles(join(dir, "cp"), join(dir, "p"), join(dir, "row"), { publicKeys: [], vkeys: [] })).toThrow(/hashes to/);
      }
    }
  }, 60_000);
});
