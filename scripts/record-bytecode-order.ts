/**
 * `bun scripts/record-bytecode-order.ts`: record which functions
 * the binary's verbs load, as `scripts/bytecode.order`, the profile
 * `scripts/build.ts` lays the binary's bytecode out by (Bun's
 * `--bytecode-order`: the functions a run uses are placed together at the
 * front, so a verb pages in less of the binary; the program's behaviour is
 * the same, and the build stays reproducible).
 *
 * It builds the binary, runs each verb once on small journals of every shape
 * the generator makes (the same code paths as on large ones: what is
 * recorded is which functions load, not how long they run), with
 * `BUN_BYTECODE_ORDER_OUT`, and merges the profiles, the most common verbs
 * first. Functions are matched by a hash of their syntax, so the profile
 * keeps applying as the code changes; record again when many verbs changed.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateJournal, generateStepJournal, SHAPES } from "../bench/journal-gen.ts";
import { BYTECODE_ORDER, compile } from "./build.ts";

const root = join(import.meta.dir, "..");

/** The verbs recorded, in the order their profiles are merged (the most common first). */
function verbs(bin: string, sdd: string, agentSdd: string, tmp: string): { name: string; argv: string[]; stdin?: string }[] {
  const at = ["--sdd-dir", sdd];
  const journal = (run: string) => join(sdd, "runs", run, "journal.jsonl");
  const list: { name: string; argv: string[]; stdin?: string }[] = [
    { name: "help", argv: ["--help"] },
    { name: "verify", argv: ["journal", "verify", journal("bench")] },
    { name: "verify-json", argv: ["journal", "verify", journal("mixed"), "--as-json", "--threads", "2"] },
    { name: "list", argv: ["replay", "list", ...at] },
  ];
  for (const shape of SHAPES) {
    list.push(
      { name: `prose-${shape}`, argv: ["replay", shape, ...at] },
      { name: `json-${shape}`, argv: ["replay", shape, "--as-json", ...at] },
      { name: `replay-verify-${shape}`, argv: ["replay", shape, "--verify", "--as-json", ...at] },
      { name: `from-step-${shape}`, argv: ["replay", shape, "--from-step", "3", "--as-json", ...at] },
      { name: `html-${shape}`, argv: ["replay", shape, "--html", join(tmp, `${shape}.html`), ...at] },
    );
  }
  list.push(
    { name: "diff", argv: ["replay", "diff", "bench", "bench-copy", "--as-json", ...at] },
    { name: "repair", argv: ["replay", "repair", "bench-copy", "--as-json", ...at] },
    { name: "record", argv: ["journal", "record", "recorded", "--sdd-dir", sdd], stdin: join(tmp, "events.jsonl") },
    { name: "agent-prose", argv: ["replay", "agent-rec", "--sdd-dir", agentSdd] },
    { name: "agent-json", argv: ["replay", "agent-rec", "--as-json", "--sdd-dir", agentSdd] },
    { name: "agent-debug", argv: ["replay", "debug", "agent-rec", "--sdd-dir", agentSdd] },
    { name: "export", argv: ["replay", "export", "agent-rec", join(tmp, "agent.tar"), "--force", "--sdd-dir", agentSdd] },
    { name: "receipt-verify", argv: ["replay", "verify", join(tmp, "agent.tar")] },
    { name: "diff-journal", argv: ["replay", "diff-journal", join(tmp, "agent.tar"), "agent-rec", "--sdd-dir", agentSdd] },
    { name: "keys", argv: ["keys", "generate", "--out-dir", join(tmp, "keys"), "--name", "k"] },
    { name: "run-receipt", argv: ["verify", "run", "mixed", "--signing-key-path", join(tmp, "keys", "k.key"), "-o", join(tmp, "run-receipt.json"), ...at] },
    { name: "receipt-check", argv: ["verify", "receipt", join(tmp, "run-receipt.json"), "--public-key", join(tmp, "keys", "k.pub"), "--as-json"] },
  );
  return list.map((v) => ({ ...v, argv: [bin, ...v.argv] }));
}

/** The profiles' lines merged: each entry once, where it first appears (the header once, first). */
export function mergeProfiles(profiles: string[]): string {
  const seen = new Set<string>();
  let header: string | null = null;
  const out: string[] = [];
  for (const text of profiles) {
    const lines = text.split("\n");
    if (header === null) header = lines[0]!;
    else if (lines[0] !== header) throw new Error(`profiles of two formats: ${header} and ${lines[0]}`);
    for (const line of lines.slice(1)) {
      if (line === "" || seen.has(line)) continue;
      seen.add(line);
      out.push(line);
    }
  }
  if (header === null) throw new Error("no profile was recorded");
  return [header, ...out, ""].join("\n");
}

async function record(): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), "bytecode-order-"));
  try {
    const bin = join(tmp, "bin", "bernstein");
    await compile(bin);
    const sdd = join(tmp, "sdd");
    for (const shape of SHAPES) generateJournal(sdd, shape, shape === "large-rows" ? 3e6 : 1e6, 8, shape);
    mkdirSync(join(sdd, "runs", "bench-copy"), { recursive: true });
    writeFileSync(join(sdd, "runs", "bench-copy", "journal.jsonl"), readFileSync(join(sdd, "runs", "bench", "journal.jsonl")));
    const events = readFileSync(join(sdd, "runs", "mixed", "journal.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .slice(0, 2000)
      .map((line) => {
        const row = JSON.parse(line) as { event: string; payload?: Record<string, unknown> };
        return JSON.stringify({ event: row.event, ...(row.payload ?? {}) });
      });
    writeFileSync(join(tmp, "events.jsonl"), events.join("\n") + "\n");
    const agentSdd = join(tmp, "agent-sdd");
    generateStepJournal(agentSdd, "agent-rec", 2000);
    const profiles = join(tmp, "profiles");
    mkdirSync(profiles);
    const texts: string[] = [];
    for (const [i, v] of verbs(bin, sdd, agentSdd, tmp).entries()) {
      const prefix = `${String(i).padStart(2, "0")}-${v.name}`;
      const proc = Bun.spawnSync(v.argv, {
        env: { ...process.env, NO_COLOR: "1", BUN_BYTECODE_ORDER_OUT: join(profiles, `${prefix}-%p.order`) },
        stdin: v.stdin ? Bun.file(v.stdin) : "ignore",
        stdout: "ignore",
        stderr: "pipe",
      });
      // a verb that refuses still loads its code; one that crashed recorded nothing useful
      if (proc.exitCode === null || proc.exitCode > 3) throw new Error(`${v.name}: exit ${proc.exitCode}: ${proc.stderr.toString().slice(0, 500)}`);
      // the main thread's profile first, then its workers' (their files sort after by name)
      const files = readdirSync(profiles).filter((f) => f.startsWith(prefix)).sort();
      if (files.length === 0) throw new Error(`${v.name}: no profile written`);
      for (const f of files) texts.push(readFileSync(join(profiles, f), "utf8"));
    }
    return mergeProfiles(texts);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const text = await record();
  writeFileSync(join(root, BYTECODE_ORDER), text);
  console.log(`wrote ${BYTECODE_ORDER}: ${text.split("\n").length - 2} entries`);
}
