import type { KeyObject } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { InputError, NegativeError, UsageError } from "../errors/index.ts";
import { decodeBase64Canonical } from "../base64.ts";
import { checkInput } from "../fsutil/input.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { checkOutputTarget } from "../fsutil/output-target.ts";
import { eventHash, hashProfileOf, payloadHash } from "../journal/hash.ts";
import { journalPath, runDir } from "../journal/paths.ts";
import { lockJournalOrRefuse, sealJournalDetailed } from "../journal/seal.ts";
import { parse } from "../pyjson/parse.ts";
import { pyStr } from "../pyjson/python.ts";
import { checkpointText, sealNoteText, treeHeadOf } from "./checkpoint.ts";
import { treeRequest, verifiedTree, type TreeOptions } from "./leaves.ts";
import { fileIdentity } from "./sniff.ts";
import {
  consistencyRanges,
  EMPTY_ROOT,
  inclusionRanges,
  leafHash,
  RangeHasher,
  TreeBuilder,
  verifyConsistency,
  verifyInclusion,
  type Hash,
} from "./merkle.ts";
import { checkNote, formatVerifierKey, keysForPublicKey, NoteError, parseNote, rawPublicKey, signNote, type VerifierKey } from "./note.ts";
import { rememberedHead, remember } from "./trust-store.ts";

/**
 * The flows behind `journal seal --sign`, `journal checkpoint`, the proof
 * commands and their verifiers. Each returns a plain result document; the
 * CLI only renders it.
 */

export const SEAL_NOTE_NAME = "seal.note";
export const CHECKPOINT_NAME = "checkpoint";

const b64 = (h: Hash): string => Buffer.from(h).toString("base64");

export function defaultOrigin(runId: string): string {
  return `bernstein/${runId}`;
}

/** Keys a note may be checked against: raw public keys (any signer name) and verifier-key texts. */
export interface TrustedKeys {
  publicKeys: Uint8Array[];
  vkeys: VerifierKey[];
}

export function keysFor(note: string, trusted: TrustedKeys): VerifierKey[] {
  return [...trusted.vkeys, ...trusted.publicKeys.flatMap((pk) => keysForPublicKey(note, pk))];
}

function noteFailure(path: string, err: unknown): InputError {
  return new InputError("note_malformed", `${path} is not a signed note: ${(err as Error).message}`, { path });
}

