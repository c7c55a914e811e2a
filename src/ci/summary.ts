import { visible, worstStatus, type CiOutcome, type CiStatus } from "./outcome.ts";

/**
 * The Markdown verdict table a verify appends to `$GITHUB_STEP_SUMMARY`:
 * a heading with the overall verdict, one row per input, then every
 * problem (those past the annotation cap appear only here). GitHub refuses
 * a step summary over 1 MiB, so the text is built within a byte budget;
 * rows that do not fit are counted in a closing line instead.
 */

export const STEP_SUMMARY_LIMIT = 1024 * 1024;

const MARK: Record<CiStatus, string> = { verified: "✅", failed: "❌", error: "⚠️" };

/** A table cell: one line, no Markdown or HTML from the text itself. */
export function markdownCell(text: string): string {
  return visible(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/([\\`*_[\]|~])/g, "\\$1");
}

export interface SummaryOptions {
  /** The command, for the heading: "journal verify", "replay verify", "replay --verify". */
  command: string;
  /** Error annotations emitted. */
  annotated: number;
  /** Most bytes the text may take (default STEP_SUMMARY_LIMIT). */
  budgetBytes?: number;
}

function heading(outcomes: readonly CiOutcome[], command: string): string {
  const status = worstStatus(outcomes);
  const n = outcomes.length;
  const failed = outcomes.filter((o) => o.status === "failed").length;
  const errors = outcomes.filter((o) => o.status === "error").length;
  const parts: string[] = [];
  if (failed) parts.push(`${failed} failed`);
  if (errors) parts.push(`${errors} not verified`);
  const what = parts.length ? `${parts.join(", ")} of ${n} input${n === 1 ? "" : "s"}` : `${n} input${n === 1 ? "" : "s"} verified`;
  return `### ${MARK[status]} bernstein ${command}: ${what}\n\n`;
}

/**
 * The summary text, at most `budgetBytes` bytes (UTF-8); "" when not even
 * the heading fits.
 */
export function summaryMarkdown(outcomes: readonly CiOutcome[], opts: SummaryOptions): string {
  const budget = opts.budgetBytes ?? STEP_SUMMARY_LIMIT;
  const byteLen = (s: string) => Buffer.byteLength(s, "utf8");
  // Reserved for the closing "… not shown" line.
  const reserve = 160;
  let out = heading(outcomes, opts.command);
  if (byteLen(out) + reserve > budget) return "";
  let used = byteLen(out);
  let omitted = 0;
  const add = (line: string): boolean => {
    const n = byteLen(line) + 1;
    if (omitted > 0 || used + n + reserve > budget) {
      omitted++;
      return false;
    }
    out += `${line}\n`;
    used += n;
    return true;
  };
  const countLabel = outcomes.every((o) => o.kind === "receipt") ? "steps" : "events";
  add(`| | input | verdict | ${countLabel} | head | seconds |`);
  add("|:-:|---|---|--:|---|--:|");
  for (const o of outcomes) {
    const count = o.count === null ? "" : String(o.count);
    add(`| ${MARK[o.status]} | ${markdownCell(o.input)} | ${markdownCell(o.verdict)} | ${count} | ${markdownCell(o.head ?? "")} | ${o.seconds.toFixed(3)} |`);
  }
  const total = outcomes.reduce((n, o) => n + o.problems.length, 0);
  if (total > 0) {
    const unannotated = total - opts.annotated;
    const note = unannotated > 0 ? ` (${opts.annotated} annotated; ${unannotated} listed only here)` : "";
    add("");
    add(`**${total} problem${total === 1 ? "" : "s"}**${note}:`);
    add("");
    add("| input | line | problem |");
    add("|---|--:|---|");
    for (const o of outcomes) {
      for (const p of o.problems) add(`| ${markdownCell(o.input)} | ${p.line ?? ""} | ${markdownCell(`${p.title}: ${p.message}`)} |`);
    }
  }
  if (omitted > 0) out += `\n_… ${omitted} more line${omitted === 1 ? "" : "s"} not shown: the step summary is limited to 1 MiB._\n`;
  return `${out}\n`;
}
