/**
 * The provider-state gate as the reference states it (spec upstream-parity
 * §4.2), in python3 over each journal: its rows read as Python's tolerant
 * reader reads them (text mode, universal newlines, a blank line skipped,
 * `json.loads`), a row's index its position among the rows. The one
 * departure is the reference's own crash: a `step_index` that `int()`
 * refuses is reported, as bernstein reports it, not raised.
 */
import type { ProviderStateVerdict } from "../../src/journal/provider-state.ts";
import { runPython } from "./python.ts";

const GATE = `
import hashlib, json, sys

def gate(path):
    out = {"ok": True, "mutations": 0, "flagged_steps": [], "errors": []}
    i = 0
    with open(path, encoding="utf-8", newline=None) as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            if isinstance(row, dict) and str(row.get("event", "")) == "provider_state_mutation":
                out["mutations"] += 1
                try:
                    step = int(row.get("step_index", 0))
                except (ValueError, TypeError, OverflowError):
                    out["errors"].append(f"step {i}: provider_state_mutation step_index is not an integer")
                else:
                    obj = {"kind": str(row.get("mutation_kind")), "before_digest": str(row.get("before_digest")), "after_digest": str(row.get("after_digest")), "step_index": step}
                    address = hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
                    if str(row.get("content_address")) != address:
                        out["errors"].append(f"step {i}: provider_state_mutation content address mismatch")
                if row.get("flagged"):
                    out["flagged_steps"].append(i)
                    out["errors"].append(f"step {i}: flagged provider-side mutation ({row.get('mutation_kind')}) arrived in deterministic mode")
            i += 1
    out["ok"] = not out["errors"]
    return out

print(json.dumps([gate(p) for p in json.load(sys.stdin)]))
`;

/** The reference's provider-state verdict of each journal. */
export function referenceGates(paths: readonly string[]): ProviderStateVerdict[] {
  return runPython(GATE, paths) as ProviderStateVerdict[];
}