function readNote(path: string): string {
  // A FIFO, device or directory is refused before any read; `-` is standard input.
  const kind = checkInput(path, { what: "input" });
  if (kind === "missing") throw new InputError("input_missing", `not found: ${path}`, { path });
  let bytes: Buffer;
  try {
    bytes = readFileSync(kind === "stdin" ? 0 : path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(code === "ENOENT" ? "input_missing" : "input_unreadable", `cannot read ${path}: ${code ?? "error"}`, { path });
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw noteFailure(path, new Error("not valid UTF-8"));
  }
}

export interface SignatureReport {
  signature: "valid" | "unchecked";
  signed_by: string[];
  ignored_signatures: number;
}

/**
 * One rule, as for receipts: keys given means signatures required. With
 * keys, every known signature must verify and at least `min` distinct known
 * keys must have signed (`signature_invalid` / `signature_missing`, exit 1).
 */
export function checkNoteSignatures(path: string, note: string, trusted: TrustedKeys, min: number): SignatureReport {
  const keys = keysFor(note, trusted);
  if (keys.length === 0 && trusted.publicKeys.length === 0 && trusted.vkeys.length === 0) {
    try {
      parseNote(note);
    } catch (err) {
      throw noteFailure(path, err);
    }
    return { signature: "unchecked", signed_by: [], ignored_signatures: 0 };
  }
  let v;
  try {
    v = checkNote(note, keys);
  } catch (err) {
    throw noteFailure(path, err);
  }
  if (v.failed.length > 0) {
    throw new NegativeError("signature_invalid", `${path}: signature by ${v.failed.join(", ")} does not verify`, { path, failed: v.failed });
  }
  const distinct = [...new Set(v.verified)];
  if (distinct.length < Math.max(1, min)) {
    throw new NegativeError(
      "signature_missing",
      `${path}: ${distinct.length} signature(s) by a trusted key, ${Math.max(1, min)} required`,
      { path, signed_by: distinct, ignored_signatures: v.unknown },
    );
  }
  return { signature: "valid", signed_by: distinct, ignored_signatures: v.unknown };
}

/**
 * The tree sizes `verifyJournalAgainstNotes` will need roots for, read
 * ahead so the verify can build them in its one pass; null when a note
 * cannot be read ahead (standard input, unreadable, not a note): the notes'
 * own check then reports it, after a pass of its own.
 */
export function noteCuts(sealNote: string | undefined, since: string | undefined): number[] | null {
  const cuts: number[] = [];
  for (const path of [sealNote, since]) {
    if (path === undefined) continue;
    if (path === "-") return null;
    try {
      cuts.push(treeHead(path, readNote(path)).size);
    } catch {
      return null;
    }
  }
  return cuts;
}

function treeHead(path: string, note: string) {
  try {
    return treeHeadOf(parseNote(note).text);
  } catch (err) {
    if (err instanceof NoteError) throw noteFailure(path, err);
    throw err;
  }
}

export interface Signer {
  key: KeyObject;
  name: string;
}

// ---------------------------------------------------------------- writing

export interface SignedSealResult {
  ok: true;
  run_id: string;
  event_count: number;
  head: string;
  root: string;
  origin: string;
  seal: string;
  note: string;
  already_sealed: boolean;
  key_name: string;
  verifier_key: string;
}

/** `journal seal <RUN> --sign KEY`: seal.json (byte-compatible) plus a signed seal.note. */
export async function sealJournalSigned(sddDir: string, runId: string, signer: Signer, origin = defaultOrigin(runId)): Promise<SignedSealResult> {
  const jpath = journalPath(sddDir, runId);
  // Taken before the seal's verify: the leaf pass below must see the file that verify saw.
  const identityBefore = existsSync(jpath) ? fileIdentity(jpath) : "";
  const tree = new TreeBuilder();
  const request = treeRequest();
  let events = 0;
  let head = "";
  const sealed = await sealJournalDetailed(sddDir, runId, {
    tree: request,
    afterVerify: async (verdict) => {
      const t = await verifiedTree(jpath, { verified: { verdict, identityBefore, tree: request } });
      for (const s of t.subtrees) tree.addSubtree(s.hash, s.size);
      events = t.count;
      head = t.head;
    },
  });
  const note = signNote(sealNoteText({ origin, runId, events, head, root: tree.root() }), [signer]);
  const notePath = join(runDir(sddDir, runId), SEAL_NOTE_NAME);
  writeFileAtomic(notePath, note);
  return {
    ok: true,
    run_id: runId,
    event_count: events,
    head,
    root: b64(tree.root()),
    origin,
    seal: sealed.path,
    note: notePath,
    already_sealed: sealed.alreadySealed,
    key_name: signer.name,
    verifier_key: verifierKeyOf(signer),
  };
}

export function verifierKeyOf(signer: Signer): string {
  return formatVerifierKey(signer.name, rawPublicKey(signer.key));
}

export interface CheckpointResult {
  ok: true;
  run_id: string;
  origin: string;
  size: number;
  root: string;
  head: string;
  path: string;
  /** Size of the checkpoint this one was checked to extend (null when none existed). */
  extends_size: number | null;
}

/**
 * `journal checkpoint <RUN> --sign KEY`: a C2SP checkpoint over the
 * recomputed event hashes. A log must never sign two checkpoints with no
 * consistency between them: an existing checkpoint at `out` must be a
 * prefix of this tree, or the new one is refused (exit 1, `consistency_forked`).
 */
export async function writeCheckpoint(
  sddDir: string,
  runId: string,
  signers: Signer[],
  opts: { origin?: string; out?: string } = {},
): Promise<CheckpointResult> {
  if (signers.length === 0) throw new UsageError("journal checkpoint needs --sign KEY");
  const jpath = journalPath(sddDir, runId);
  if (!existsSync(jpath)) throw new InputError("journal_missing", `no journal for run ${runId}: ${jpath}`, { run_id: runId, path: jpath });
  const out = opts.out ?? join(runDir(sddDir, runId), CHECKPOINT_NAME);
  // Before the existing checkpoint is read: /dev/stdout or a link into /proc is no checkpoint file.
  checkOutputTarget(out, "the checkpoint");
  const previous = existsSync(out) ? treeHead(out, readNote(out)) : null;
  const origin = opts.origin ?? previous?.origin ?? defaultOrigin(runId);
  const lock = lockJournalOrRefuse(jpath, runId, "checkpoint");
  try {
    const tree = new RangeHasher([], previous ? previous.size : -1);
    const leaves = await verifiedTree(jpath, { cuts: previous ? [previous.size] : [] });
    for (const s of leaves.subtrees) tree.addSubtree(s.hash, s.size);
    if (previous) {
      const prefix = tree.prefixRoot();
      if (previous.origin !== origin) {
        throw new UsageError(`${out} is a checkpoint of origin ${previous.origin}, not ${origin}; write to another --out`);
      }
      if (prefix === null || b64(prefix) !== b64(previous.root)) {
        throw new NegativeError(
          "consistency_forked",
          prefix === null
            ? `refusing to sign: the journal holds ${leaves.count} events but ${out} commits to ${previous.size} (truncated)`
            : `refusing to sign: the journal's first ${previous.size} events no longer match ${out} (the log was rewritten)`,
          { run_id: runId, previous_size: previous.size, size: leaves.count, consistency: prefix === null ? "truncated" : "forked" },
        );
      }
    }
    const note = signNote(checkpointText({ origin, size: leaves.count, root: tree.root() }), signers);
    writeFileAtomic(out, note, { mode: 0o644 });
    return { ok: true, run_id: runId, origin, size: leaves.count, root: b64(tree.root()), head: leaves.head, path: out, extends_size: previous?.size ?? null };
  } finally {
    lock.release();
  }
}

// ---------------------------------------------------------------- proofs

export interface ConsistencyProof {
  ok: true;
  kind: "consistency";
  origin: string;
  old_size: number;
  new_size: number;
  old_root: string;
  new_root: string;
  hashes: string[];
}

export const CONSISTENCY_PROOF_VERSION = "bernstein-consistency-proof/v1";
export const INCLUSION_PROOF_VERSION = "bernstein-inclusion-proof/v1";

/** The proof file's text: a version line, the sizes, then one base64 hash a line. */
export function consistencyProofText(p: ConsistencyProof): string {
  return [CONSISTENCY_PROOF_VERSION, `old ${p.old_size}`, `new ${p.new_size}`, ...p.hashes].join("\n") + "\n";
}

/** `journal prove-consistency <RUN> --from OLD`: the RFC 9162 proof from OLD's tree to the journal's. */
export async function proveConsistency(sddDir: string, runId: string, fromPath: string): Promise<ConsistencyProof> {
  const old = treeHead(fromPath, readNote(fromPath));
  const jpath = journalPath(sddDir, runId);
  if (!existsSync(jpath)) throw new InputError("journal_missing", `no journal for run ${runId}: ${jpath}`, { run_id: runId, path: jpath });
  // One pass: subtrees cut at the old size; every node of the proof is a union of them.
  const leaves = await verifiedTree(jpath, { cuts: [old.size] });
  const size = leaves.count;
  if (old.size > size) {
    throw new NegativeError("consistency_truncated", `the journal holds ${size} events but ${fromPath} commits to ${old.size}`, {
      consistency: "truncated",
      old_size: old.size,
      new_size: size,
    });
  }
  // The proof's ranges depend on the size, known once the chain verified.
  const hasher = new RangeHasher(consistencyRanges(old.size, size), old.size);
  for (const s of leaves.subtrees) hasher.addSubtree(s.hash, s.size);
  if (b64(hasher.prefixRoot()!) !== b64(old.root)) {
    throw new NegativeError("consistency_forked", `the journal's first ${old.size} events do not match ${fromPath} (the log was rewritten)`, {
      consistency: "forked",
      old_size: old.size,
      new_size: size,
    });
  }
  return {
    ok: true,
    kind: "consistency",
    origin: old.origin,
    old_size: old.size,
    new_size: size,
    old_root: b64(old.root),
    new_root: b64(hasher.root()),
    hashes: hasher.proof().map(b64),
  };
}

function parseProofFile(path: string, version: string): { fields: Map<string, number>; hashes: Hash[] } {
  const text = readNote(path);
  const lines = text.split("\n");
  if (lines.pop() !== "" || lines[0] !== version) throw new InputError("proof_malformed", `${path} is not a ${version} file`, { path });
  const fields = new Map<string, number>();
  const hashes: Hash[] = [];
  for (const line of lines.slice(1)) {
    const m = /^([a-z]+) (0|[1-9][0-9]*)$/.exec(line);
    if (m && hashes.length === 0) {
      fields.set(m[1]!, Number(m[2]));
      continue;
    }
    const h = decodeBase64Canonical(line, { length: 32 });
    if (h === null) throw new InputError("proof_malformed", `${path}: not a base64 hash: ${line.slice(0, 80)}`, { path });
    hashes.push(h);
  }
  return { fields, hashes };
}

export interface ConsistencyVerdict {
  ok: true;
  consistency: "extends";
  origin: string;
  old_size: number;
  new_size: number;
  old: SignatureReport;
  new: SignatureReport;
  remembered: boolean;
}

/** `journal verify-consistency OLD NEW PROOF`: offline, from the two notes and the proof alone. */
export function verifyConsistencyFiles(
  oldPath: string,
  newPath: string,
  proofPath: string,
  trusted: TrustedKeys,
  opts: { minSignatures?: number; remember?: boolean } = {},
): ConsistencyVerdict {
  const oldNote = readNote(oldPath);
  const newNote = readNote(newPath);
  const oldSig = checkNoteSignatures(oldPath, oldNote, trusted, opts.minSignatures ?? 1);
  const newSig = checkNoteSignatures(newPath, newNote, trusted, opts.minSignatures ?? 1);
  const a = treeHead(oldPath, oldNote);
  const b = treeHead(newPath, newNote);
  if (a.origin !== b.origin) {
    throw new NegativeError("origin_mismatch", `${oldPath} is of origin ${a.origin} but ${newPath} of ${b.origin}`, { old_origin: a.origin, new_origin: b.origin });
  }
  const proof = parseProofFile(proofPath, CONSISTENCY_PROOF_VERSION);
  if (proof.fields.get("old") !== a.size || proof.fields.get("new") !== b.size) {
    throw new NegativeError("proof_mismatch", `the proof is from ${proof.fields.get("old")} to ${proof.fields.get("new")} events, the checkpoints are of ${a.size} and ${b.size}`, {
      old_size: a.size,
      new_size: b.size,
    });
  }
  if (a.size > b.size) {
    throw new NegativeError("consistency_truncated", `${newPath} (${b.size} events) is smaller than ${oldPath} (${a.size})`, { consistency: "truncated" });
  }
  if (!verifyConsistency(a.size, b.size, proof.hashes, a.root, b.root)) {
    throw new NegativeError("consistency_forked", `the proof does not show ${newPath} extends ${oldPath}: the log was forked or rewritten`, {
      consistency: "forked",
      old_size: a.size,
      new_size: b.size,
    });
  }
  let remembered = false;
  if (opts.remember) {
    checkAgainstRemembered(b.origin, [
      { size: a.size, root: a.root },
      { size: b.size, root: b.root },
    ]);
    remember(b.origin, newNote, b.size);
    remembered = true;
  }
  return { ok: true, consistency: "extends", origin: b.origin, old_size: a.size, new_size: b.size, old: oldSig, new: newSig, remembered };
}

/**
 * Trust on first use (rekor-cli style): the remembered tree head of an
 * origin must be one of the heads this verify proved consistent;
 * otherwise nothing links it to what is being accepted now.
 */
export function checkAgainstRemembered(origin: string, proven: { size: number; root: Hash }[]): void {
  const known = rememberedHead(origin);
  if (known === null) return;
  const same = proven.some((p) => p.size === known.size && b64(p.root) === b64(known.root));
  const older = proven.every((p) => p.size < known.size);
  if (!same) {
    throw new NegativeError(
      "consistency_unproven",
      older
        ? `a checkpoint of ${origin} with ${known.size} events was verified before; refusing an older view of the log`
        : `the remembered checkpoint of ${origin} (${known.size} events) is not part of this proof; verify from it first`,
      { origin, remembered_size: known.size },
    );
  }
}

export interface InclusionProof {
  ok: true;
  kind: "inclusion";
  index: number;
  size: number;
  root: string;
  hashes: string[];
  /** The event row exactly as stored (one line, no terminator). */
  row: string;
}

export function inclusionProofText(p: InclusionProof): string {
  return [INCLUSION_PROOF_VERSION, `index ${p.index}`, `size ${p.size}`, ...p.hashes].join("\n") + "\n";
}

/** `journal prove <RUN> --index N [--checkpoint C]`: an inclusion proof of event N. */
export async function proveInclusion(sddDir: string, runId: string, index: number, checkpointPath?: string): Promise<InclusionProof> {
  const jpath = journalPath(sddDir, runId);
  if (!existsSync(jpath)) throw new InputError("journal_missing", `no journal for run ${runId}: ${jpath}`, { run_id: runId, path: jpath });
  const head = checkpointPath ? treeHead(checkpointPath, readNote(checkpointPath)) : null;
  // One pass: subtrees cut at the leaf, the leaf after it and the checkpoint's size; the row's text kept.
  const cuts = [index, index + 1, ...(head ? [head.size] : [])];
  const leaves = await verifiedTree(jpath, { cuts, keepRow: Number.isSafeInteger(index) ? index : null });
  // Against the journal now: the tree size is its event count.
  const size = head?.size ?? leaves.count;
  if (!(Number.isSafeInteger(index) && index >= 0 && index < size)) {
    throw new UsageError(`--index must be an event index from 0 to ${size - 1}`, "usage", { size });
  }
  const hasher = new RangeHasher(inclusionRanges(index, size), size);
  let fed = 0;
  for (const s of leaves.subtrees) {
    if (fed >= size) break;
    hasher.addSubtree(s.hash, s.size);
    fed += s.size;
  }
  const row = leaves.row ?? "";
  const root = hasher.prefixRoot();
  if (root === null) throw new NegativeError("consistency_truncated", `the journal holds ${leaves.count} events, fewer than ${size}`, { size });
  if (head && b64(root) !== b64(head.root)) {
    throw new NegativeError("consistency_forked", `the journal's first ${size} events do not match ${checkpointPath}`, { consistency: "forked" });
  }
  return { ok: true, kind: "inclusion", index, size, root: b64(root), hashes: hasher.proof().map(b64), row };
}

export interface InclusionVerdict {
  ok: true;
  included: true;
  index: number;
  size: number;
  origin: string;
  event_hash: string;
  signature: SignatureReport;
}

/** `journal verify-inclusion CHECKPOINT PROOF ROW`: the row, rehashed at its index, is under the signed root. */
export function verifyInclusionFiles(
  checkpointPath: string,
  proofPath: string,
  rowPath: string,
  trusted: TrustedKeys,
  opts: { minSignatures?: number } = {},
): InclusionVerdict {
  const note = readNote(checkpointPath);
  const signature = checkNoteSignatures(checkpointPath, note, trusted, opts.minSignatures ?? 1);
  const head = treeHead(checkpointPath, note);
  const proof = parseProofFile(proofPath, INCLUSION_PROOF_VERSION);
  const index = proof.fields.get("index");
  const size = proof.fields.get("size");
  if (index === undefined || size !== head.size) {
    throw new NegativeError("proof_mismatch", `the proof is for a tree of ${size} events, ${checkpointPath} is of ${head.size}`, { size: head.size });
  }
  const rowText = readNote(rowPath).replace(/\r?\n$/, "");
  let row;
  try {
    row = parse(rowText);
  } catch (err) {
    throw new InputError("row_malformed", `${rowPath} is not a journal row: ${(err as Error).message}`, { path: rowPath });
  }
  if (!(row instanceof Map)) throw new InputError("row_malformed", `${rowPath} is not a journal row (not a JSON object)`, { path: rowPath });
  const eventType = pyStr(row.get("event"), "");
  const stored = pyStr(row.get("event_hash"), "");
  let recomputed: string;
  try {
    const profile = hashProfileOf(row);
    recomputed = eventHash(pyStr(row.get("prev_hash"), ""), eventType, payloadHash(eventType, row, profile), index, profile);
  } catch (err) {
    throw new NegativeError("row_mismatch", `the row cannot be hashed: ${(err as Error).message}`, { index });
  }
  if (recomputed !== stored) {
    throw new NegativeError("row_mismatch", `the row's content hashes to ${recomputed} at index ${index}, not its stored event_hash ${stored}`, {
      index,
      expected_hash: recomputed,
      actual_hash: stored,
    });
  }
  const leaf = leafHash(new Uint8Array(Buffer.from(recomputed, "hex")));
  if (!verifyInclusion(index, size, leaf, proof.hashes, head.root)) {
    throw new NegativeError("inclusion_failed", `the proof does not place this row at index ${index} under the root of ${checkpointPath}`, { index, size });
  }
  return { ok: true, included: true, index, size, origin: head.origin, event_hash: recomputed, signature };
}

// ---------------------------------------------------------------- journal verify --seal NOTE / --since OLD

export type Consistency = "extends" | "forked" | "truncated";

export interface NoteSealVerdict {
  /** identity against the signed seal (or checkpoint) named by --seal. */
  identity: "verified" | "mismatched" | "unverifiable";
  seal_note: string | null;
  signature: SignatureReport | null;
  /** RFC 6962 root of the whole journal now (base64). */
  root: string;
  /** Present with --since: how the journal relates to the older tree head. */
  consistency: Consistency | null;
  since: string | null;
  since_size: number | null;
  errors: string[];
}

/**
 * The note half of `journal verify`: after the chain verified, check the
 * signed seal note (signature first, then event count, chain head and
 * Merkle root) and, with `since`, that the journal only grew from an older
 * seal or checkpoint. Throws `chain_broken` if the chain does not verify.
 */
export async function verifyJournalAgainstNotes(
  journalFile: string,
  opts: { sealNote?: string; since?: string; trusted: TrustedKeys; minSignatures?: number; remember?: boolean; verified?: TreeOptions["verified"] },
): Promise<NoteSealVerdict> {
  const errors: string[] = [];
  const sealText = opts.sealNote ? readNote(opts.sealNote) : null;
  const signature = sealText ? checkNoteSignatures(opts.sealNote!, sealText, opts.trusted, opts.minSignatures ?? 1) : null;
  const seal = sealText ? treeHead(opts.sealNote!, sealText) : null;
  const sinceText = opts.since ? readNote(opts.since) : null;
  if (sinceText) checkNoteSignatures(opts.since!, sinceText, opts.trusted, opts.minSignatures ?? 1);
  const old = sinceText ? treeHead(opts.since!, sinceText) : null;
  const wanted = [seal?.size, old?.size].filter((n): n is number => n !== undefined);
  const tree = new TreeBuilder();
  const roots = new Map<number, string>();
  if (wanted.includes(0)) roots.set(0, b64(EMPTY_ROOT));
  const leaves = await verifiedTree(journalFile, { cuts: wanted, verified: opts.verified });
  for (const s of leaves.subtrees) {
    tree.addSubtree(s.hash, s.size);
    if (wanted.includes(tree.size)) roots.set(tree.size, b64(tree.root()));
  }
  let identity: NoteSealVerdict["identity"] = "unverifiable";
  if (seal) {
    const headOk = seal.head === undefined || seal.head === leaves.head;
    if (leaves.count === seal.size && headOk && roots.get(seal.size) === b64(seal.root)) identity = "verified";
    else {
      identity = "mismatched";
      if (leaves.count !== seal.size) errors.push(`journal holds ${leaves.count} events but the signed seal commits to ${seal.size}`);
      if (!headOk) errors.push(`journal head ${leaves.head || "(empty)"} does not match the signed head ${seal.head || "(empty)"}`);
      if (roots.get(seal.size) !== undefined && roots.get(seal.size) !== b64(seal.root)) {
        errors.push(`the Merkle root of the first ${seal.size} events does not match the signed root`);
      }
    }
  }
  let consistency: Consistency | null = null;
  if (old) {
    if (leaves.count < old.size) consistency = "truncated";
    else if (roots.get(old.size) !== b64(old.root)) consistency = "forked";
    else consistency = "extends";
    if (consistency !== "extends") errors.push(`consistency ${consistency}: the journal is not an append-only extension of ${opts.since} (${old.size} events)`);
  }
  if (opts.remember && (seal ?? old)) {
    const origin = (seal ?? old)!.origin;
    const proven: { size: number; root: Hash }[] = [...roots].map(([size, root]) => ({ size, root: new Uint8Array(Buffer.from(root, "base64")) }));
    proven.push({ size: leaves.count, root: tree.root() });
    if (errors.length === 0) {
      checkAgainstRemembered(origin, proven);
      remember(origin, (sealText ?? sinceText)!, (seal ?? old)!.size);
    }
  }
  return {
    identity,
    seal_note: opts.sealNote ?? null,
    signature,
    root: b64(tree.root()),
    consistency,
    since: opts.since ?? null,
    since_size: old?.size ?? null,
    errors,
  };
}
