import { existsSync, lstatSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { isStdinPath } from "../fsutil/input.ts";
import { isRemotePath } from "../storage/ref.ts";
import { JOURNAL_FILE_NAME, journalPath, runsRoot, SEAL_FILE_NAME, validateRunId } from "./paths.ts";

/**
 * What `journal verify <FILE|RUN_ID|->` names. `-` and `/dev/stdin` are
 * standard input. A word with a path separator
 * or a `.jsonl` suffix is a file (a run directory path means its
 * journal.jsonl); otherwise a run id whose directory exists
 * under `<sdd>/runs` wins over a same-named file in the working directory;
 * anything existing on disk is next (a FIFO or device is then refused by the
 * reader, not taken for a run id); anything else must be a valid run id.
 */
export interface JournalTarget {
  path: string;
  /** The run id, or the journal's directory name for a file target. */
  runId: string;
  runDirPath: string;
  byRunId: boolean;
  /** `<run_dir>/seal.json` when it exists, for a run id or a path to a `journal.jsonl`. */
  defaultSealPath: string | null;
  /** `-` or `/dev/stdin`: standard input, read as one stream (no run directory: no divergence report). */
  stdin: boolean;
}

function looksLikePath(word: string): boolean {
  return word.includes("/") || word.includes("\\") || word.endsWith(".jsonl");
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Anything at all at `p` (a FIFO, a device, a dangling symlink too): it is named as a path, and refused if it is no regular file. */
function onDisk(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

export function resolveJournalTarget(word: string, sddDir: string): JournalTarget {
  if (isStdinPath(word)) return { path: word, runId: "-", runDirPath: "", byRunId: false, defaultSealPath: null, stdin: true };
  // An object in storage: no run directory (no seal beside it, no divergence report).
  if (isRemotePath(word)) return { path: word, runId: "", runDirPath: "", byRunId: false, defaultSealPath: null, stdin: false };
  const special = word === "." || word === "..";
  const asRunDir = !looksLikePath(word) && !special ? join(runsRoot(sddDir), word) : null;
  if (looksLikePath(word) || special || (!(asRunDir && existsSync(asRunDir)) && onDisk(word))) {
    let path = resolve(word);
    // A run directory given as a path means the journal inside it.
    if (isDirectory(path) && isFile(join(path, JOURNAL_FILE_NAME))) path = join(path, JOURNAL_FILE_NAME);
    const dir = dirname(path);
    // A run's journal named by its path is checked against its seal as by its run id.
    const sibling = basename(path) === JOURNAL_FILE_NAME ? join(dir, SEAL_FILE_NAME) : null;
    return { path, runId: basename(dir), runDirPath: dir, byRunId: false, defaultSealPath: sibling && existsSync(sibling) ? sibling : null, stdin: false };
  }
  const runId = validateRunId(word);
  const path = journalPath(sddDir, runId);
  const dir = dirname(path);
  const seal = join(dir, SEAL_FILE_NAME);
  return { path, runId, runDirPath: dir, byRunId: true, defaultSealPath: existsSync(seal) ? seal : null, stdin: false };
}
