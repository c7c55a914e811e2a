import { readFileSync } from "node:fs";
import { join } from "node:path";
import { referenceVerdicts } from "../journal/tmp.ts";

/**
 * A run-journal vector's expected verdict. The shared vectors were written
 * before issue 21 and give `head: null` after a divergence; Python (and the
 * spec, run-journal §1.9) report the head of the verified prefix there, so
 * for a divergent vector the head is taken from the Python reference
 * verifier (test/reference/verify_journal.py) over the same file.
 */
export function runVectorExpect(dir: string, name: string): Record<string, any> {
  const exp = JSON.parse(readFileSync(join(dir, `${name}.expect.json`), "utf8"));
  if (exp.head === null && exp.divergent_index !== null) {
    const head = referenceVerdicts([join(dir, `${name}.jsonl`)])[0]!.head;
    if (typeof head !== "string") throw new Error(`reference verifier gave no prefix head for ${name}`);
    exp.head = head;
  }
  return exp;
}
