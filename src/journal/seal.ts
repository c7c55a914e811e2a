import { closeSync, existsSync, fsyncSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { checkInput, isStdinPath } from "../fsutil/input.ts";
import { InputError, RefusalError } from "../errors/index.ts";
import { acquireLock, LockHeldError, type FileLock } from "../fsutil/lock.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { stateWritePath } from "../fsutil/state-path.ts";
import { dumps } from "../pyjson/encode.ts";
import { HASH_PROFILE_FIELD, journalProfile, UnknownHashProfileError } from "./hash-profiles.ts";
import { parse } from "../pyjson/parse.ts";
import type { TreeRequest } from "./fast/subtrees.ts";
import type { FastVerifyResult } from "./model.ts";
import { PyNum, type PyValue } from "../pyjson/types.ts";
import { journalPath, lockPathFor, runDir, SEAL_FILE_NAME } from "./paths.ts";
import { verifyJournal, type JournalSeal } from "./verify.ts";
import { refuseContent, verdictContent } from "./content.ts";

/**
 * External seals: a commitment `{head, event_count}` kept apart from the
 * journal, so a clean truncation or an append after sealing is caught
 * (identity `mismatched`) where the chain alone cannot see it.
 * `journal seal` writes `<run_dir>/seal.json` = `{"event_count": n, "head": h}`.
 */

export type { JournalSeal };

export const JournalSealSchema = v.object({
  head: v.string(),
  event_count: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function sealPathFor(sddDir: string, runId: string): string {
  return join(runDir(sddDir, runId), SEAL_FILE_NAME);
}

function malformed(path: string, why: string): InputError {
  return new InputError("seal_malformed", `seal file ${path} is malformed: ${why}`, { seal: path });
}

/** Validate a parsed seal document (`{head, event_count[, hash_profile]}`). */
export function sealFromValue(value: PyValue, path: string): JournalSeal {
  if (!(value instanceof Map)) throw malformed(path, "expected a JSON object {\"head\", \"event_count\"}");
  const head = value.get("head");
  const count = value.get("event_count");
  if (typeof head !== "string") throw malformed(path, '"head" must be a string');
  if (!(count instanceof PyNum) || count.isFloat || count.raw.startsWith("-")) {
    throw malformed(path, '"event_count" must be a non-negative integer');
  }
  const profile = value.get(HASH_PROFILE_FIELD);
  if (profile !== undefined) {
    try {
      if (typeof profile !== "string") throw new UnknownHashProfileError(dumps(profile));
      journalProfile(profile);
    } catch (err) {
      throw new InputError("unknown_hash_profile", `seal file ${path}: ${(err as Error).message}`, { seal: path });
    }
  }
  const n = Number(count.raw);
  if (!Number.isSafeInteger(n)) throw malformed(path, '"event_count" is out of range');
  return v.parse(JournalSealSchema, { head, event_count: n });
}

/** Read a seal file; `InputError` (`seal_unreadable` / `seal_malformed`, exit 3) when it is not one. */
export function readSealFile(path: string): JournalSeal {
  // A FIFO or device as --seal would block or read as garbage: refused unopened (input_not_regular_file).
  if (!isStdinPath(path)) checkInput(path, { what: "seal file" });
  let text: string;
  try {
    text = strictUtf8.decode(readFileSync(path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new InputError("seal_unreadable", `seal file not found: ${path}`, { seal: path });
    if (code) throw new InputError("seal_unreadable", `cannot read seal file ${path}: ${code}`, { seal: path });
    throw malformed(path, "not valid UTF-8");
  }
  let value: PyValue;
  try {
    value = parse(text);
  } catch (err) {
    throw malformed(path, (err as Error).message);
  }
  return sealFromValue(value, path);
}

/** The bytes of seal.json: `json.dumps(seal, sort_keys=True)` plus a newline. */
export function sealText(seal: JournalSeal): string {
  return dumps({ event_count: seal.event_count, head: seal.head }, { sortKeys: true }) + "\n";
}

export interface SealOutcome {
  seal: JournalSeal;
  path: string;
  /** True when an identical seal already existed (nothing was written). */
  alreadySealed: boolean;
}

/** Take the journal's writer lock, or refuse: sealing a journal mid-append seals a moving target. */
export function lockJournalOrRefuse(journalFile: string, runId: string, action: string): FileLock {
  try {
    return acquireLock(lockPathFor(journalFile));
  } catch (err) {
    if (err instanceof LockHeldError) {
      throw new RefusalError(
        "journal_locked",
        `cannot ${action} run ${runId}: another process is writing its journal (${err.message})`,
        { run_id: runId, lock: err.lockPath, owner_pid: err.ownerPid },
      );
    }
    throw err;
  }
}

/**
 * Seal a run's journal: verify it (refuse unless the chain is consistent
 * and nothing was discarded), then write seal.json atomically. Idempotent
 * for an identical existing seal; refuses (`seal_mismatch`) to overwrite a
 * seal the journal no longer matches (that is exactly what a seal exists
 * to expose). The verify is the fast (parallel, streaming) one: under the
 * writer lock the journal cannot grow, so its snapshot is the whole file.
 */
export interface SealOptions {
  /**
   * Runs under the writer lock once the journal verified, before seal.json
   * is written (a signed seal reads its Merkle leaves here, from the same
   * locked snapshot, instead of verifying again).
   */
  afterVerify?: (verdict: FastVerifyResult) => Promise<void>;
  /** Build the journal's Merkle subtrees in the same verify (a signed seal's root). */
  tree?: TreeRequest;
}

export async function sealJournalDetailed(sddDir: string, runId: string, opts: SealOptions = {}): Promise<SealOutcome> {
  const jpath = journalPath(sddDir, runId);
  const sealPath = stateWritePath(sddDir, sealPathFor(sddDir, runId), `the seal of run ${runId}`);
  if (!existsSync(jpath)) {
    throw new InputError("journal_missing", `no journal for run ${runId}: ${jpath}`, { run_id: runId, path: jpath });
  }
  const lock = lockJournalOrRefuse(jpath, runId, "seal");
  try {
    const r = await verifyJournal(jpath, { tree: opts.tree });
    // Nothing to seal in an empty journal, and a file with no journal row is no journal (exit 3, content.ts).
    refuseContent(verdictContent(r, jpath), jpath, { noAllowEmpty: true });
    if (!r.chain_consistent || r.coverage !== "complete") {
      throw new RefusalError(
        "seal_refused",
        `refusing to seal run ${runId}: the journal does not verify (${r.errors.join("; ")})`,
        { run_id: runId, path: jpath, errors: r.errors },
      );
    }
    await opts.afterVerify?.(r);
    const seal: JournalSeal = { head: r.head ?? "", event_count: r.count };
    let existing: JournalSeal | null = null;
    try {
      existing = readSealFile(sealPath);
    } catch (err) {
      if (!(err instanceof InputError && err.code === "seal_unreadable" && err.message.startsWith("seal file not found"))) {
        throw err;
      }
    }
    if (existing) {
      if (existing.head === seal.head && existing.event_count === seal.event_count) {
        return { seal, path: sealPath, alreadySealed: true };
      }
      throw new RefusalError(
        "seal_refused",
        `refusing to reseal run ${runId}: ${sealPath} commits to ${existing.event_count} events (head ${existing.head || "(empty)"}) but the journal now holds ${seal.event_count} (head ${seal.head}); remove the seal file to reseal deliberately`,
        { run_id: runId, seal: sealPath, sealed: existing, current: seal },
      );
    }
    // The journal's rows are appended without fsync; make them durable
    // before the (fsynced) seal commits to them, or a power loss could
    // keep the seal and lose the rows it names.
    fsyncFile(jpath);
    writeFileAtomic(sealPath, sealText(seal));
    return { seal, path: sealPath, alreadySealed: false };
  } finally {
    lock.release();
  }
}

export async function sealJournal(sddDir: string, runId: string): Promise<JournalSeal> {
  return (await sealJournalDetailed(sddDir, runId)).seal;
}

function fsyncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
