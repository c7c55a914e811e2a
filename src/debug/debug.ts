import { chmodSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { InputError, RefusalError, UsageError } from "../errors/index.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { AtomicFileStream } from "../fsutil/atomic-stream.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { physicalLines } from "../fsutil/lines.ts";
import { canonical } from "../pyjson/encode.ts";
import { parse } from "../pyjson/parse.ts";
import { BYTE_PATH_MIN, loadsLine, rawGet } from "../pyjson/row.ts";
import { CanonicalRow } from "../steps/canonical-row.ts";
import { Tok, TOP_LEVEL_FROM } from "../codec/row-index.ts";
import { StepKey } from "../steps/row-keys.ts";
import { isNaNFloat, pyEquals, pyInt, pyStr } from "../pyjson/python.ts";
import { PyNum, PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";
import { diffJournals } from "../receipts/diff.ts";
import { exportReceipt } from "../receipts/export.ts";
import { loadSigningKey } from "../receipts/keys.ts";
import { sourceEntries } from "../receipts/source.ts";
import { GrowthCollector } from "../fsutil/turn.ts";
import { DEFAULT_RECEIPT_LIMITS } from "../receipts/verify.ts";
import { GENESIS_HASH, stepHash } from "../steps/hash.ts";
import { agentJournalDir, BUCKET_NAME, journalRoot } from "../steps/paths.ts";
import { refuseNonStepJournal } from "../steps/reader.ts";
import { walkStepJournal } from "../steps/verify.ts";
import { rowHashFields, type WalkMarks } from "../steps/walk.ts";
import { stepVerdict } from "../steps/verdict.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";

/**
 * `bernstein replay debug` (spec §6.1) over agent step journals.
 *
 * Single run: verify the chain; on failure name the first mismatching step
 * and field; on success export a debug receipt and project the steps, and
 * with `--fork-from N` seed a fork journal. Upstream's fork also creates a
 * git worktree and branch for a new session; we have no session worktree to
 * fork, so ours is the journal half only: a new agent step journal
 * `<RUN>.fork-<N>` holding the parent's steps 0..N byte for byte (a prefix
 * of a verified chain, so it verifies and can be appended to), with
 * `fork_branch`/`fork_worktree` null.
 *
 * Two runs: the first divergence (as `replay diff-journal`), the steps up to
 * it side by side, and a content-addressed `.pathdiff.json` artifact.
 */

export const DEFAULT_PROJECTION_LIMIT = 200;
const HASH_FIELDS = ["prev_hash", "input_hash", "model", "prompt", "tool_call", "tool_result", "effort"] as const;
const PAIR_FIELDS = ["prev_hash", "input_hash", "model", "prompt", "tool_call", "tool_result"] as const;

export interface DebugOptions {
  sddDir: string;
  /** Steps shown: 200 by default, `limit`, or all with `full`. */
  limit?: number;
  full?: boolean;
  jumpToFailure?: boolean;
  /** `--allow-empty`: an empty step journal is 0 steps instead of refused (`input_empty`). */
  allowEmpty?: boolean;
}

function bucketOf(sddDir: string, id: string): string | null {
  const dir = agentJournalDir(sddDir, id);
  return existsSync(dir) ? join(dir, BUCKET_NAME) : null;
}

async function* entries(path: string): AsyncGenerator<PyObject> {
  yield* sourceEntries({ kind: "file", path });
}

const seqOf = (row: PyObject, i: number) => {
  const s = pyInt(row.get("seq"));
  return s === null ? i : Number(s);
};

function toolName(v: PyValue | undefined): PyValue {
  // a huge row's large tool call is still its bytes (src/pyjson/row.ts): its name read from them
  if (v instanceof PyRaw) return v.kind === "object" ? (rawGet(v, "name") ?? null) : "";
  return v instanceof Map ? (v.get("name") ?? null) : "";
}

function capOf(o: DebugOptions): number {
  return o.full ? Number.POSITIVE_INFINITY : (o.limit ?? DEFAULT_PROJECTION_LIMIT);
}

export interface Mismatch {
  seq: number | null;
  first_divergent_field: string | null;
  expected_hash: string | null;
  actual_hash: string | null;
}

const NO_MISMATCH: Mismatch = { seq: null, first_divergent_field: null, expected_hash: null, actual_hash: null };

/**
 * The first step whose link or hash does not check out (streaming,
 * upstream's rule), over the tolerant reader's entries. With the verifying
 * walk's `marks` it starts at the entry where the walk saw the reader's
 * chain break (ChainWalker.marks), or finds none when the walk saw none.
 * (null: from the start.)
 */
export async function firstMismatch(path: string, marks: WalkMarks | null = null): Promise<Mismatch> {
  if (marks !== null && marks.firstEntryBreak === null) return NO_MISMATCH;
  const from = marks?.firstEntryBreak ?? null;
  let prevStored = from?.head ?? GENESIS_HASH;
  let i = from?.steps ?? 0;
  // (from the walk's mark the first row read is the mismatch) every row read is parsed and hashed whole:
  // garbage the engine collects late
  const gc = new GrowthCollector(4 << 20);
  for await (const row of sourceEntries({ kind: "file", path }, DEFAULT_RECEIPT_LIMITS, from === null ? 0 : from.line - 1)) {
    if ((i & 255) === 0) gc.poll();
    const storedPrev = pyStr(row.get("prev_hash"), "");
    const stored = pyStr(row.get("step_hash"), "");
    const seq = seqOf(row, i++);
    if (storedPrev !== prevStored) {
      return { seq, first_divergent_field: "prev_hash", expected_hash: prevStored, actual_hash: storedPrev };
    }
    // (its hashed fields' prev_hash is storedPrev)
    const recomputed = stepHash(rowHashFields(row));
    if (recomputed !== stored) {
      // Upstream compares the row with itself re-linked to the expected prev, with Python `!=`: the
      // other fields are the same objects, so only a top-level NaN (nan != nan) differs among them.
      const relinked = new Map(row).set("prev_hash", prevStored);
      const field = HASH_FIELDS.find((f) => (f === "prev_hash" ? !pyEquals(row.get(f), relinked.get(f)) : isNaNFloat(row.get(f)))) ?? "step_hash";
      return { seq, first_divergent_field: field, expected_hash: recomputed, actual_hash: stored };
    }
    prevStored = stored;
  }
  return NO_MISMATCH;
}

export interface ForkInfo {
  from_step: number;
  parent_step_hash: string;
  fork_session_id: string;
  fork_branch: null;
  fork_worktree: null;
  fork_journal: string;
}

/** Seed `<RUN>.fork-<N>` with the parent's steps through seq N (see the module comment). */
function fork(sddDir: string, run: string, path: string, n: number): ForkInfo {
  const forkId = `${run}.fork-${n}`;
  let dir: string;
  try {
    dir = agentJournalDir(sddDir, forkId);
  } catch (err) {
    throw new RefusalError("fork_failed", `Fork failed: ${(err as Error).message}`);
  }
  if (existsSync(dir)) throw new RefusalError("fork_failed", `Fork failed: ${dir} already exists`, { fork_session_id: forkId });
  const out = join(dir, BUCKET_NAME);
  // The parent's lines through step n, each written as it is read (a journal of 100,000 steps, or a huge row,
  // is never held whole); the fork's directory goes again if step n is not there.
  let copy: AtomicFileStream | null = null;
  // lines are held and written a megabyte at a time, not two writes a line
  const pending = new Uint8Array(COPY_BYTES);
  let held = 0;
  const flush = (): void => {
    if (held > 0) copy!.write(pending.subarray(0, held));
    held = 0;
  };
  /** `line` and its line feed, into the copy. */
  const put = (line: Uint8Array): void => {
    if (held + line.length + 1 > pending.length) flush();
    if (line.length + 1 > pending.length) {
      copy!.write(line);
      copy!.write(LINE_FEED);
      return;
    }
    pending.set(line, held);
    pending[held + line.length] = 0x0a;
    held += line.length + 1;
  };
  let parentHash: string | null = null;
  let seen = 0;
  let maxSeq = -1;
  const facts = new StepFacts();
  // each line read leaves a little garbage the engine collects late, and it adds up over a long journal
  const gc = new GrowthCollector(4 << 20);
  try {
    for (const line of physicalLines(path, { maxLineBytes: JOURNAL_MAX_ROW_BYTES })) {
      if ((seen & 1023) === 0) gc.poll();
      if (isBlankLine(line.bytes)) continue;
      facts.read(line.bytes);
      const seq = facts.seq ?? seen;
      seen++;
      maxSeq = Math.max(maxSeq, seq);
      if (seq > n) break;
      if (copy === null) {
        mkdirSync(journalRoot(sddDir), { recursive: true, mode: 0o700 });
        mkdirSync(dir, { mode: 0o700 });
        chmodSync(dir, 0o700);
        copy = new AtomicFileStream(out, { replace: false, fileMode: 0o600, dirMode: 0o700 });
      }
      put(line.bytes);
      if (seq === n) parentHash = facts.stepHash();
    }
    if (parentHash === null) throw new UsageError(`Fork failed: step ${n} is out of range (the journal has steps 0..${maxSeq})`, "fork_failed");
    flush();
    copy!.commit();
  } catch (err) {
    if (copy !== null) {
      copy.abort();
      rmSync(dir, { recursive: true, force: true });
    }
    throw err;
  }
  return { from_step: n, parent_step_hash: parentHash, fork_session_id: forkId, fork_branch: null, fork_worktree: null, fork_journal: out };
}

const LINE_FEED = new Uint8Array([0x0a]);
/** Bytes of lines a fork's copy holds before it writes them. */
const COPY_BYTES = 1 << 20;
const lineText = new TextDecoder();

/** `text.trim() === ""` of the line's text, most lines decided by their first bytes (a row begins with `{`). */
function isBlankLine(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) continue;
    return c < 0x80 ? false : lineText.decode(b).trim() === "";
  }
  return true;
}

