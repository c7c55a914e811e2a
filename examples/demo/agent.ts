/**
 * A demo agent for the `script` adapter. It reads its task from the
 * BERNSTEIN_* environment (the prompt also arrives on stdin), "works" for a
 * moment, writes out/<task_id>.md, and ends with the result line the
 * orchestrator reads: a JSON object with result_summary and cost_usd.
 */
import { mkdirSync, writeFileSync } from "node:fs";

const env = process.env;
const taskId = env.BERNSTEIN_TASK_ID ?? "unknown";
const title = env.BERNSTEIN_TASK_TITLE ?? "";
const model = env.BERNSTEIN_MODEL || "default";
const prompt = await new Response(Bun.stdin.stream()).text();

console.log(`[${env.BERNSTEIN_AGENT_ID}] ${title} (model ${model}, attempt ${env.BERNSTEIN_ATTEMPT})`);
console.log(`prompt: ${prompt.split("\n").length} line(s)`);
await Bun.sleep(150 + Math.floor(Math.random() * 250));

mkdirSync("out", { recursive: true });
writeFileSync(`out/${taskId}.md`, `# ${title}\n\nDone by ${env.BERNSTEIN_AGENT_ID} with ${model}.\n`);

const cost = model === "demo-large" ? 0.0125 : 0.0042;
console.log(JSON.stringify({ result_summary: `${title}: wrote out/${taskId}.md`, cost_usd: cost }));
