import type { Rng } from "./rng.ts";

/**
 * A fuzz target: a corpus of seed inputs, and a case function that feeds
 * one (mutated) input to the code under test and checks its invariants.
 * A case *fails* by throwing: an `InvariantViolation` names what broke;
 * any other exception escaping the case is itself a crash (an uncaught
 * exception in the code under test).
 */
export interface FuzzTarget {
  readonly name: string;
  /** Seed inputs (from the shared vectors). */
  seeds(): Uint8Array[];
  /** Produce the input of one case from the seeds. */
  mutate(rng: Rng, seeds: readonly Uint8Array[]): Uint8Array;
  /** Run one case in-process. */
  run(input: Uint8Array, rng: Rng): Promise<void> | void;
  /** Run one case through the compiled binary (a sampled fraction of the cases). */
  runBinary?(input: Uint8Array, rng: Rng): Promise<void>;
  /**
   * Fixed extreme inputs every run starts with (100 MB line, 100,000-deep
   * nesting, ...), named so their outcome reads clearly.
   */
  extremes?(): { name: string; run(): Promise<void> | void }[];
  /**
   * Checks that are batched (one python3 process per batch): called when
   * the batch is full and at the end. Returns violations with the input
   * that caused each.
   */
  flush?(): Promise<{ input: Uint8Array; error: Error }[]>;
  /** Counters worth reporting (cases cross-checked against Python, ...). */
  stats?(): Record<string, number>;
  /** Release resources (servers, temp dirs). */
  close?(): Promise<void> | void;
}

/** A broken invariant (as opposed to an exception escaping the code under test). */
export class InvariantViolation extends Error {
  constructor(
    /** Stable, short name of the invariant (part of the crash signature). */
    readonly invariant: string,
    message: string,
  ) {
    super(`${invariant}: ${message}`);
    this.name = "InvariantViolation";
  }
}

export function violation(invariant: string, message: string): InvariantViolation {
  return new InvariantViolation(invariant, message);
}