/**
 * The seq (seqOf, null: none) and step_hash (pyStr) of a step row, as the
 * row parsed whole gives them: read off the codec's spans for a canonical
 * row whose seq is an integer and step_hash a plain string; any other
 * row parsed (a long one with its large values kept as bytes).
 */
class StepFacts {
  private readonly canonical = new CanonicalRow();
  private bytes: Uint8Array = new Uint8Array(0);
  private row: PyObject | null = null;
  seq: number | null = null;

  read(b: Uint8Array): void {
    this.bytes = b;
    this.row = null;
    const c = this.canonical;
    // a huge row is read where it lies, its large values kept as bytes (the codec's scan would copy it whole)
    if (b.length < TOP_LEVEL_FROM && c.scanRange(b, 0, b.length)) {
      // a canonical row's integer is spelled as Python spells it: its lexeme is the number
      const s = c.spanStart[StepKey.Seq]!;
      if ((s < 0 || c.kind[StepKey.Seq] === Tok.Int) && (c.spanStart[StepKey.StepHash]! < 0 || c.plainString[StepKey.StepHash] === 1)) {
        this.seq = s < 0 ? null : Number(lineText.decode(b.subarray(s, c.spanEnd[StepKey.Seq]!)));
        return;
      }
    }
    this.row = this.parsed();
    const seq = pyInt(this.row.get("seq"));
    this.seq = seq === null ? null : Number(seq);
  }

