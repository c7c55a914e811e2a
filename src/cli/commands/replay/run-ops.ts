import { existsSync } from "node:fs";
import { UsageError, errorMessage } from "../../../errors/index.ts";
import { projectionJson, projectionProse, projectRunFast } from "../../../replay/fast-project.ts";
import type { FastVerifyResult } from "../../../journal/model.ts";
import { paint } from "../../../render/ansi.ts";
import { sanitizeCell } from "../../../render/table.ts";
import { assertJournalExists, type RunRef } from "../../../replay/discovery.ts";
import { fastVerifyNotes, unauthenticatedLine, parseThreads, verifyFacts } from "../../fast-verify.ts";
import { ciModeOf } from "../../ci-flags.ts";
import { finishVerify, verifyEach, type InputVerdict } from "../../ci-report.ts";
import { log } from "../../log.ts";
import { printLines, writeStdoutBytes } from "../../output.ts";
import { journalVerdict } from "../../verdicts.ts";
import type { ReplayContext } from "./context.ts";
import { refuseFlags } from "./flags.ts";
import type { ProviderStateVerdict } from "../../../journal/provider-state.ts";
import { replayVerifyJson } from "../../../journal/verdict.ts";
import { spineReportIfAny, spineJson, spineLines } from "../../../lineage/report.ts";
import { sealFor } from "./seal-source.ts";

/**
 * The run-journal operations of `replay <RUN_ID>`: `--verify` (the journal
 * core's verify, against the run's seal when it has one) and `--from-step N`
 * (the state projection). Both read the journal only.
 */

/**
 * `replay <RUN_ID> --verify [--seal F]`: exit 0 when the chain is intact,
 * nothing was discarded and the seal (if any) matches; otherwise exit 1 with
 * `divergence_report.json` written next to the journal.
 */
export async function verifyRun(ctx: ReplayContext, run: RunRef): Promise<number> {
  refuseFlags(ctx, ["verify", "seal", "threads", "links-only", "format", "junit", "allow-empty"], "replay <RUN_ID> --verify");
  const threads = parseThreads(ctx.args.threads);
  const mode = ciModeOf(ctx.args, ctx.json);
  const reports = await verifyEach("journal", [run.runId], () => runVerdict(ctx, run, threads));
  return finishVerify(reports, { command: "replay --verify", json: ctx.json, mode });
}

async function runVerdict(ctx: ReplayContext, run: RunRef, threads: number | undefined): Promise<InputVerdict> {
  const source = sealFor(ctx, run);
  // Without a seal a missing journal is missing input; with one it is a verdict (the sealed journal is gone).
  if (!source.seal) assertJournalExists(run);
  return journalVerdict({
    command: "replay --verify",
    json: ctx.json,
    path: run.journal,
    runId: run.runId,
    seal: source.seal,
    threads,
    linksOnly: Boolean(ctx.args["links-only"]),
    allowEmpty: Boolean(ctx.args["allow-empty"]),
    reportDir: existsSync(run.runDir) ? run.runDir : null,
    facts: (progress) => ({ run_id: run.runId, ...verifyFacts(run.journal, progress) }),
    onReportError: (err) => log.warn(`could not write the divergence report: ${errorMessage(err)}`),
    spine: (result) => spineReportIfAny(result, ctx.sddDir, run.runId),
    providerState: true,
    render: ({ result, checks, reportPath }) => {
      const gate = checks.gate;
      return {
        lines: () => [...(gate && !gate.ok ? gateProse(run, result, gate) : verifyProse(run, result, source.path, reportPath)), ...spineLines(checks.spine)],
        doc: replayVerifyJson({ result, checks, runId: run.runId, seal: source.path, spine: spineJson(checks.spine) }),
      };
    },
  });
}

function gateProse(run: RunRef, r: FastVerifyResult, gate: ProviderStateVerdict): string[] {
  return [
    paint("bold bright_red", "PROVIDER STATE") +
      ` check failed for run ${run.runId}: chain intact over ${r.count} steps, but ${gate.errors.length} provider-state finding(s) in ${gate.mutations} provider_state_mutation row(s)`,
    ...gate.errors.map((e) => `  - ${sanitizeCell(e)}`),
    paint("dim", unauthenticatedLine(r)),
  ];
}

