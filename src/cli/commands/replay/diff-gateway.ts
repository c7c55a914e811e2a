import { diffGatewayInputs, gatewayLogPath, type GatewayDiff } from "../../../gateway/diff.ts";
import { paint } from "../../../render/ansi.ts";
import { renderJson } from "../../../render/json.ts";
import { sanitizeCell } from "../../../render/table.ts";
import type { RunRef } from "../../../replay/discovery.ts";
import { printJson, printLines } from "../../output.ts";
import type { ReplayContext } from "./context.ts";

/**
 * `replay diff RUN_A RUN_B` when both runs carry a ReplayGateway log: the
 * upstream comparison (src/gateway/diff.ts). The JSON is upstream's document
 * (`diverged, index, reason, reason_code, mutation_kind, a_event, b_event`)
 * inside our verdict (`ok`, `error`, `detail`), with the log compared named.
 */
export async function runGatewayDiff(ctx: ReplayContext, a: RunRef, b: RunRef): Promise<number> {
  const pa = gatewayLogPath(a.runDir);
  const pb = gatewayLogPath(b.runDir);
  const d = diffGatewayInputs(pa, pb, { allowEmpty: ctx.args["allow-empty"] === true });
  if (ctx.json) {
    await printJson({
      ok: !d.diverged,
      ...(d.diverged ? { error: "divergence", detail: d.reason } : {}),
      log: "events.jsonl",
      a_log: pa,
      b_log: pb,
      diverged: d.diverged,
      index: d.index,
      reason: d.reason,
      reason_code: d.reason_code,
      mutation_kind: d.mutation_kind,
      a_event: d.a_event,
      b_event: d.b_event,
      a_rows: d.a_rows,
      b_rows: d.b_rows,
      skipped_lines: d.skipped_lines,
      key_schemes: d.key_schemes,
      notes: d.notes,
    });
  } else {
    await printLines(...prose(a, b, d));
  }
  return d.diverged ? 1 : 0;
}

function prose(a: RunRef, b: RunRef, d: GatewayDiff): string[] {
  const lines = [paint("dim", `compared: the gateway logs (events.jsonl) of ${a.runId} (${d.a_rows} events) and ${b.runId} (${d.b_rows} events)`)];
  if (!d.diverged) lines.unshift(paint("bright_green", "No divergence") + `: ${d.reason}`);
  else {
    lines.unshift(paint("bold bright_red", "Divergence") + ` at event index ${d.index}: ${sanitizeCell(d.reason)}`);
    lines.push(paint("dim", `reason_code=${d.reason_code}${d.mutation_kind ? ` mutation_kind=${d.mutation_kind}` : ""}`));
    for (const [label, row] of [[`run A (${a.runId})`, d.a_event], [`run B (${b.runId})`, d.b_event]] as const) {
      lines.push(`${label}:`);
      const text = row ? renderJson(row, 2) : "(no event)";
      for (const l of text.split("\n")) lines.push(`  ${sanitizeCell(l)}`);
    }
  }
  const skipped = d.skipped_lines.a + d.skipped_lines.b;
  if (skipped > 0) lines.push(paint("yellow", `skipped ${d.skipped_lines.a} line(s) of A and ${d.skipped_lines.b} of B that are not JSON objects: they were not compared`));
  for (const n of d.notes) lines.push(paint("dim", `note: ${n}`));
  return lines;
}
