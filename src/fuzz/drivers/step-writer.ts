/**
 * Crash-trial driver: appends steps to one agent's step journal as fast as
 * it can until it is killed. Steps vary in size (some ~100 KB) so a kill
 * often lands inside a write. Usage: bun step-writer.ts SDD AGENT SEED
 */
import { StepJournal } from "../../steps/writer.ts";
import { Rng } from "../rng.ts";

const [sdd, agent, seed] = process.argv.slice(2);
const rng = new Rng(Number(seed ?? 1));
const j = StepJournal.open(sdd!, agent!);
process.stdout.write("ready\n");
for (let i = 0; ; i++) {
  const big = rng.chance(0.05);
  j.append({
    input_hash: `in-${i}`,
    model: rng.pick(["m1", "m2", null]),
    prompt: "p".repeat(big ? 100_000 : rng.int(400)) + ` step ${i} é🚀`,
    tool_call: rng.chance(0.5) ? { name: "run", args: { cmd: `echo ${i}`, n: rng.int(100) } } : null,
    tool_result: rng.chance(0.5) ? { ok: true, out: "o".repeat(rng.int(300)) } : null,
    effort: rng.chance(0.3) ? "high" : null,
  });
}
