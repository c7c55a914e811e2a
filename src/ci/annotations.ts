import type { CiOutcome } from "./outcome.ts";
import { randomHex } from "../hex.ts";

/**
 * GitHub Actions workflow commands: error annotations for the problems of
 * a verify, and the stop-commands block that keeps untrusted text (what a
 * journal or a receipt says) from being read as a command by the runner.
 */

/** The runner reads at most 10 error annotations per step; we never emit more. */
export const MAX_ERROR_ANNOTATIONS = 10;

/** Escape a command's message: `%`, CR and LF, so it stays one line and decodes back exactly. */
export function escapeData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** Escape a property value: as data, plus `:` and `,`, which end a value. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

export type AnnotationLevel = "error" | "warning" | "notice";

/** `::error file=F,line=L,title=T::message` (properties with a null value are left out). */
export function workflowCommand(level: AnnotationLevel, props: Record<string, string | number | null>, message: string): string {
  const p = Object.entries(props)
    .filter(([, v]) => v !== null && v !== "")
    .map(([k, v]) => `${k}=${escapeProperty(String(v))}`)
    .join(",");
  return `::${level}${p ? ` ${p}` : ""}::${escapeData(message)}`;
}

export interface AnnotationSet {
  lines: string[];
  /** Problems found in all (annotated or not). */
  total: number;
  annotated: number;
}

/**
 * One error annotation per problem, in input order, at most
 * MAX_ERROR_ANNOTATIONS; when problems are left out, one warning saying how
 * many and where to find them (the step summary lists them all).
 */
export function annotations(outcomes: readonly CiOutcome[], max = MAX_ERROR_ANNOTATIONS): AnnotationSet {
  const lines: string[] = [];
  let total = 0;
  for (const o of outcomes) {
    for (const p of o.problems) {
      total++;
      if (lines.length < max) lines.push(workflowCommand("error", { file: o.file, line: p.line, title: p.title }, p.message));
    }
  }
  const annotated = lines.length;
  if (total > annotated) {
    lines.push(
      workflowCommand("warning", { title: "More problems" }, `${total - annotated} more problem(s) not annotated (limit ${max}); the step summary lists them`),
    );
  }
  return { lines, total, annotated };
}

/** A random end token for `::stop-commands::` (128 bits, hex). */
export function stopToken(): string {
  return randomHex(16);
}

/**
 * Wrap text in `::stop-commands::<token>` … `::<token>::`: inside, the
 * runner processes no workflow command, so a journal that says
 * `::set-output …` or `::error::…` is printed, not obeyed. The token is
 * drawn again in the (astronomically unlikely) case the text contains it,
 * since that line would end the block early.
 */
export function stopCommandsBlock(text: string, token = stopToken()): string {
  while (text.includes(token)) token = stopToken();
  const body = text.endsWith("\n") || text === "" ? text : `${text}\n`;
  return `::stop-commands::${token}\n${body}::${token}::\n`;
}
