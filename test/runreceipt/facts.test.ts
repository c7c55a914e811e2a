/**
 * The journal walk of `verify receipt` (src/runreceipt/facts.ts) against
 * the independent Python verifier: a receipt whose rows the fast reader
 * takes (CJ rows) and the exact path takes (an escaped key) in turn, each
 * tampered at rows before, between and after the two kinds (an
 * event_hash, a prev_hash, a payload value, a row dropped). The walk
 * keeps the last fast row's hash as bytes and makes strings only when it
 * must (an exact row, a divergence, the end): every tampering gives the
 * oracle's status, divergent step and errors.
 */
import { afterAll, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import { EventJournal } from "../../src/journal/index.ts";
import { PyNum, type PyValue } from "../../src/pyjson/index.ts";
import { buildRunReceipt } from "../../src/runreceipt/build.ts";
import { verifyRunReceipt } from "../../src/runreceipt/verify.ts";
import { oracle } from "../helpers/upstream-receipts.ts";
import { runPython } from "../helpers/python.ts";
import { tempDirs } from "../journal/tmp.ts";

const dirs = tempDirs("receipt-facts");
afterAll(() => dirs.cleanup());

const TAMPER = `import json, sys
job = json.load(sys.stdin)
src = json.loads(open(job["src"], encoding="utf-8").read())
out = []
def write(d, name):
    p = job["dir"] + "/" + name + ".json"
    open(p, "w", encoding="utf-8").write(json.dumps(d, sort_keys=True, separators=(",", ":")) + "\\n")
    out.append(p)
for k in job["rows"]:
    for how in ("event_hash", "prev_hash", "payload", "drop"):
        d = json.loads(json.dumps(src))
        rows = d["journal"]["events"]
        if how == "drop":
            del rows[k]
        elif how == "payload":
            rows[k]["n"] = rows[k].get("n", 0) + 1
        else:
            h = rows[k][how] or "0" * 64
            rows[k][how] = ("1" if h[0] == "0" else "0") + h[1:]
        write(d, f"{how}-{k}")
print(json.dumps(out))`;

test("a tampered journal, fast and exact rows in turn: the oracle's status, divergent step and errors", async () => {
  const dir = dirs.make();
  const j = EventJournal.create("r", { sddDir: dir });
  for (let i = 0; i < 40; i++) {
    const payload = new Map<string, PyValue>([["n", new PyNum(String(i), false)], ["tool", `t${i % 3}`]]);
    // an escaped key: the exact path takes the row
    if (i % 7 === 3 || (i >= 20 && i < 24)) payload.set("k\u00e9y", "v");
    j.record(i % 5 === 0 ? "tool_call" : "tick_start", payload);
  }
  j.close();
  const key = generateKeyPairSync("ed25519").privateKey;
  const src = join(dir, "receipt.json");
  await buildRunReceipt({ sddDir: dir, runId: "r", key, out: src });
  const clean = await verifyRunReceipt(src);
  expect([clean.status, clean.divergent_step, clean.journal_events]).toEqual(["ok", null, 40]);

  // row 0; fast rows; the rows around an exact one (3) and a run of exact ones (20–23); the last
  const rows = [0, 1, 2, 3, 4, 10, 19, 20, 23, 24, 25, 39];
  const files = runPython(TAMPER, { src, dir, rows }) as string[];
  expect(files.length).toBe(4 * rows.length);
  const want = oracle(files);
  for (let i = 0; i < files.length; i++) {
    const v = await verifyRunReceipt(files[i]!);
    expect([files[i], v.status, v.divergent_step, v.errors]).toEqual([files[i], want[i]!.status, want[i]!.divergent_step, want[i]!.errors]);
  }
}, 60_000);
