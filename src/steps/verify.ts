import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { InputError } from "../errors.ts";
import { checkInput } from "../fsutil/input.ts";
import { pyRepr, pyPrefix, pyStr } from "../pyjson/python.ts";
import { agentJournalDir, BUCKET_NAME } from "./paths.ts";
import { GENESIS_HASH } from "./hash.ts";
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, refusingOverlong } from "../fsutil/lines.ts";
import { TakenRuns } from "./runs.ts";
import { classifyLine, forEachFileLine, readLineChunks } from "./reader.ts";
import { ChainWalker } from "./walk.ts";

export interface StepJournalVerdict {
  ok: boolean;
  head_hash: string;
  steps: number;
  errors: string[];
}

/**
 * Verify an on-disk step journal (`000000.jsonl`) per §1.5: every
 * non-blank physical line (universal newlines, 1-based, blank lines counted)
 * is checked; errors are collected, never thrown.
 */
export async function verifyStepJournal(path: string, expectedHead?: string | null): Promise<StepJournalVerdict> {
  // A FIFO, device or directory is refused (input_not_regular_file), never read as "no journal".
  if (checkInput(path, { what: "journal" }) === "missing") {
    const ok = expectedHead === undefined || expectedHead === null || expectedHead === GENESIS_HASH;
    return {
      ok,
      head_hash: GENESIS_HASH,
      steps: 0,
      errors: ok ? [] : [`no journal file at ${path}; expected head ${pyRepr(expectedHead)}`],
    };
  }
  const walker = new ChainWalker("disk", DEFAULT_MAX_LINE_BYTES);
  await forEachFileLine(path, "universal", (line, lineNo) => walker.line(line, lineNo), DEFAULT_MAX_LINE_BYTES, walker.probe);
  const r = walker.result();
  if (expectedHead !== undefined && expectedHead !== null && expectedHead !== r.head_hash) {
    r.errors.push(`head mismatch: expected ${pyPrefix(expectedHead, 16)}..., got ${pyPrefix(r.head_hash, 16)}...`);
  }
  return { ok: r.errors.length === 0, ...r };
}

export interface AgentJournalVerdict extends StepJournalVerdict {
  agent_id: string;
  /** The agent's step journal (it may not exist: no steps yet). */
  bucket: string;
  /** Entries the tolerant reader sees (rows with a step_hash). */
  entries: number;
}

/**
 * Verify the step journal of `agentId` under `sddDir` (`replay <AGENT_ID>`,
 * §3.6): the chain against its own last entry, in one streaming pass. An
 * agent without a journal directory is `agent_journal_missing` (exit 3).
 */
export async function verifyAgentJournal(sddDir: string, agentId: string): Promise<AgentJournalVerdict> {
  const dir = agentJournalDir(sddDir, agentId);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new InputError("agent_journal_missing", `No journal for agent ${agentId} (looked at ${dir})`, { agent_id: agentId });
  }
  const bucket = join(dir, BUCKET_NAME);
  const walker = new ChainWalker("disk", DEFAULT_MAX_LINE_BYTES);
  let entries = 0;
  let lastHash: string | null = null;
  if (existsSync(bucket)) {
    // The kernel takes the rows that check out in runs (each an entry: it has a step_hash); the rest are read exactly.
    walker.readBuffer();
    let splitter: LineSplitter | null = null;
    const runs = new TakenRuns(walker, () => splitter!.lines, (_buf, _start, _to, rows) => {
      entries += rows;
      lastHash = walker.head;
    });
    const sink = refusingOverlong((line, n) => {
      walker.line(line, n);
      const k = classifyLine(line);
      if (k.kind === "entry") {
        entries++;
        lastHash = pyStr(k.row.get("step_hash"), "");
      }
    }, DEFAULT_MAX_LINE_BYTES);
    splitter = new LineSplitter("universal", sink, DEFAULT_MAX_LINE_BYTES, null, walker.stepKernel === null ? null : runs);
    for (const chunk of readLineChunks(bucket, walker.readBuffer())) splitter.push(chunk);
    splitter.end();
  }
  const r = walker.result();
  if (entries > 0 && lastHash !== r.head_hash) {
    r.errors.push(`head mismatch: expected ${lastHash!.slice(0, 16)}..., got ${r.head_hash.slice(0, 16)}...`);
  }
  return { ok: r.errors.length === 0, agent_id: agentId, bucket, entries, ...r };
}
