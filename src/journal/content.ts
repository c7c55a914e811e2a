import { existsSync } from "node:fs";
import { InputError } from "../errors/index.ts";
import { isStdinPath, JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { isRemotePath } from "../storage/ref.ts";
import type { JournalVerifyResult } from "./model.ts";
import { readJournalSync, type JournalRow } from "./reader.ts";

/**
 * "No green without a journal": an input with nothing in it, or with no
 * journal row in it, gets no verdict (Python reports both as an intact
 * chain of 0 events, or two of them as a match). Run journals are
 * recognised here, step journals by steps/reader.ts's tolerant reader (an
 * entry is a row with a `step_hash`); both refuse through `refuseContent`.
 */

/** What an input holds: nothing (0 bytes or blank lines only), lines of which none is a journal row, or a journal. */
export type JournalContent = "empty" | "foreign" | "journal";

/**
 * A run-journal row: an object (the tolerant reader's row) naming its
 * `event` and its `event_hash`, the two members every writer (ours and
 * Python's) puts in every row. A row whose hash is wrong is still a row
 * (the chain check reports it); an object without them is something else.
 */
export function isRunJournalRow(row: JournalRow): boolean {
  return row.has("event") && row.has("event_hash");
}

/**
 * Read `path` (file, `-` is not re-readable: the caller knows) up to its
 * first run-journal row: a journal costs one row, anything else is read to
 * its end (row_too_large still refuses an overlong line).
 */
export function runJournalContent(path: string, maxRowBytes?: number): JournalContent {
  let lines = false;
  for (const item of readJournalSync(path, maxRowBytes === undefined ? {} : { maxLineBytes: maxRowBytes })) {
    if (item.kind === "row" && isRunJournalRow(item.row)) return "journal";
    lines = true;
  }
  return lines ? "foreign" : "empty";
}

export interface ContentOptions {
  /** `--allow-empty`: an empty input is 0 events, not a refusal. */
  allowEmpty?: boolean;
  /** The command has no `--allow-empty` (an empty journal is never sealed): the detail does not offer it. */
  noAllowEmpty?: boolean;
  /** What the input should have been, with its article ("a run journal"). */
  what?: string;
  /** What a row of it is ("run-journal row (an object with event and event_hash)"). */
  row?: string;
  /** How the detail names what is empty (default: the input; a receipt: "the journal of R.tar"). */
  name?: string;
}

/**
 * Refuse what is no journal: `input_empty` (unless allowed) or
 * `not_a_journal`, exit 3, the detail naming the input as given.
 */
export function refuseContent(content: JournalContent, input: string, o: ContentOptions = {}): void {
  if (content === "empty" && !o.allowEmpty) {
    const hint = o.noAllowEmpty ? "" : "; --allow-empty takes it as a journal of 0 events";
    throw new InputError("input_empty", `${o.name ?? input} is empty (0 bytes or blank lines only)${hint}`, { path: input });
  }
  if (content === "foreign") {
    const what = o.what ?? "a run journal";
    const row = o.row ?? "run-journal row (an object with event and event_hash)";
    throw new InputError("not_a_journal", `${input} is not ${what}: none of its lines is a ${row}`, { path: input });
  }
}

/**
 * What a finished verify of `path` says about its content: no rows and no
 * discarded lines is empty, only discarded lines is foreign. A chain that
 * broke at its first row may be a tampered journal or a file of other
 * objects: a re-read up to the first row with journal members tells them
 * apart (one row for a journal). Standard input cannot be read again: there
 * the break stands (never ok). A missing file (a verdict against a seal)
 * is not judged here.
 */
/** What a verify's verdict says the input is; a re-read takes rows up to the verify's own limit. */
export function verdictContent(r: JournalVerifyResult, path: string, maxRowBytes = JOURNAL_MAX_ROW_BYTES): JournalContent {
  const stdin = isStdinPath(path);
  if (!stdin && !isRemotePath(path) && !existsSync(path)) return "journal";
  if (r.count === 0) return r.discarded_line_indices.length === 0 ? "empty" : "foreign";
  if (r.divergent_index === 0 && !stdin) return runJournalContent(path, maxRowBytes);
  return "journal";
}
