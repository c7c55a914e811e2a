/**
 * RFC 6962 / RFC 9162 Merkle trees over a journal's event hashes.
 *
 *   leaf hash  = SHA-256(0x00 ‖ leaf data)
 *   node hash  = SHA-256(0x01 ‖ left ‖ right)
 *   MTH(D[n])  = split at the largest power of two k < n: node(MTH(D[0:k]), MTH(D[k:n]))
 *
 * Everything here streams: a tree of any size is built left to right with a
 * stack of at most log2(n) subtree roots, and proofs name the leaf ranges
 * whose subtree hashes they need, so one pass over the leaves fills them.
 */

export type Hash = Uint8Array;

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

export function leafHash(data: Uint8Array): Hash {
  const buf = new Uint8Array(1 + data.length);
  buf[0] = LEAF_PREFIX;
  buf.set(data, 1);
  return Bun.SHA256.hash(buf) as Uint8Array;
}

export function nodeHash(left: Hash, right: Hash): Hash {
  const buf = new Uint8Array(65);
  buf[0] = NODE_PREFIX;
  buf.set(left, 1);
  buf.set(right, 33);
  return Bun.SHA256.hash(buf) as Uint8Array;
}

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Hash = Bun.SHA256.hash(new Uint8Array(0)) as Uint8Array;

function isPowerOfTwo(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1 && Number.isInteger(Math.log2(n));
}

/** Largest power of two strictly below n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * Streaming MTH: feed leaf hashes left to right, read the root of what was
 * fed at any time. The stack lives in one preallocated buffer and hashes
 * are written in place, so a tree of millions of leaves allocates nothing
 * per leaf.
 */
export class TreeBuilder {
  // At most 53 perfect subtrees: sizes are below 2^53.
  private readonly levels: Uint8Array[] = Array.from({ length: 64 }, () => new Uint8Array(32));
  private readonly sizes: number[] = [];
  private readonly scratch = new Uint8Array(65);
  size = 0;

  addLeafHash(h: Hash): void {
    this.addSubtree(h, 1);
  }

  /**
   * Append a perfect subtree of `count` (a power of two) leaves whose root
   * is `h`; the tree so far must hold a multiple of `count` leaves (the
   * subtree is aligned), as the verify pass's subtrees are.
   */
  addSubtree(h: Hash, count: number): void {
    if (!isPowerOfTwo(count) || this.size % count !== 0) throw new RangeError(`a subtree of ${count} leaves cannot follow ${this.size}`);
    this.size += count;
    let top = this.sizes.length;
    this.levels[top]!.set(h);
    let size = count;
    // Merge equal-sized neighbours: the stack always holds the perfect
    // subtrees of the binary decomposition of `size`, largest first.
    while (top > 0 && this.sizes[top - 1] === size) {
      const left = this.levels[top - 1]!;
      this.scratch[0] = NODE_PREFIX;
      this.scratch.set(left, 1);
      this.scratch.set(this.levels[top]!, 33);
      Bun.SHA256.hash(this.scratch, left);
      size += this.sizes.pop()!;
      top--;
    }
    this.sizes.push(size);
  }

  root(): Hash {
    const n = this.sizes.length;
    if (n === 0) return EMPTY_ROOT;
    let r: Hash = this.levels[n - 1]!.slice();
    for (let i = n - 2; i >= 0; i--) r = nodeHash(this.levels[i]!, r);
    return r;
  }
}

/** A half-open leaf range [start, end) whose subtree hash a proof needs. */
export interface LeafRange {
  start: number;
  end: number;
}

/** RFC 9162 §2.1.3.1 PATH(m, D[n]) as leaf ranges, nearest to the leaf first. */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  if (!(index >= 0 && index < size)) throw new RangeError(`leaf ${index} is not in a tree of size ${size}`);
  const out: LeafRange[] = [];
  const walk = (m: number, lo: number, n: number): void => {
    if (n <= 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, lo, k);
      out.push({ start: lo + k, end: lo + n });
    } else {
      walk(m - k, lo + k, n - k);
      out.push({ start: lo, end: lo + k });
    }
  };
  walk(index, 0, size);
  return out;
}

/** RFC 9162 §2.1.4.1 PROOF(m, D[n]) as leaf ranges. Empty when m is 0 or m = n. */
export function consistencyRanges(oldSize: number, newSize: number): LeafRange[] {
  if (!(oldSize >= 0 && oldSize <= newSize)) throw new RangeError(`no consistency proof from ${oldSize} to ${newSize}`);
  const out: LeafRange[] = [];
  if (oldSize === 0 || oldSize === newSize) return out;
  const sub = (m: number, lo: number, n: number, whole: boolean): void => {
    if (m === n) {
      if (!whole) out.push({ start: lo, end: lo + n });
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      sub(m, lo, k, whole);
      out.push({ start: lo + k, end: lo + n });
    } else {
      sub(m - k, lo + k, n - k, false);
      out.push({ start: lo, end: lo + k });
    }
  };
  sub(oldSize, 0, newSize, true);
  return out;
}

