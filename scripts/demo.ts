/**
 * `npm run demo`: a real, offline orchestration run end to end.
 *
 *   1. build dist/bernstein if it is missing (BERNSTEIN_BIN overrides the binary);
 *   2. make a fresh ./demo-workspace/ (or --workspace DIR) from examples/demo/;
 *   3. bernstein run plan.yaml          (script agents, embedded SQLite store)
 *   4. bernstein replay latest          (the run display)
 *   5. bernstein replay latest --verify (chain + seal)
 *   6. bernstein replay export <agent>  (a portable receipt of one agent)
 *   7. bernstein replay verify <receipt>
 *
 * Each step prints its command and output. A step whose command is not
 * implemented in this build (error `not_implemented`) is skipped with a
 * note; any other failure stops the demo with that step's exit code.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const argv = process.argv.slice(2);
const wsIdx = argv.indexOf("--workspace");
const workspace = resolve(wsIdx >= 0 ? argv[wsIdx + 1]! : join(root, "demo-workspace"));
const bin = resolve(process.env.BERNSTEIN_BIN ?? join(root, "dist", "bernstein"));

function heading(text: string): void {
  process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`.replace(/\x1b\[[0-9;]*m/g, process.stdout.isTTY && !process.env.NO_COLOR ? "$&" : ""));
}

if (!existsSync(bin)) {
  heading(`building ${relative(root, bin)} (missing)`);
  const r = Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), "--out", bin], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (r.exitCode !== 0) process.exit(r.exitCode ?? 1);
}

rmSync(workspace, { recursive: true, force: true });
mkdirSync(workspace, { recursive: true });
for (const f of ["plan.yaml", "bernstein.yaml", "agent.ts"]) cpSync(join(root, "examples", "demo", f), join(workspace, f));
heading(`workspace ${workspace}`);

interface StepResult {
  code: number;
  out: string;
  skipped: boolean;
}

async function step(title: string, args: string[]): Promise<StepResult> {
  heading(title);
  process.stdout.write(`$ bernstein ${args.join(" ")}\n`);
  const proc = Bun.spawn([bin, ...args], { cwd: workspace, stdout: "pipe", stderr: "pipe", env: { ...process.env } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  process.stdout.write(out);
  if (err) process.stderr.write(err);
  if (code !== 0 && /not_implemented|is not implemented yet/.test(out + err)) {
    process.stdout.write(`(skipped: '${args[0]} ${args[1] ?? ""}' is not implemented in this build yet)\n`);
    return { code, out, skipped: true };
  }
  if (code !== 0) {
    process.stdout.write(`\ndemo step failed with exit code ${code}\n`);
    process.exit(code);
  }
  return { code, out, skipped: false };
}

await step("run the demo plan with script agents", ["run", "plan.yaml", "--port", "0"]);
await step("replay the latest run", ["replay", "latest"]);
await step("verify the latest run's journal (chain and seal)", ["replay", "latest", "--verify"]);

const journals = join(workspace, ".sdd", "runtime", "journal");
const agents = existsSync(journals) ? readdirSync(journals).sort() : [];
if (agents.length === 0) {
  process.stdout.write("no agent step journals were written; skipping the receipt steps\n");
} else {
  const agent = agents[0]!;
  const receipt = join("receipts", `${agent}.tar`);
  const exported = await step(`export a receipt of agent ${agent}`, ["replay", "export", agent, receipt]);
  if (!exported.skipped) await step("verify the receipt", ["replay", "verify", receipt]);
}
heading("demo finished");
