import { InputError, UsageError } from "../../../errors.ts";
import { checkInput } from "../../../fsutil/input.ts";
import { resolveJournalTarget } from "../../../journal/target.ts";
import { readSealFile } from "../../../journal/seal.ts";
import type { FastVerifyResult } from "../../../journal/fast/engine.ts";
import { verifyJournal, writeDivergenceReport, type JournalSeal } from "../../../journal/verify.ts";
import { paint } from "../../../render/ansi.ts";
import { defineCliCommand } from "../../command.ts";
import { byteProgress } from "../../progress.ts";
import { fastVerifyNotes, parseThreads, verifyInterrupt, reportVerifyStats, verifyResultJson } from "../../fast-verify.ts";
import { withInterrupts } from "../../interrupt.ts";
import { journalOutcome } from "../../../ci/journal.ts";
import { ciArgs, ciModeOf } from "../../ci-flags.ts";
import { finishVerify, verifyEach, type InputVerdict } from "../../ci-report.ts";
import { log } from "../../log.ts";
import { tornTailFix, tornTailProse, withTornTailJson } from "../../torn-hint.ts";

const USAGE =
  "usage: bernstein journal verify <FILE|RUN_ID|->... [--seal FILE] [--sdd-dir DIR] [--threads N] [--links-only] [--format text|github] [--junit FILE]";

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
    target: { type: "positional", required: false, description: "Journal file path(s), run id(s) under <sdd-dir>/runs, or - (standard input); one verdict each" },
    seal: {
      type: "string",
      description: "Seal file {\"head\", \"event_count\"} to check identity against (default: the seal.json beside journal.jsonl)",
    },
    "sdd-dir": { type: "string", description: "State directory holding runs/ (default .sdd)" },
    threads: { type: "string", description: "Worker threads (default: available cores; 1 = no workers)" },
    "links-only": {
      type: "boolean",
      description: "Check only prev_hash links and hash format, without re-hashing payloads (a quick pass)",
    },
    ...ciArgs,
  },
  async run({ args, json }) {
    const words = args._.map(String);
    if (words.length === 0) throw new UsageError(USAGE);
    if (args.seal !== undefined && words.length > 1) {
      throw new UsageError(`--seal names one journal's seal, but ${words.length} journals were given`, "flag_not_applicable", { flags: ["--seal"] });
    }
    const mode = ciModeOf(args, json);
    const threads = parseThreads(args.threads);
    const reports = await verifyEach("journal", words, (word) => verifyOne(word, args, threads, json));
    return finishVerify(reports, { command: "journal verify", json, mode });
  },
});

interface VerifyArgs {
  seal?: string;
  "sdd-dir"?: string;
  "links-only"?: boolean;
}

/** One journal's verdict (a run id picks up its seal.json); missing or unreadable input throws. */
async function verifyOne(word: string, args: VerifyArgs, threads: number | undefined, json: boolean): Promise<InputVerdict> {
    const target = resolveJournalTarget(word, args["sdd-dir"] ?? ".sdd");
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
    if (target.stdin && threads !== undefined && threads > 1) log.info("--threads ignored: standard input is verified as one stream, in one thread");
    const progress = byteProgress("verifying");
    const linksOnly = Boolean(args["links-only"]);
    const result = await withInterrupts(verifyInterrupt("journal verify", json, target.path, progress), () =>
      verifyJournal(target.path, { seal, threads, linksOnly, onProgress: progress.onProgress }).finally(progress.finish),
    );
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
    const fix = target.stdin ? null : tornTailFix(result, target.path);
    const implicit = !args.seal && sealPath ? [paint("dim", `seal: ${sealPath} (the run's seal.json, beside the journal; --seal FILE names another)`)] : [];
    return {
      ok: result.ok,
      lines: [...verdictLines(result, sealPath, reportPath), ...implicit, ...(fix ? [tornTailProse(fix)] : [])],
      doc: withTornTailJson({ ...verifyResultJson(result), seal: sealPath }, fix),
      file: target.path,
      outcome: (base) => journalOutcome({ base, result, seal }),
    };
}
