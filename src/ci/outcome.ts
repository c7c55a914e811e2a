/**
 * One verified input as a CI report sees it, whatever produced it (a run
 * journal or a receipt): the verdict, the problems found (each pinned to a
 * file line when it has one) and how long it took. The GitHub, summary and
 * JUnit renderers read only this, never a verifier's own result type.
 */

export type CiKind = "journal" | "receipt";
/** verified: exit 0; failed: a negative verdict (exit 1); error: the input could not be checked (exit 2/3). */
export type CiStatus = "verified" | "failed" | "error";

export interface CiProblem {
  title: string;
  message: string;
  /** 1-based physical line of `file` (null: the file as a whole). */
  line: number | null;
}

export interface CiOutcome {
  kind: CiKind;
  /** The input as given on the command line. */
  input: string;
  /** Path used in annotations and JUnit `file` (relative to the workspace when inside it). */
  file: string;
  status: CiStatus;
  exitCode: number;
  /** The one-line verdict (the JUnit failure text). */
  verdict: string;
  head: string | null;
  /** Events (journal) or steps (receipt); null when nothing was read. */
  count: number | null;
  problems: CiProblem[];
  seconds: number;
  /** The error code when status is "error". */
  error: string | null;
}

/**
 * Untrusted text (quoted from a journal or an archive) is bounded before it
 * reaches a report: a 10 MB "hash" must not become a 10 MB annotation.
 */
export function clip(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** Control characters other than tab shown as `\uXXXX`, so untrusted text cannot redraw a log or a report. */
export function visible(text: string): string {
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `clip` then `visible`: the form every untrusted string takes in a CI report. */
export function untrusted(text: string, max = 300): string {
  return visible(clip(text, max));
}

/**
 * The worst of several exit codes, in this order: 70 (internal/output
 * failure) > 3 (unreadable input) > 2 (refused input) > 1 (negative verdict)
 * > 0. An input that could not be checked at all outranks one that was
 * checked and failed: nothing at all is known about it.
 */
export function worstExitCode(codes: readonly number[]): number {
  const rank = (c: number): number => {
    const i = [0, 1, 2, 3, 70].indexOf(c);
    return i < 0 ? 5 : i;
  };
  let worst = 0;
  for (const c of codes) if (rank(c) > rank(worst)) worst = c;
  return worst;
}

export function statusOfExitCode(code: number): CiStatus {
  return code === 0 ? "verified" : code === 1 ? "failed" : "error";
}

/** The worst status of several outcomes (error > failed > verified; none: verified). */
export function worstStatus(outcomes: readonly CiOutcome[]): CiStatus {
  return statusOfExitCode(worstExitCode(outcomes.map((o) => o.exitCode)));
}

/** An input that could not be checked: the error is its only problem. */
export function errorOutcome(base: OutcomeBase, error: { code: string; message: string; exitCode: number }): CiOutcome {
  const detail = untrusted(error.message, 1000);
  return {
    ...base,
    status: "error",
    exitCode: error.exitCode,
    verdict: `ERROR ${error.code}: ${detail}`,
    head: null,
    count: null,
    problems: [{ title: `${base.kind === "journal" ? "Journal" : "Receipt"} not verified: ${error.code}`, message: detail, line: null }],
    error: error.code,
  };
}

export type OutcomeBase = Pick<CiOutcome, "kind" | "input" | "file" | "seconds">;
