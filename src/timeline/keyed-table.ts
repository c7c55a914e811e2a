/**
 * An index of objects by a key they hold, for a pass that adds and drops
 * entries on most of its rows: open addressing with linear probing, and
 * deletion by shifting the entries after it back (no tombstones), so adding
 * and removing allocate nothing until the table doubles. A JS Map allocates
 * for each key it adds and on its rehashes; the engine collects that late,
 * and a page's pass over a large journal stood tens of MB higher for it.
 *
 * The caller hashes the key (textHash) and says how an entry matches it;
 * an entry is removed by identity.
 */
export class KeyedTable<E, K1, K2 = string> {
  private entries: (E | undefined)[] = new Array<E | undefined>(16).fill(undefined);
  private hashes = new Int32Array(16);
  private mask = 15;
  size = 0;

  constructor(private readonly matches: (entry: E, k1: K1, k2: K2) => boolean) {}

  /** The entry of hash `hash` that matches (k1, k2). */
  get(hash: number, k1: K1, k2: K2): E | undefined {
    const entries = this.entries;
    for (let i = hash & this.mask; ; i = (i + 1) & this.mask) {
      const e = entries[i];
      if (e === undefined) return undefined;
      if (this.hashes[i] === hash && this.matches(e, k1, k2)) return e;
    }
  }

  /** Add `entry` under `hash` (the caller knows no entry matches its key). */
  add(hash: number, entry: E): void {
    if ((this.size + 1) * 2 > this.entries.length) this.grow();
    this.place(hash, entry);
    this.size++;
  }

  /** Remove `entry` (by identity) from under `hash`; whether it was there. */
  remove(hash: number, entry: E): boolean {
    const entries = this.entries;
    const mask = this.mask;
    let i = hash & mask;
    for (; ; i = (i + 1) & mask) {
      const e = entries[i];
      if (e === undefined) return false;
      if (e === entry) break;
    }
    // shift back each later entry of the run that may stand in the freed slot (its home is not in (i, j])
    for (let j = (i + 1) & mask; entries[j] !== undefined; j = (j + 1) & mask) {
      const home = this.hashes[j]! & mask;
      if (((j - home) & mask) >= ((j - i) & mask)) {
        entries[i] = entries[j];
        this.hashes[i] = this.hashes[j]!;
        i = j;
      }
    }
    entries[i] = undefined;
    this.size--;
    return true;
  }

  private place(hash: number, entry: E): void {
    let i = hash & this.mask;
    while (this.entries[i] !== undefined) i = (i + 1) & this.mask;
    this.entries[i] = entry;
    this.hashes[i] = hash;
  }

  private grow(): void {
    const entries = this.entries;
    const hashes = this.hashes;
    this.entries = new Array<E | undefined>(entries.length * 2).fill(undefined);
    this.hashes = new Int32Array(entries.length * 2);
    this.mask = entries.length * 2 - 1;
    for (let i = 0; i < entries.length; i++) if (entries[i] !== undefined) this.place(hashes[i]!, entries[i]!);
  }
}

/** A basis drawn per process: ids chosen to fall on one slot of a run's tables do not in the next run's. */
const BASIS = (0x811c9dc5 ^ Math.floor(Math.random() * 0x100000000)) >>> 0;

/** A 32-bit hash of a string's UTF-16 units (FNV-1a from BASIS, then mixed so the low bits the table uses depend on every unit). */
export function textHash(s: string): number {
  let h = BASIS;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  return h ^ (h >>> 15);
}