  stepHash(): string {
    if (this.row !== null) return pyStr(this.row.get("step_hash"), "");
    const c = this.canonical;
    const at = c.spanStart[StepKey.StepHash]!;
    return at < 0 ? "" : lineText.decode(this.bytes.subarray(at + 1, c.spanEnd[StepKey.StepHash]! - 1));
  }

  private parsed(): PyObject {
    const b = this.bytes;
    if (b.length >= BYTE_PATH_MIN) {
      const v = loadsLine(b, true);
      if (v.kind === "value") return v.value as PyObject;
    }
    return parse(lineText.decode(b)) as PyObject;
  }
}

export type SingleRunDebug =
  | ({ mode: "single-run"; run: string; verified: false; errors: string[] } & Mismatch & { jump_to_seq?: number | null })
  | {
      mode: "single-run";
      run: string;
      verified: true;
      head_hash: string;
      steps: number;
      receipt: { path: string; head_hash: string; steps: number; signed: boolean } | null;
      projection: Map<string, PyValue>[];
      fork?: ForkInfo;
      jump_to_seq?: null;
    };

/**
 * The tolerant reader's first `cap` entries of a step journal as debug
 * projects them; the reading stops there (the verifying pass reads the
 * whole journal, and finds the head it is checked against).
 */
export async function projectSteps(path: string, cap: number): Promise<Map<string, PyValue>[]> {
  const projection: Map<string, PyValue>[] = [];
  if (cap <= 0) return projection;
  for await (const row of sourceEntries({ kind: "file", path })) {
    projection.push(new Map<string, PyValue>([["seq", row.get("seq") ?? null], ["step_hash", row.get("step_hash") ?? null], ["prev_hash", row.get("prev_hash") ?? null], ["model", row.get("model") ?? null], ["tool_call", toolName(row.get("tool_call"))]]));
    if (projection.length >= cap) break;
  }
  return projection;
}

