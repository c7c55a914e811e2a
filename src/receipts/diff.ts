import { isNaNFloat, pyEqualsAsMember, pyInt as pyIntOf, pyStr } from "../pyjson/python.ts";
import { pyInt, type PyObject, type PyValue } from "../pyjson/types.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";

/** The hashed fields, in the order divergences list them (§6). */
export const DIFF_FIELDS = ["prev_hash", "input_hash", "model", "prompt", "tool_call", "tool_result", "effort"] as const;

export type JournalDiff =
  | { diverged: false }
  | {
      diverged: true;
      seq: number;
      fields_changed: string[];
      left_values: Map<string, PyValue>;
      right_values: Map<string, PyValue>;
      reason: string;
    };

/**
 * Python `==` as the reference's diff sees parsed rows: a NaN nested in a
 * list or dict equals a NaN at the same place (pyEqualsAsMember), while two
 * top-level NaN fields differ.
 */
export function diffEquals(a: PyValue, b: PyValue, nested = false): boolean {
  if (!nested && isNaNFloat(a) && isNaNFloat(b)) return false;
  return pyEqualsAsMember(a, b);
}

/** A field as the reference's entry object holds it (hash strings are str()-coerced; missing -> null). */
function fieldOf(row: PyObject, f: string): PyValue {
  if (f === "prev_hash" || f === "input_hash") return pyStr(row.get(f), "");
  return row.get(f) ?? null;
}

/** The length mismatch at entry `i`: `leftEnded` (else the right one did), the longer side having `rest` more. */
export function lengthMismatch(leftEnded: boolean, i: number, rest: number): JournalDiff {
  const side = leftEnded ? "right" : "left";
  const leftSteps = leftEnded ? i : i + rest;
  const rightSteps = leftEnded ? i + rest : i;
  return {
    diverged: true,
    seq: i,
    fields_changed: ["length"],
    left_values: new Map([["steps", pyInt(leftSteps)]]),
    right_values: new Map([["steps", pyInt(rightSteps)]]),
    reason: `chain length mismatch: ${side} has ${rest} extra step(s) past seq ${i - 1}; missing step would be at this seq`,
  };
}

/** The divergence between the `i`-th entries of both sides, or null when their hashed fields are equal. */
export function diffRows(a: PyObject, b: PyObject, i: number): JournalDiff | null {
  const changed = DIFF_FIELDS.filter((f) => !diffEquals(fieldOf(a, f), fieldOf(b, f)));
  if (changed.length === 0) return null;
  const seq = pyIntOf(a.get("seq"));
  return {
    diverged: true,
    seq: seq === null ? i : Number(seq),
    fields_changed: changed,
    left_values: new Map(changed.map((f) => [f, fieldOf(a, f)])),
    right_values: new Map(changed.map((f) => [f, fieldOf(b, f)])),
    reason: `field(s) differ: ${changed.join(", ")}`,
  };
}

/**
 * The first differing step between two journals, compared with Python `==`
 * (1 == 1.0 == True; dicts unordered). Only that first step is reported, not
 * the prev_hash cascade after it. Both sides are streamed in lockstep. The
 * exact path over parsed entries (diff-fast.ts compares lines as bytes first).
 */
export async function diffJournals(left: AsyncIterator<PyObject>, right: AsyncIterator<PyObject>): Promise<JournalDiff> {
  let i = 0;
  // awaiting the entries is no turn of the event loop: one now and then, for a signal's handler
  const turns = new TurnPacer(100, 256);
  for (;;) {
    if (turns.due()) await nextTurn();
    const [a, b] = await Promise.all([left.next(), right.next()]);
    if (a.done && b.done) return { diverged: false };
    if (a.done || b.done) {
      // Count the longer side's remaining steps to report the lengths.
      let rest = 1;
      const longer = a.done ? right : left;
      while (!(await longer.next()).done) {
        rest++;
        if (turns.due()) await nextTurn();
      }
      return lengthMismatch(a.done === true, i, rest);
    }
    const d = diffRows(a.value, b.value, i);
    if (d !== null) {
      await Promise.all([left.return?.(undefined), right.return?.(undefined)]);
      return d;
    }
    i++;
  }
}