function verifyProse(run: RunRef, r: FastVerifyResult, sealPath: string | null, reportPath: string | null): string[] {
  return [...verdictProse(run, r, sealPath, reportPath), paint("dim", unauthenticatedLine(r)), ...fastVerifyNotes(r).map((n) => paint("dim", n))];
}

function verdictProse(run: RunRef, r: FastVerifyResult, sealPath: string | null, reportPath: string | null): string[] {
  const sealNote = sealPath ? ` (seal: ${sealPath})` : "";
  if (r.ok) {
    return [
      paint("bold bright_green", r.payloads_checked ? "chain intact" : "links intact (payloads NOT checked)") +
        ` for ${run.runId} (${r.count} steps); identity=${r.identity}${sealNote}`,
      `head=${r.head || "(empty)"}`,
      ...(r.identity === "unverifiable"
        ? [paint("dim", "No seal: the chain is consistent, but a journal cut at a row boundary would look the same.")]
        : []),
    ];
  }
  const lines: string[] = [];
  if (!r.chain_consistent) {
    lines.push(paint("bold bright_red", "DIVERGENCE") + ` first divergent step ${r.divergent_index} in run ${run.runId}`);
    lines.push(`  expected: ${r.expected_hash ?? "(not computable)"}`);
    lines.push(`  actual:   ${sanitizeCell(r.actual_hash || "(empty)")}`);
    lines.push(`  head of the verified prefix (steps before ${r.divergent_index}): ${r.head || "(empty)"}`);
  } else if (r.coverage !== "complete") {
    lines.push(
      paint("bold bright_red", "INCOMPLETE") +
        ` journal for run ${run.runId}: physical line(s) ${r.discarded_line_indices.join(", ")} could not be read; ` +
        `chain consistent over the ${r.count} readable steps; identity=${r.identity}`,
    );
  } else {
    lines.push(
      paint("bold bright_red", "SEAL MISMATCH") +
        ` for run ${run.runId}: identity=${r.identity}${sealNote}; chain consistent over ${r.count} steps`,
    );
  }
  // Errors can quote journal content (a stored hash, a hash_profile name): never raw to the terminal.
  for (const e of r.errors) lines.push(`  - ${sanitizeCell(e)}`);
  if (reportPath) lines.push(`Divergence report written to: ${reportPath}`);
  return lines;
}

/**
 * `--from-step N`: a non-negative integer (Python `int()` spelling). Python
 * takes a negative N as 0; here it is a usage error, since "step -1" names
 * no state anyone could want.
 */
function parseStep(raw: string): number {
  const t = raw.trim().replace(/(?<=\d)_(?=\d)/g, "");
  if (/^-\d+$/.test(t)) throw new UsageError(`--from-step needs a step number of 0 or more, got ${JSON.stringify(raw)}`, "usage", { from_step: raw });
  if (!/^\+?\d+$/.test(t)) throw new UsageError(`--from-step needs an integer, got ${JSON.stringify(raw)}`);
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}

/**
 * `replay <RUN_ID> --from-step N`: `{"events", "head_hash", "ok", "step_count"}`
 * as Python's `json.dumps({**state, "ok": True}, sort_keys=True)` (one line, ASCII-escaped),
 * identical bytes on every invocation over the same file.
 */
export async function projectRun(ctx: ReplayContext, run: RunRef): Promise<number> {
  refuseFlags(ctx, ["from-step"], "replay <RUN_ID> --from-step");
  const n = parseStep(ctx.args["from-step"]!);
  const state = await projectRunFast(run.journal, n);
  // The JSON stays the projection Python prints; the shortfall is said on stderr.
  if (state.step_count < n) {
    log.warn(`--from-step ${n} is beyond the end of ${run.runId}: it has ${state.step_count} step(s); this is the state through step ${state.step_count}`);
  }
  if (ctx.json) {
    for (const piece of projectionJson(run.journal, state)) await writeStdoutBytes(piece);
    return 0;
  }
  for (const piece of projectionProse(run.runId, run.journal, state)) await writeStdoutBytes(piece);
  return 0;
}
