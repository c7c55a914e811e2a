import { indexObjectAtJs, indexObjectAtWasm, KeyTable, RowIndex } from "../../../src/codec/row-index.ts";
import { MAX_DEPTH } from "../../../src/codec/bytes.ts";
import { deepNesting, mutateBytes } from "../mutate.ts";
import { linesOf, runJournalVectors, stepJournalVectors } from "../seeds.ts";
import { violation, type FuzzTarget } from "../types.ts";

/**
 * (h) The codec's two row scanners (src/codec/row-index.ts, the JavaScript
 * Scanner, and row-index.wat, the WebAssembly one): every mutated row,
 * scanned alone and from inside a larger buffer, must be taken or declined
 * by both alike, and when taken leave the same tape word for word, the same
 * top-level members, key ids, slots and repeated-name flag.
 */

const KEYS = new KeyTable(["timestamp", "event_type", "payload", "index", "prev_hash", "event_hash", "payload_hash", "ts", "event", "step"]);

function sameIndex(a: RowIndex, b: RowIndex): string | null {
  if (a.count !== b.count) return `token count ${a.count} vs ${b.count}`;
  for (let i = 0; i < 4 * a.count; i++) if (a.tape[i] !== b.tape[i]) return `tape word ${i}: ${a.tape[i]} vs ${b.tape[i]}`;
  if (a.members !== b.members) return `members ${a.members} vs ${b.members}`;
  for (let m = 0; m < a.members; m++) if (a.member[m] !== b.member[m] || a.keyId[m] !== b.keyId[m]) return `member ${m}`;
  for (let i = 0; i < a.slot.length; i++) if (a.slot[i] !== b.slot[i]) return `slot ${i}`;
  if (a.repeatedName !== b.repeatedName) return "repeatedName";
  if (a.rowEnd !== b.rowEnd) return "rowEnd";
  return null;
}

export function rowIndexTarget(): FuzzTarget {
  const js = new RowIndex();
  const wasm = new RowIndex();
  let taken = 0;
  let declined = 0;
  const check = (b: Uint8Array, s: number, e: number): void => {
    const x = indexObjectAtJs(b, s, e, js, KEYS);
    const y = indexObjectAtWasm(b, s, e, wasm, KEYS);
    if (x !== y) throw violation("row_index_verdict", `js ${x} vs wasm ${y} (row at ${s}, ${e - s} bytes)`);
    if (x < 0) {
      declined++;
      return;
    }
    taken++;
    const d = sameIndex(js, wasm);
    if (d !== null) throw violation("row_index_tape", d);
  };
  return {
    name: "row-index",
    seeds: () => [...runJournalVectors(), ...stepJournalVectors()].flatMap((v) => linesOf(v.bytes)).filter((l) => l.length < 1 << 16),
    mutate: (rng, seeds) => mutateBytes(rng, rng.pick(seeds), { corpus: seeds, maxBytes: 1 << 18 }),
    run(input, rng) {
      check(input, 0, input.length);
      // inside a larger buffer: bytes before it, and bytes after its bound that are not the row's
      const at = 1 + rng.int(9);
      const framed = new Uint8Array(at + input.length + 3);
      framed.fill(0x20, 0, at);
      framed.set(input, at);
      framed.set([0x7d, 0x5d, 0x22], at + input.length);
      check(framed, at, at + input.length);
    },
    extremes: () => [
      { name: `nesting ${MAX_DEPTH - 1}, ${MAX_DEPTH}, ${MAX_DEPTH + 1} (the bound) and 100000 deep: both scanners alike`, run: () => {
        for (const depth of [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 100_000]) {
          const b = new TextEncoder().encode(`{"a":${deepNesting(depth - 1, "mixed")}}`);
          check(b, 0, b.length);
        }
      } },
      { name: "a 15 MB string row and a 1M-token row: both scanners alike", run: () => {
        const long = new TextEncoder().encode(`{"a":"${"\u00e9x\\n".repeat(3 << 20)}"}`);
        check(long, 0, long.length);
        const many = new TextEncoder().encode(`{"a":[${"1,".repeat(1 << 20)}2]}`);
        check(many, 0, many.length);
      } },
    ],
    stats: () => ({ taken, declined }),
  };
}
