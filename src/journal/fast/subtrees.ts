/**
 * RFC 6962 Merkle subtrees built inside the verify pass, range by range, so
 * a checkpoint, a signed seal or a proof needs no second pass over the
 * journal: each range hashes the leaves of the rows it verified
 * (leaf = SHA-256(0x00 ‖ event hash), the hash the verifier recomputed) and
 * joins them into aligned perfect subtrees (size 2^j, starting at a
 * multiple of 2^j), which the tree's builder appends in order
 * (src/tlog/merkle.ts addSubtree). `cuts` are leaf positions no subtree may
 * span (a prefix size, an inclusion proof's leaf): every node a consistency
 * or inclusion proof needs is then a union of whole subtrees.
 */

/** The root of leaves [start, start + size) of the journal's tree. */
export interface Subtree {
  start: number;
  size: number;
  /** 32-byte node hash. */
  hash: Uint8Array;
}

/** What a verify is asked to build besides its verdict (plain data: it crosses to worker threads). */
export interface TreeSpec {
  /** Leaf positions no subtree may span. */
  cuts: readonly number[];
  /** Keep the text of the row at this position (an inclusion proof prints it), or null. */
  keepRow: number | null;
}

/** A range's part: its subtrees in order, and the kept row if it holds it. */
export interface RangeTree {
  subtrees: Subtree[];
  row: string | null;
}

/** A caller's request: the engine fills `subtrees` (every range's, in order) and `row` once the journal verified whole. */
export class TreeRequest {
  subtrees: Subtree[] | null = null;
  row: string | null = null;
  constructor(readonly spec: TreeSpec) {}
}

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

/** Leaves in, aligned perfect subtrees out: a stack whose equal-sized neighbours merge when aligned and not cut. */
export class SubtreeBuilder {
  private readonly starts: number[] = [];
  private readonly sizes: number[] = [];
  private readonly hashes: Uint8Array[] = [];
  private readonly leaf = new Uint8Array(33);
  private readonly node = new Uint8Array(65);

  /** `next`: the position of the first leaf to come. */
  constructor(
    private readonly cuts: readonly number[],
    private next: number,
  ) {
    this.leaf[0] = LEAF_PREFIX;
    this.node[0] = NODE_PREFIX;
  }

  /** The next row's 32-byte event hash, at `src[at, at + 32)`. */
  add(src: Uint8Array, at: number): void {
    let n = this.starts.length;
    const h = (this.hashes[n] ??= new Uint8Array(32));
    // Byte by byte: a view per leaf would be garbage by the hundred thousand.
    const leaf = this.leaf;
    for (let i = 0; i < 32; i++) leaf[i + 1] = src[at + i]!;
    Bun.SHA256.hash(leaf, h);
    this.starts.push(this.next++);
    this.sizes.push(1);
    n++;
    while (n >= 2 && this.sizes[n - 1] === this.sizes[n - 2]) {
      const size = this.sizes[n - 2]!;
      const start = this.starts[n - 2]!;
      if (start % (2 * size) !== 0 || this.cutInside(start, start + 2 * size)) break;
      const left = this.hashes[n - 2]!;
      this.node.set(left, 1);
      this.node.set(this.hashes[n - 1]!, 33);
      Bun.SHA256.hash(this.node, left);
      this.sizes[n - 2] = 2 * size;
      this.starts.pop();
      this.sizes.pop();
      n--;
    }
  }

  private cutInside(a: number, b: number): boolean {
    for (const c of this.cuts) if (c > a && c < b) return true;
    return false;
  }

  subtrees(): Subtree[] {
    return this.starts.map((start, i) => ({ start, size: this.sizes[i]!, hash: this.hashes[i]!.slice() }));
  }
}