/**
 * Hashes a set of leaf ranges (and the roots of the prefix of `snapshotAt`
 * leaves and of the whole stream) in one left-to-right pass over the leaves.
 */
export class RangeHasher {
  private readonly order: number[];
  private readonly builders: (TreeBuilder | null)[];
  private readonly results: (Hash | null)[];
  private cursor = 0;
  private readonly whole = new TreeBuilder();
  private prefix: Hash | null = null;

  constructor(private readonly ranges: readonly LeafRange[], private readonly snapshotAt = -1) {
    this.order = ranges.map((_, i) => i).sort((a, b) => ranges[a]!.start - ranges[b]!.start);
    this.builders = ranges.map(() => null);
    this.results = ranges.map(() => null);
    if (snapshotAt === 0) this.prefix = EMPTY_ROOT;
  }

  addLeafHash(h: Hash): void {
    this.addSubtree(h, 1);
  }

  /**
   * Append an aligned perfect subtree of `count` leaves (TreeBuilder.addSubtree):
   * it must not span the snapshot point or a range's edge, which holds for
   * the verify pass's subtrees when they are cut at the snapshot point and
   * the proof's leaf (every node of an RFC 9162 proof is then a union of them).
   */
  addSubtree(h: Hash, count: number): void {
    const i = this.whole.size;
    const end = i + count;
    if (this.snapshotAt > i && this.snapshotAt < end) throw new RangeError(`a subtree [${i}, ${end}) spans the snapshot at ${this.snapshotAt}`);
    this.whole.addSubtree(h, count);
    if (this.whole.size === this.snapshotAt) this.prefix = this.whole.root();
    while (this.cursor < this.order.length && this.ranges[this.order[this.cursor]!]!.end <= i) this.cursor++;
    // Proof ranges never overlap, so at most one is open at leaf i.
    const at = this.order[this.cursor];
    if (at === undefined) return;
    const r = this.ranges[at]!;
    if (end <= r.start) return;
    if (i < r.start || end > r.end) throw new RangeError(`a subtree [${i}, ${end}) spans the edge of the proof range [${r.start}, ${r.end})`);
    const b = (this.builders[at] ??= new TreeBuilder());
    b.addSubtree(h, count);
    if (end === r.end) this.results[at] = b.root();
  }

  get size(): number {
    return this.whole.size;
  }

  root(): Hash {
    return this.whole.root();
  }

  /** Root of the first `snapshotAt` leaves (null when fewer were fed). */
  prefixRoot(): Hash | null {
    return this.prefix;
  }

  /** The ranges' hashes in the order the ranges were given. */
  proof(): Hash[] {
    return this.results.map((h, i) => {
      if (h === null) throw new RangeError(`leaf range [${this.ranges[i]!.start}, ${this.ranges[i]!.end}) was not fed`);
      return h;
    });
  }
}

function equal(a: Hash, b: Hash): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * One step up the tree in RFC 9162's proof walks (§2.1.3.2, §2.1.4.2):
 * whether the next proof hash is the LEFT sibling of the running hash, and
 * the node indexes (fn, sn) one level up. Null when the proof is longer
 * than the path (sn already 0).
 */
function climb(fn: number, sn: number): { left: boolean; fn: number; sn: number } | null {
  if (sn === 0) return null;
  const left = fn % 2 === 1 || fn === sn;
  if (left && fn % 2 === 0) {
    // The right edge of an imperfect tree: skip the levels where this node has no sibling.
    do {
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    } while (fn % 2 === 0 && fn !== 0);
  }
  return { left, fn: Math.floor(fn / 2), sn: Math.floor(sn / 2) };
}

/** RFC 9162 §2.1.3.2: does `proof` place `leaf` (a leaf hash) at `index` under `root` of a tree of `size`? */
export function verifyInclusion(index: number, size: number, leaf: Hash, proof: readonly Hash[], root: Hash): boolean {
  if (!(index >= 0 && index < size)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    const up = climb(fn, sn);
    if (up === null) return false;
    r = up.left ? nodeHash(p, r) : nodeHash(r, p);
    ({ fn, sn } = up);
  }
  return sn === 0 && equal(r, root);
}

/** RFC 9162 §2.1.4.2: does `proof` show the tree (`oldSize`, `oldRoot`) is a prefix of (`newSize`, `newRoot`)? */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  proof: readonly Hash[],
  oldRoot: Hash,
  newRoot: Hash,
): boolean {
  if (!(oldSize >= 0 && oldSize <= newSize)) return false;
  if (oldSize === newSize) return proof.length === 0 && equal(oldRoot, newRoot);
  // The empty tree is a prefix of every tree; RFC 9162 defines no proof for it.
  if (oldSize === 0) return proof.length === 0 && equal(oldRoot, EMPTY_ROOT);
  if (proof.length === 0) return false;
  const path = (oldSize & (oldSize - 1)) === 0 ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    const up = climb(fn, sn);
    if (up === null) return false;
    if (up.left) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
    } else {
      sr = nodeHash(sr, c);
    }
    ({ fn, sn } = up);
  }
  return equal(fr, oldRoot) && equal(sr, newRoot) && sn === 0;
}
