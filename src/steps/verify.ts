import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { InputError } from "../errors/index.ts";
import { checkInput, JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { agentJournalDir, BUCKET_NAME } from "./paths.ts";
import { LineSplitter, refusingOverlong } from "../fsutil/lines.ts";
import { readLineChunks } from "../fsutil/line-chunks.ts";
import { ChainWalker, type WalkMarks, type WalkResult } from "./walk.ts";
import { KERNEL_DISPLAY, KERNEL_RECORD } from "./kernel.ts";
import { fileStamp, type SpanRecords } from "./records.ts";
import { agentVerdict, missingStepJournalVerdict, stepVerdict, type AgentJournalVerdict, type StepJournalVerdict } from "./verdict.ts";

export type { AgentJournalVerdict, StepJournalVerdict } from "./verdict.ts";

/**
 * Verify an on-disk step journal (`000000.jsonl`) per §1.5: every
 * non-blank physical line (universal newlines, 1-based, blank lines counted)
 * is checked; errors are collected, never thrown.
 */
export async function verifyStepJournal(path: string, expectedHead?: string | null): Promise<StepJournalVerdict> {
  // A FIFO, device or directory is refused (input_not_regular_file), never read as "no journal".
  if (checkInput(path, { what: "journal" }) === "missing") {
    return missingStepJournalVerdict(path, expectedHead);
  }
  return stepVerdict((await walkStepJournal(path)).walk, expectedHead);
}

/** The span record area of the verifying pass's kernel (a multiple of SPAN_RECORD_BYTES). */
const RECORD_AREA = 256 * 1024;

/**
 * Verify the step journal of `agentId` under `sddDir` (`replay <AGENT_ID>`,
 * §3.6): the chain against its own last entry, in one streaming pass. An
 * agent without a journal directory is `agent_journal_missing` (exit 3).
 * With `records`, the kernel also leaves a span record of each row it takes
 * in dict form there (for the agent view's render pass; the verdict is the
 * same), and stamps them with the file they hold for.
 */
export async function verifyAgentJournal(sddDir: string, agentId: string, records: SpanRecords | null = null): Promise<AgentJournalVerdict> {
  const dir = agentJournalDir(sddDir, agentId);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new InputError("agent_journal_missing", `No journal for agent ${agentId} (looked at ${dir})`, { agent_id: agentId });
  }
  const bucket = join(dir, BUCKET_NAME);
  const { walk, entries, lastHash } = await walkStepJournal(bucket, records);
  return agentVerdict(walk, agentId, bucket, entries, lastHash);
}

/**
 * One verifying pass over the step journal file `bucket` (none: no rows): the
 * walk, its entries (rows with a step_hash) and the last entry's
 * step_hash (null: no entry). The kernel takes the rows that check out in
 * runs; the rest are read exactly. With `records`, see verifyAgentJournal.
 */
export async function walkStepJournal(bucket: string, records: SpanRecords | null = null): Promise<StepWalk> {
  return walkStepJournalSync(bucket, records);
}

export interface StepWalk {
  walk: WalkResult;
  entries: number;
  lastHash: string | null;
  /** Where the tolerant reader's chain first breaks (ChainWalker.marks). */
  marks: WalkMarks;
}

/** walkStepJournal in this thread, for a caller that cannot wait on the event loop (a writer recovering its tip under its lock). */
export function walkStepJournalSync(bucket: string, records: SpanRecords | null = null): StepWalk {
  const walker = new ChainWalker("disk", JOURNAL_MAX_ROW_BYTES);
  if (existsSync(bucket)) {
    // The kernel takes the rows that check out in runs (each an entry: it has a step_hash); the rest are read exactly.
    const stamp = records === null ? null : fileStamp(bucket);
    if (records !== null) {
      // (display: a ts counts as dict form when it is a float lexeme, as the render pass takes it)
      walker.kernelMode = KERNEL_RECORD | KERNEL_DISPLAY;
      walker.kernelRecordBytes = RECORD_AREA;
    }
    walker.readBuffer();
    const k = records === null ? null : walker.stepKernel;
    if (k !== null) {
      const base = k.recordArea.byteOffset;
      const end = base + k.recordArea.length;
      k.recordArm(base, end);
      k.onRendered = (full) => {
        records!.add(k.u8.subarray(base, k.recordEnd));
        k.recordArm(base, end);
        return full;
      };
    }
    // the walk counts the entries and keeps the last one's hash as it reads (one scan of a line)
    const sink = refusingOverlong((line, n) => walker.line(line, n), JOURNAL_MAX_ROW_BYTES);
    // rows the kernel leaves (after a break, say) are offered to the walk's own probe before a view is made of them
    const splitter = new LineSplitter("universal", sink, JOURNAL_MAX_ROW_BYTES, walker.probe, walker.stepKernel === null ? null : walker);
    let offset = 0;
    for (const chunk of readLineChunks(bucket, { what: "journal" }, walker.readBuffer())) {
      k?.setChunk(chunk.byteOffset, offset);
      offset += chunk.length;
      splitter.push(chunk);
    }
    splitter.end();
    // the records hold for the file only if it did not change while it was read
    if (records !== null) records.stamp = stamp !== null && fileStamp(bucket) === stamp ? stamp : null;
  }
  const walk = walker.result();
  const lastHash = walker.lastEntryHash;
  walker.release();
  return { walk, entries: walker.entries, lastHash, marks: walker.marks };
}
