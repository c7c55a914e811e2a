import { describe, expect, test } from "bun:test";
import {
  consistencyRanges,
  EMPTY_ROOT,
  inclusionRanges,
  leafHash,
  RangeHasher,
  TreeBuilder,
  verifyConsistency,
  verifyInclusion,
} from "../../src/tlog/merkle.ts";

const hex = (h: Uint8Array) => Buffer.from(h).toString("hex");

// RFC 6962 reference leaves of the certificate-transparency test suite and
// the roots of their prefixes (checked against an independent Python
// implementation below).
const LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"].map(
  (h) => new Uint8Array(Buffer.from(h, "hex")),
);
const ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

function leafHashes(n: number): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => leafHash(new Uint8Array(Buffer.from(`leaf-${i}`))));
}

function prove(ranges: ReturnType<typeof consistencyRanges>, leaves: Uint8Array[], snapshot = -1): RangeHasher {
  const h = new RangeHasher(ranges, snapshot);
  for (const l of leaves) h.addLeafHash(l);
  return h;
}

describe("RFC 6962 tree", () => {
  test("roots of the reference leaves", () => {
    const t = new TreeBuilder();
    expect(hex(t.root())).toBe(hex(EMPTY_ROOT));
    LEAVES.forEach((leaf, i) => {
      t.addLeafHash(leafHash(leaf));
      expect(hex(t.root())).toBe(ROOTS[i]!);
    });
  });

  test("roots of 1..64 leaves agree with an independent Python implementation", () => {
    const script = `
import hashlib, json
def mth(d):
    if len(d) == 1: return hashlib.sha256(b"\\x00" + d[0]).digest()
    k = 1
    while k * 2 < len(d): k *= 2
    return hashlib.sha256(b"\\x01" + mth(d[:k]) + mth(d[k:])).digest()
leaves = [("leaf-%d" % i).encode() for i in range(64)]
print(json.dumps([mth(leaves[:n]).hex() for n in range(1, 65)]))`;
    const r = Bun.spawnSync(["python3", "-c", script]);
    const want = JSON.parse(r.stdout.toString()) as string[];
    const t = new TreeBuilder();
    leafHashes(64).forEach((l, i) => {
      t.addLeafHash(l);
      expect(hex(t.root())).toBe(want[i]!);
    });
  });

  test("every consistency proof for 1 <= m <= n <= 64 verifies, and fails when altered", () => {
    const leaves = leafHashes(64);
    const roots = leaves.map((_, i) => prove([], leaves.slice(0, i + 1)).root());
    let checked = 0;
    for (let n = 1; n <= 64; n++) {
      for (let m = 1; m <= n; m++) {
        const h = prove(consistencyRanges(m, n), leaves.slice(0, n), m);
        const proof = h.proof();
        expect(hex(h.prefixRoot()!)).toBe(hex(roots[m - 1]!));
        expect(verifyConsistency(m, n, proof, roots[m - 1]!, roots[n - 1]!)).toBe(true);
        if (m < n) {
          // a wrong old root, a wrong new root, each hash flipped, a hash dropped
          expect(verifyConsistency(m, n, proof, roots[n - 1]!, roots[n - 1]!)).toBe(false);
          expect(verifyConsistency(m, n, proof, roots[m - 1]!, roots[m - 1]!)).toBe(false);
          for (let i = 0; i < proof.length; i++) {
            const bad = proof.map((p) => new Uint8Array(p));
            bad[i]![0]! ^= 1;
            expect(verifyConsistency(m, n, bad, roots[m - 1]!, roots[n - 1]!)).toBe(false);
          }
          if (proof.length > 0) expect(verifyConsistency(m, n, proof.slice(1), roots[m - 1]!, roots[n - 1]!)).toBe(false);
          if (n < 64) expect(verifyConsistency(m, n + 1, proof, roots[m - 1]!, roots[n]!)).toBe(false);
        }
        checked++;
      }
    }
    expect(checked).toBe((64 * 65) / 2);
  });

  test("every inclusion proof of trees up to 64 leaves verifies, and fails for another leaf or index", () => {
    const leaves = leafHashes(64);
    for (let n = 1; n <= 64; n++) {
      const root = prove([], leaves.slice(0, n)).root();
      for (let i = 0; i < n; i++) {
        const proof = prove(inclusionRanges(i, n), leaves.slice(0, n)).proof();
        expect(verifyInclusion(i, n, leaves[i]!, proof, root)).toBe(true);
        expect(verifyInclusion(i, n, leaves[(i + 1) % 64]!, proof, root)).toBe(false);
        if (n > 1) expect(verifyInclusion((i + 1) % n, n, leaves[i]!, proof, root)).toBe(false);
        expect(verifyInclusion(i, n, leaves[i]!, proof.slice(1), root)).toBe(n === 1);
        expect(verifyInclusion(n, n, leaves[i]!, proof, root)).toBe(false);
      }
    }
  });

  test("the empty tree and equal sizes", () => {
    expect(consistencyRanges(0, 5)).toEqual([]);
    expect(verifyConsistency(0, 5, [], EMPTY_ROOT, EMPTY_ROOT)).toBe(true);
    expect(verifyConsistency(3, 3, [], EMPTY_ROOT, EMPTY_ROOT)).toBe(true);
    expect(verifyConsistency(3, 2, [], EMPTY_ROOT, EMPTY_ROOT)).toBe(false);
    expect(() => inclusionRanges(5, 5)).toThrow();
  });
});
