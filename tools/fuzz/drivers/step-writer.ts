/**
 * Crash-trial driver: appends steps to one agent's step journal as fast as
 * it can until it is killed. Steps vary in size (some ~100 KB) so a kill
 * often lands inside a write. Usage: bun step-writer.ts SDD AGENT SEED [STEPS]
 * With STEPS it appends that many and exits 0, or exits 2 printing the
 * error code when the journal cannot be opened (the concurrent-writer trials).
 */
import { BernsteinError } from "../../../src/errors/index.ts";
import { StepJournal } from "../../../src/steps/writer.ts";
import { Rng } from "../rng.ts";

const [sdd, agent, seed, stepsArg] = process.argv.slice(2);
const rng = new Rng(Number(seed ?? 1));
const limit = stepsArg === undefined ? Infinity : Number(stepsArg);
let j: StepJournal;
try {
  j = StepJournal.open(sdd!, agent!);
} catch (err) {
  if (!(err instanceof BernsteinError) || limit === Infinity) throw err;
  process.stdout.write(`${err.code}\n`);
  process.exit(2);
}
process.stdout.write("ready\n");
for (let i = 0; i < limit; i++) {
  const big = limit === Infinity && rng.chance(0.05);
  j.append({
    input_hash: `in-${i}`,
    model: rng.pick(["m1", "m2", null]),
    prompt: "p".repeat(big ? 100_000 : rng.int(400)) + ` step ${i} é🚀`,
    tool_call: rng.chance(0.5) ? { name: "run", args: { cmd: `echo ${i}`, n: rng.int(100) } } : null,
    tool_result: rng.chance(0.5) ? { ok: true, out: "o".repeat(rng.int(300)) } : null,
    effort: rng.chance(0.3) ? "high" : null,
  });
}
j.close();
process.stdout.write("done\n");
