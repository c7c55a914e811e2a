import { InputError, UsageError } from "../../../errors.ts";
import { checkInput } from "../../../fsutil/input.ts";
import { resolveJournalTarget } from "../../../journal/target.ts";
import { readSealFile } from "../../../journal/seal.ts";
import type { FastVerifyResult } from "../../../journal/fast/engine.ts";
import { verifyJournal, writeDivergenceReport, type JournalSeal } from "../../../journal/verify.ts";
import { paint } from "../../../render/ansi.ts";
import { defineCliCommand } from "../../command.ts";
import { fastVerifyNotes, parseThreads, progressLine, reportVerifyStats, verifyResultJson } from "../../fast-verify.ts";
import { log } from "../../log.ts";
import { printJson, printLines } from "../../output.ts";

const USAGE = "usage: bernstein journal verify <FILE|RUN_ID|-> [--seal FILE] [--sdd-dir DIR] [--threads N] [--links-only]";

function verdictLines(r: FastVerifyResult, sealSource: string | null, reportPath: string | null): string[] {
  const identity =
    r.identity === "unverifiable" ? "identity=unverifiable (no seal)" : `identity=${r.identity} (seal ${sealSource})`;
  const tail = `coverage=${r.coverage}; ${identity}`;
  const lines: string[] = [];
  if (r.chain_consistent) {
    const style = r.ok ? "green" : "yellow";
    const what = r.payloads_checked ? "chain intact" : "links intact (payloads NOT checked)";
    lines.push(paint(style, `${what}: ${r.count} events, head ${r.head || "(empty)"}; ${tail}`));
  } else {
    lines.push(
      paint("bold red", `DIVERGENCE at step ${r.divergent_index}: expected ${r.expected_hash ?? "(not computable)"} actual ${r.actual_hash || "(empty)"}`),
      `${r.count} events; ${tail}`,
    );
  }
  for (const e of r.errors) lines.push(`  ${paint("red", "error:")} ${e}`);
  if (reportPath) lines.push(`Divergence report written to: ${reportPath}`);
  for (const note of fastVerifyNotes(r)) lines.push(paint("dim", note));
  return lines;
}

export default defineCliCommand({
  meta: {
    name: "verify",
    description:
      "Verify a run journal's Merkle chain, coverage and seal identity (exit 0 ok, 1 negative verdict, 2 usage, 3 unreadable)",
  },
  args: {
    target: { type: "positional", required: false, description: "Journal file path, a run id under <sdd-dir>/runs, or - (standard input)" },
    seal: {
      type: "string",
      description: "Seal file {\"head\", \"event_count\"} to check identity against (default for a run id: <run_dir>/seal.json)",
    },
    "sdd-dir": { type: "string", description: "State directory holding runs/ (default .sdd)" },
    threads: { type: "string", description: "Worker threads (default: available cores; 1 = no workers)" },
    "links-only": {
      type: "boolean",
      description: "Check only prev_hash links and hash format, without re-hashing payloads (a quick pass)",
    },
  },
  async run({ args, json }) {
    const words = args._.map(String);
    if (words.length !== 1) throw new UsageError(USAGE);
    const target = resolveJournalTarget(words[0]!, args["sdd-dir"] ?? ".sdd");
    const sealPath = args.seal ?? target.defaultSealPath;
    const seal: JournalSeal | null = sealPath ? readSealFile(sealPath) : null;
    // Checked before any read: a FIFO, device or directory is refused (input_not_regular_file), never waited on.
    const present = checkInput(target.path, { what: "journal" }) !== "missing";
    if (!seal && !present) {
      if (target.byRunId) {
        throw new InputError("journal_missing", `no journal for run ${target.runId}: ${target.path}`, {
          run_id: target.runId,
          path: target.path,
        });
      }
      throw new InputError("journal_unreadable", `journal not found: ${target.path}`, { path: target.path });
    }
    const threads = parseThreads(args.threads);
    if (target.stdin && threads !== undefined && threads > 1) log.info("--threads ignored: standard input is verified as one stream, in one thread");
    const progress = progressLine();
    let result: FastVerifyResult;
    try {
      result = await verifyJournal(target.path, {
        seal,
        threads,
        linksOnly: Boolean(args["links-only"]),
        onProgress: progress.onProgress,
      });
    } finally {
      progress.finish();
    }
    await reportVerifyStats(result);
    let reportPath: string | null = null;
    if (!result.ok && !target.stdin) {
      try {
        reportPath = writeDivergenceReport(target.runDirPath, target.runId, result);
      } catch {
        // Best effort, as in Python: a read-only location must not turn a
        // verdict into an error.
      }
    }
    if (json) await printJson(verifyResultJson(result));
    else await printLines(...verdictLines(result, sealPath, reportPath));
    return result.ok ? 0 : 1;
  },
});
