import { canonicalParts, hashParts } from "../pyjson/encode.ts";
import type { PyObject } from "../pyjson/types.ts";

/**
 * The replay display's "SHA-256 fingerprint" (Python `compute_replay_fingerprint`,
 * issue #1851): SHA-256 over, per usable row in file order, the row without
 * its clock fields (`ts`, `elapsed_s`) as canonical py-json (sorted keys,
 * compact, ASCII-escaped, Python float spelling) followed by `\n`.
 *
 * It is NOT the Merkle head: it covers the chain fields (`index`,
 * `prev_hash`, `payload_hash`, `event_hash`) but proves nothing about
 * completeness; two runs with identical events (and clocks that differ) have
 * the same fingerprint. Fed row by row, so it streams.
 */
const CLOCK_FIELDS = new Set(["ts", "elapsed_s"]);

export class ReplayFingerprint {
  private readonly hasher = new Bun.CryptoHasher("sha256");
  private rows = 0;

  update(row: PyObject): void {
    const projected: PyObject = new Map();
    for (const [k, v] of row) if (!CLOCK_FIELDS.has(k)) projected.set(k, v);
    hashParts([...canonicalParts(projected), "\n"], this.hasher);
    this.rows++;
  }

  /**
   * Rows already in canonical text (each followed by "\n", `rows` of them),
   * as the fast path assembles them from the rows' bytes.
   */
  updateText(bytes: Uint8Array, rows: number): void {
    this.hasher.update(bytes);
    this.rows += rows;
  }

  /** Rows hashed so far. */
  get count(): number {
    return this.rows;
  }

  /**
   * Lowercase hex. An existing journal without rows hashes the empty input;
   * Python gives `""` only for a missing file, which callers handle.
   */
  digest(): string {
    return this.hasher.digest("hex");
  }
}
