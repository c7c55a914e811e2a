import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkpointText } from "../../src/tlog/checkpoint.ts";
import { signNote } from "../../src/tlog/note.ts";
import { MAX_ENTRY_BYTES, remember, rememberedHead, storeDir } from "../../src/tlog/trust-store.ts";

const root = mkdtempSync(join(tmpdir(), "bernstein-trust-store-unit-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let saved: string | undefined;
beforeEach(() => {
  saved = process.env.BERNSTEIN_CHECKPOINT_STORE;
  process.env.BERNSTEIN_CHECKPOINT_STORE = mkdtempSync(join(root, "store-"));
});
afterEach(() => {
  if (saved === undefined) delete process.env.BERNSTEIN_CHECKPOINT_STORE;
  else process.env.BERNSTEIN_CHECKPOINT_STORE = saved;
});

const key = generateKeyPairSync("ed25519").privateKey;
function note(origin: string, size: number): string {
  return signNote(checkpointText({ origin, size, root: new Uint8Array(32).fill(size) }), [{ name: origin, key }]);
}
function onlyEntry(): string {
  const names = readdirSync(storeDir());
  expect(names).toHaveLength(1);
  return join(storeDir(), names[0]!);
}

describe("trust-store", () => {
  test("nothing remembered: null; remembered: the head, and a smaller one never replaces it", () => {
    expect(rememberedHead("o/a")).toBeNull();
    remember("o/a", note("o/a", 7), 7);
    expect(rememberedHead("o/a")?.size).toBe(7);
    remember("o/a", note("o/a", 5), 5);
    expect(rememberedHead("o/a")?.size).toBe(7);
  });

  test("a corrupt entry throws trust_store_corrupt (exit 3) with its path, and remember() leaves it as it was", () => {
    remember("o/b", note("o/b", 3), 3);
    const path = onlyEntry();
    for (const bad of ["garbage\n", note("o/other", 3), "x".repeat(MAX_ENTRY_BYTES + 1)]) {
      writeFileSync(path, bad);
      expect(() => rememberedHead("o/b")).toThrow(expect.objectContaining({ code: "trust_store_corrupt", exitCode: 3, facts: { path, origin: "o/b" } }));
      expect(() => remember("o/b", note("o/b", 9), 9)).toThrow(expect.objectContaining({ code: "trust_store_corrupt" }));
      expect(readFileSync(path, "utf8")).toBe(bad);
    }
  });
});
