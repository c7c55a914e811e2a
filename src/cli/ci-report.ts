import { jsonFields, type JsonFields } from "../json-fields.ts";
import { closeSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { annotations, stopCommandsBlock } from "../ci/annotations.ts";
import { junitXml } from "../ci/junit.ts";
import { errorOutcome, worstExitCode, worstStatus, type CiKind, type CiOutcome, type OutcomeBase } from "../ci/outcome.ts";
import { githubOutputText } from "../ci/outputs.ts";
import { STEP_SUMMARY_LIMIT, summaryMarkdown } from "../ci/summary.ts";
import { BernsteinError, ExitCode, errorMessage } from "../errors/index.ts";
import type { CiMode } from "./ci-flags.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { log } from "./log.ts";
import { printJson, printLines, writeStdout } from "./output.ts";

/**
 * CLI glue for the verify commands (`journal verify`, `replay verify`,
 * `replay <RUN_ID> --verify`) on a CI runner: the `--format` and `--junit`
 * flags, several inputs per call, and the reports (GitHub annotations, step
 * summary and outputs; JUnit). The reports themselves are built by src/ci.
 */

/** A path as annotations and JUnit name it: relative to the workspace (GitHub, GitLab, else cwd) when inside it. */
export function displayPath(p: string): string {
  const base = resolve(process.env.GITHUB_WORKSPACE || process.env.CI_PROJECT_DIR || process.cwd());
  const abs = resolve(p);
  const rel = relative(base, abs);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : abs;
}

/** What a command's verify of one input yields. */
export interface InputVerdict {
  ok: boolean;
  /** Human prose (as the single-input command has always printed it). */
  lines: string[];
  /** The `--as-json` document (as the single-input command has always printed it). */
  doc: Record<string, unknown>;
  /** The file verified, for reports. */
  file: string;
  /** The CI outcome; called only when a CI report is asked for (it may read the input again). */
  outcome: (base: OutcomeBase) => CiOutcome;
}

interface InputReport {
  input: string;
  exitCode: number;
  verdict: InputVerdict | null;
  error: BernsteinError | null;
  base: OutcomeBase;
}

/**
 * Verify each input in turn. An expected failure of one input (missing,
 * unreadable, malformed, refused) becomes that input's result and the others
 * are still verified; an unexpected error ends the call. The reports call the
 * `-` input `stdinName`.
 */
export async function verifyEach(
  kind: CiKind,
  inputs: readonly string[],
  one: (input: string) => Promise<InputVerdict>,
  stdinName = "stdin",
): Promise<InputReport[]> {
  const reports: InputReport[] = [];
  for (const input of inputs) {
    const t0 = performance.now();
    let verdict: InputVerdict | null = null;
    let error: BernsteinError | null = null;
    try {
      verdict = await one(input);
    } catch (err) {
      if (!(err instanceof BernsteinError)) throw err;
      error = err;
    }
    const seconds = (performance.now() - t0) / 1000;
    // `-` is stdin: the reports name it as the caller asked (--stdin-name), never `file=-`.
    const stdin = input === "-";
    const base: OutcomeBase = { kind, input: stdin ? stdinName : input, file: stdin ? stdinName : displayPath(verdict?.file ?? input), seconds };
    reports.push({ input, exitCode: error ? error.exitCode : verdict!.ok ? 0 : 1, verdict, error, base });
  }
  return reports;
}

export interface FinishOptions {
  /** For headings and the JUnit suite: "journal verify", "replay verify", "replay --verify". */
  command: string;
  json: boolean;
  mode: CiMode;
}

/**
 * Write the reports asked for, then print: with one input exactly what the
 * command has always printed (an input error is re-thrown for the usual
 * rendering); with several, one verdict each and the worst exit code (see
 * worstExitCode). Reports are written before stdout so that a report that
 * cannot be written is the one error of the call (exit 70).
 */
export async function finishVerify(reports: InputReport[], opts: FinishOptions): Promise<number> {
  const { mode } = opts;
  const single = reports.length === 1;
  const outcomes = mode.github || mode.junit ? reports.map(outcomeOf) : [];
  const ann = mode.github ? annotations(outcomes) : null;
  if (mode.junit) {
    const xml = junitXml(outcomes, { suite: `bernstein ${opts.command}`, timestamp: new Date().toISOString().slice(0, 19) });
    writeReport("JUnit report", mode.junit, outcomes, () => {
      mkdirSync(dirname(resolve(mode.junit!)), { recursive: true });
      writeFileAtomic(mode.junit!, xml);
    });
  }
  if (ann) {
    const summaryPath = process.env.GITHUB_STEP_SUMMARY;
    if (summaryPath) appendStepSummary(summaryPath, outcomes, opts.command, ann.annotated);
    const outputPath = process.env.GITHUB_OUTPUT;
    if (outputPath) writeReport("$GITHUB_OUTPUT", outputPath, outcomes, () => appendText(outputPath, githubOutputText(outcomes)));
  }

  if (opts.json) {
    if (single) {
      if (reports[0]!.error) throw reports[0]!.error;
      await printJson(reports[0]!.verdict!.doc);
    } else {
      await printJson(multiDoc(reports));
    }
  } else {
    const prose = single ? (reports[0]!.verdict?.lines ?? []) : multiLines(reports);
    if (ann) {
      // Everything but our own annotations is untrusted here: journal text can appear in the prose.
      await writeStdout((prose.length ? stopCommandsBlock(prose.join("\n")) : "") + ann.lines.map((l) => `${l}\n`).join(""));
    } else {
      await printLines(...prose);
    }
  }
  if (single && reports[0]!.error) throw reports[0]!.error;
  return worstExitCode(reports.map((r) => r.exitCode));
}

function outcomeOf(r: InputReport): CiOutcome {
  if (r.error) return errorOutcome(r.base, { code: r.error.code, message: r.error.message, exitCode: r.error.exitCode });
  return r.verdict!.outcome(r.base);
}

function errorDoc(err: BernsteinError): Record<string, unknown> {
  return { ok: false, error: err.code, detail: err.message, ...err.facts };
}

/** The fields of the several-inputs document below (docs/cli/). */
export const MULTI_VERDICT_FIELDS: JsonFields = jsonFields([
  ["ok", "boolean", "Every input verified"],
  ["error?", "\"verify_failed\"", "Some input did not verify"],
  ["detail?", "string", "How many inputs failed, and how"],
  ["results", "object[]", "One verdict per input, in order, each opening with `input` (the single-input document's fields, or an error document)"],
]);

/** `{"ok", "results"}` (with `error`/`detail` when not ok); each result names its input first. */
function multiDoc(reports: readonly InputReport[]): Record<string, unknown> {
  const results = reports.map((r) => ({ input: r.input, ...(r.error ? errorDoc(r.error) : r.verdict!.doc) }));
  const ok = reports.every((r) => r.exitCode === 0);
  return ok ? { ok, results } : { ok, error: "verify_failed", detail: tally(reports), results };
}

function tally(reports: readonly InputReport[]): string {
  const verified = reports.filter((r) => r.exitCode === 0).length;
  const failed = reports.filter((r) => r.exitCode === 1).length;
  const errors = reports.length - verified - failed;
  return `${verified} of ${reports.length} inputs verified, ${failed} failed, ${errors} could not be verified (exit ${worstExitCode(reports.map((r) => r.exitCode))})`;
}

/** One block per input (its first line prefixed with the input), then the tally. */
function multiLines(reports: readonly InputReport[]): string[] {
  const lines: string[] = [];
  for (const r of reports) {
    const own = r.error ? [`error: ${r.error.message} (${r.error.code})`] : r.verdict!.lines;
    own.forEach((l, i) => lines.push(i === 0 ? `${r.input}: ${l}` : `  ${l}`));
  }
  lines.push(tally(reports));
  return lines;
}

/** Append (never truncate): the runner and earlier steps own what the file already holds. */
function appendText(path: string, text: string): void {
  const fd = openSync(path, "a");
  try {
    const bytes = Buffer.from(text, "utf8");
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
}

function appendStepSummary(path: string, outcomes: readonly CiOutcome[], command: string, annotated: number): void {
  let held = 0;
  try {
    held = statSync(path).size;
  } catch {
    // Not there yet: the append creates it.
  }
  const text = summaryMarkdown(outcomes, { command, annotated, budgetBytes: STEP_SUMMARY_LIMIT - held });
  if (text === "") {
    log.warn(`step summary not written: ${path} already holds ${held} bytes (GitHub's limit is 1 MiB)`);
    return;
  }
  writeReport("step summary", path, outcomes, () => appendText(path, text));
}

/** A report the user asked for that cannot be written fails the call (exit 70), naming the file. */
function writeReport(what: string, path: string, outcomes: readonly CiOutcome[], write: () => void): void {
  try {
    write();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
    throw new BernsteinError("report_write_failed", `cannot write the ${what} ${path}: ${code}`, ExitCode.INTERNAL, {
      path,
      verdict: worstStatus(outcomes),
    });
  }
}