/** `replay debug <RUN> [--fork-from N] [--sign KEY]`. */
export async function debugSingleRun(run: string, o: DebugOptions & { forkFrom?: number; signingKeyPath?: string }): Promise<SingleRunDebug> {
  const path = bucketOf(o.sddDir, run);
  if (path === null) throw new InputError("agent_journal_missing", `No journal for run ${run} (looked at ${agentJournalDir(o.sddDir, run)})`, { run });
  const cap = capOf(o);
  const projection = await projectSteps(path, cap);
  // The chain against the journal's own last entry, in one pass.
  const { walk, entries, lastHash, marks } = await walkStepJournal(path);
  const jump = o.jumpToFailure ? { jump_to_seq: null } : {};
  // Nothing read: an empty journal (refused unless allowed) or one without a step (refused).
  if (entries === 0) refuseNonStepJournal(path, run, o.allowEmpty);
  if (entries === 0) return { mode: "single-run", run, verified: true, head_hash: GENESIS_HASH, steps: 0, receipt: null, projection: [], ...jump };
  const v = stepVerdict(walk, lastHash);
  if (!v.ok) {
    const m = await firstMismatch(path, marks);
    return { mode: "single-run", run, verified: false, errors: v.errors, ...m, ...(o.jumpToFailure ? { jump_to_seq: m.seq } : {}) };
  }
  const forked = o.forkFrom !== undefined ? fork(o.sddDir, run, path, o.forkFrom) : undefined;
  if (o.signingKeyPath !== undefined) loadSigningKey(o.signingKeyPath); // refuse a bad key before writing anything
  const out = join(o.sddDir, "runtime", "receipts", `${run}.debug.tar`);
  const r = await exportReceipt({ sddDir: o.sddDir, agentId: run, out, signingKeyPath: o.signingKeyPath, defaultOut: true, force: true });
  return {
    mode: "single-run",
    run,
    verified: true,
    head_hash: v.head_hash,
    steps: v.steps,
    receipt: { path: out, head_hash: r.head_hash, steps: r.steps, signed: r.signed },
    projection,
    ...(forked ? { fork: forked } : {}),
    ...jump,
  };
}

export interface TwoRunDebug {
  mode: "two-run";
  left: string;
  right: string;
  artifact_path: string;
  diff_hash: string;
  diverged: boolean;
  divergence: Map<string, PyValue> | null;
  steps: Map<string, PyValue>[];
  jump_to_seq?: number | null;
}

const pairProjection = (row: PyObject | undefined): PyValue => (row ? new Map<string, PyValue>(PAIR_FIELDS.map((f) => [f, row.get(f) ?? null])) : null);

/** `replay debug <LEFT> <RIGHT>`. */
export async function debugTwoRuns(left: string, right: string, o: DebugOptions): Promise<TwoRunDebug> {
  const lp = bucketOf(o.sddDir, left);
  const rp = bucketOf(o.sddDir, right);
  if (lp === null || rp === null) throw new InputError("agent_journal_missing", "One or both journals are missing.", { left, right });
  // Two empty or foreign journals would "match" (reads each up to its first step).
  refuseNonStepJournal(lp, left, o.allowEmpty);
  refuseNonStepJournal(rp, right, o.allowEmpty);
  const d = await diffJournals(entries(lp), entries(rp));
  const upTo = d.diverged ? d.seq : Number.POSITIVE_INFINITY;
  const steps: Map<string, PyValue>[] = [];
  const li = entries(lp);
  const ri = entries(rp);
  const turns = new TurnPacer(100, 256);
  for (let i = 0; i <= upTo; i++) {
    if (turns.due()) await nextTurn();
    const [a, b] = await Promise.all([li.next(), ri.next()]);
    if (a.done && b.done) break;
    const seq = a.done ? seqOf(b.value as PyObject, i) : seqOf(a.value, i);
    const at = d.diverged && seq === d.seq;
    steps.push(
      new Map<string, PyValue>([
        ["seq", new PyNum(String(seq), false)],
        ["left", pairProjection(a.done ? undefined : a.value)],
        ["right", pairProjection(b.done ? undefined : (b.value as PyObject))],
        ["diverged", at],
        ["fields_changed", at && d.diverged ? [...d.fields_changed].sort() : []],
      ]),
    );
  }
  await Promise.all([li.return(undefined), ri.return(undefined)]);
  const divergence = d.diverged
    ? new Map<string, PyValue>([["seq", new PyNum(String(d.seq), false)], ["fields_changed", [...d.fields_changed].sort()], ["left_values", d.left_values], ["right_values", d.right_values], ["reason", d.reason]])
    : null;
  const body = new Map<string, PyValue>([["diverged", d.diverged], ["divergence", divergence], ["steps", steps]]);
  // a turn between the long steps below, for a signal's handler
  await nextTurn();
  const text = canonical(body);
  const diffHash = Bun.SHA256.hash(text, "hex") as string;
  await nextTurn();
  const dir = join(o.sddDir, "runtime", "debug");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const artifact = join(dir, `${left}__${right}.pathdiff.json`);
  // the body with its hash as the first member: canonical text sorts "diff_hash" before the body's keys
  writeFileAtomic(artifact, `{"diff_hash":"${diffHash}",${text.slice(1)}\n`);
  return {
    mode: "two-run",
    left,
    right,
    artifact_path: artifact,
    diff_hash: diffHash,
    diverged: d.diverged,
    divergence,
    steps: steps.slice(0, capOf(o)),
    ...(o.jumpToFailure ? { jump_to_seq: d.diverged ? d.seq : null } : {}),
  };
}
