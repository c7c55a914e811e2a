import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventJournal } from "../../src/journal/writer.ts";
import { INCLUSION_PROOF_VERSION, verifyInclusionFiles } from "../../src/tlog/flows.ts";
import { checkpointText } from "../../src/tlog/checkpoint.ts";
import { verifiedTree } from "../../src/tlog/leaves.ts";
import { inclusionRanges, leafHash, RangeHasher } from "../../src/tlog/merkle.ts";
import { signNote } from "../../src/tlog/note.ts";
import { generateKeyPairSync } from "node:crypto";

describe("inclusion proofs over a real journal", () => {
  test("every index of a 1,000-event journal verifies from its row; a tampered row fails", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bernstein-incl-"));
    const j = EventJournal.create("r", { sddDir: join(dir, ".sdd") });
    for (let i = 0; i < 1000; i++) j.record("task_completed", { task_id: `T-${i}`, cost_usd: i / 7 });
    j.close();
    // The journal verifies (so its stored event hashes are the recomputed ones): its leaves and rows, read directly.
    const tree = await verifiedTree(j.path);
    const rows = readFileSync(j.path, "utf8").split("\n").filter((l) => l !== "");
    const leaves = rows.map((r) => leafHash(Buffer.from(JSON.parse(r).event_hash as string, "hex")));
    expect(leaves.length).toBe(1000);
    // the verify pass's subtrees give the root the leaves give
    const fromPass = new RangeHasher([]);
    for (const s of tree.subtrees) fromPass.addSubtree(s.hash, s.size);
    const fromLeaves = new RangeHasher([]);
    for (const l of leaves) fromLeaves.addLeafHash(l);
    expect(Buffer.from(fromPass.root()).toString("hex")).toBe(Buffer.from(fromLeaves.root()).toString("hex"));
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
