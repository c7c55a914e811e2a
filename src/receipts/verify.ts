import { pyPrefix } from "../pyjson/python.ts";
import type { KeyObject } from "node:crypto";
import { firstOfErrors, InputError, NegativeError, type ErrorCode } from "../errors/index.ts";
import { withInputFile, JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { compareCodePoints } from "../pyjson/encode.ts";
import { LineSplitter } from "../fsutil/lines.ts";
import { ChainWalker, UndecodableLineError, type WalkResult } from "../steps/walk.ts";
import { refuseContent } from "../journal/content.ts";
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, walkReceipt, type ArchiveLimits, type MemberInfo } from "./archive.ts";
import { AmbiguousMemberError } from "./members.ts";
import { ManifestError, parseManifest } from "./manifest.ts";

/**
 * absent: no manifest.sig and no key asked for one; unchecked: signed but no
 * key given, so nothing about its origin was checked; valid / invalid: the
 * key's verdict over the stored manifest bytes. With a key, "absent" fails.
 */
export type SignatureState = "absent" | "unchecked" | "valid" | "invalid";

export interface ReceiptVerdict {
  ok: boolean;
  /** Why the verdict is negative (null when ok): the first failed check, signature first. */
  error: ReceiptFailure | null;
  /** One line saying what failed (null when ok). */
  detail: string | null;
  head_hash: string;
  steps: number;
  errors: string[];
  signed: boolean;
  signature: SignatureState;
  /** True when a --public-key was given and the signature rule applied. */
  signature_checked: boolean;
  /** Bytes of the receipt taken in: its size, or for standard input the bytes received. */
  bytes_read: number;
}

export type ReceiptFailure = Extract<ErrorCode, "signature_missing" | "signature_invalid" | "chain_broken" | "manifest_mismatch" | "head_mismatch">;

export interface VerifyReceiptOptions {
  expectedHead?: string | null;
  publicKeyPath?: string | null;
  limits?: Partial<ReceiptLimits>;
  /** `--allow-empty`: a receipt whose journal holds no step (and nothing else) verifies as 0 steps instead of `input_empty`. */
  allowEmpty?: boolean;
}

export interface ReceiptLimits extends ArchiveLimits {
  /** manifest.json larger than this is not a manifest. */
  maxManifestBytes: number;
  maxSignatureBytes: number;
  /** One journal line longer than this makes the receipt malformed. */
  maxLineBytes: number;
  /** Journal members out of name order are re-read one pass each; more than this many is refused. */
  maxUnorderedJournalMembers: number;
}

export const DEFAULT_RECEIPT_LIMITS: ReceiptLimits = {
  ...DEFAULT_ARCHIVE_LIMITS,
  maxManifestBytes: 1024 * 1024,
  maxSignatureBytes: 64 * 1024,
  maxLineBytes: JOURNAL_MAX_ROW_BYTES,
  maxUnorderedJournalMembers: 64,
};

function malformed(message: string): InputError {
  return new InputError("receipt_malformed", message);
}

/** A member tar and tarfile would extract otherwise than it is read (exit 1, the member named). */
export function ambiguous(err: AmbiguousMemberError): NegativeError {
  return new NegativeError("receipt_ambiguous", err.message, { member: err.member });
}

/** Collects a small member (manifest, signature) with a hard size cap. */
function smallSink(name: string, size: number, cap: number, done: (bytes: Uint8Array) => void) {
  if (size > cap) throw new ArchiveError(`receipt member ${name} is ${size} bytes (limit ${cap})`);
  const buf = new Uint8Array(size);
  let off = 0;
  return {
    data(chunk: Uint8Array) {
      if (off + chunk.length > size) throw new ArchiveError(`receipt member ${name} is longer than its header says`);
      buf.set(chunk, off);
      off += chunk.length;
    },
    end() {
      done(buf.subarray(0, off));
    },
  };
}

/**
 * Feeds journal members into one line splitter as if concatenated, each
 * non-empty member that does not end in `\n` getting one appended (§5b).
 */
class JournalFeed {
  readonly walker: ChainWalker;
  readonly splitter: LineSplitter;
  constructor(maxLineBytes: number) {
    this.walker = new ChainWalker("receipt", maxLineBytes);
    this.splitter = new LineSplitter("splitlines", (line, n) => this.walker.line(line, n), maxLineBytes, this.walker.probe, this.walker);
  }
  member() {
    let size = 0;
    let last = 0;
    return {
      buffer: this.walker.readBuffer(),
      data: (chunk: Uint8Array) => {
        if (chunk.length === 0) return;
        size += chunk.length;
        last = chunk[chunk.length - 1]!;
        this.splitter.push(chunk);
      },
      end: () => {
        if (size > 0 && last !== 0x0a) this.splitter.push(NEWLINE);
      },
    };
  }
  finish(): WalkResult {
    this.splitter.end();
    const walked = this.walker.result();
    this.walker.release();
    return walked;
  }
}
const NEWLINE = new Uint8Array([0x0a]);

/**
 * Verify a receipt (§5b) by recomputing every step, streaming: members are
 * read chunk by chunk and lines split incrementally, so memory stays bounded
 * whatever the journal size. A file that is not a receipt throws
 * `receipt_malformed` (exit 3), one that tar would extract otherwise than it
 * is read `receipt_ambiguous` (exit 1); a receipt whose chain does not verify is a
 * verdict (`ok: false`), never an exception.
 */
export async function verifyReceipt(path: string, opts: VerifyReceiptOptions = {}): Promise<ReceiptVerdict> {
  // `-`: standard input, spooled (the walk may take more than one pass); a non-regular file is refused unopened.
  return withInputFile(path, { what: "receipt" }, async (file, bytes) => {
    if (bytes === null) throw new InputError("receipt_not_found", `receipt not found: ${path}`, { path });
    const v = await verifyReceiptFile(file, opts);
    // A journal with no step and nothing wrong is empty: no verdict on it unless allowed (journal/content.ts).
    if (v.steps === 0 && v.errors.length === 0) refuseContent("empty", path, { allowEmpty: opts.allowEmpty, name: `the journal of ${path}` });
    return { ...v, bytes_read: bytes };
  });
}

async function verifyReceiptFile(path: string, opts: VerifyReceiptOptions): Promise<Omit<ReceiptVerdict, "bytes_read">> {
  // node:crypto is loaded only when a signature is to be checked.
  const keys = opts.publicKeyPath ? await import("./keys.ts") : null;
  const key: KeyObject | null = keys !== null && opts.publicKeyPath ? keys.loadPublicKey(opts.publicKeyPath) : null;
  const limits: ReceiptLimits = { ...DEFAULT_RECEIPT_LIMITS, ...opts.limits };

  let manifestRaw: Uint8Array | null = null;
  let sigRaw: Uint8Array | null = null;
  const journal: MemberInfo[] = [];
  let lastJournalName: string | null = null;
  let inOrder = true;
  let feed = new JournalFeed(limits.maxLineBytes);

  const visitAll = (m: MemberInfo) => {
    if (m.name === "manifest.json") return smallSink(m.name, m.size, limits.maxManifestBytes, (b) => (manifestRaw = b));
    if (m.name === "manifest.sig") return smallSink(m.name, m.size, limits.maxSignatureBytes, (b) => (sigRaw = b));
    if (!m.name.startsWith("journal/")) return null;
    journal.push(m);
    if (lastJournalName !== null && compareCodePoints(m.name, lastJournalName) < 0) inOrder = false;
    lastJournalName = m.name;
    return inOrder ? feed.member() : null;
  };

  let walked: WalkResult;
  try {
    await walkReceipt(path, visitAll, limits);
    if (manifestRaw === null) throw malformed(`receipt missing manifest: ${path}`);
    if (journal.length === 0) throw malformed(`receipt missing journal payload: ${path}`);
    if (inOrder) {
      walked = feed.finish();
    } else {
      // Members must be walked sorted by name (stable): one pass per member.
      if (journal.length > limits.maxUnorderedJournalMembers) {
        throw malformed(`receipt has ${journal.length} journal members out of name order (limit ${limits.maxUnorderedJournalMembers})`);
      }
      const order = journal.map((m, i) => ({ m, i })).sort((a, b) => compareCodePoints(a.m.name, b.m.name) || a.i - b.i);
      feed.walker.release();
      feed = new JournalFeed(limits.maxLineBytes);
      for (const { m: target } of order) {
        await walkReceipt(path, (m) => (m.index === target.index ? feed.member() : null), limits);
      }
      walked = feed.finish();
    }
  } catch (err) {
    if (err instanceof ArchiveError) throw malformed(err.message);
    if (err instanceof AmbiguousMemberError) throw ambiguous(err);
    if (err instanceof UndecodableLineError) throw malformed(err.message);
    throw err;
  }

  let manifest;
  try {
    manifest = parseManifest(manifestRaw!);
  } catch (err) {
    if (err instanceof ManifestError) throw malformed(err.message);
    throw err;
  }

  const sig = signatureVerdict(key, keys, manifestRaw!, sigRaw);
  const failures: [ReceiptFailure, string][] = [];
  if (sig.failure) failures.push(sig.failure);
  for (const e of walked.errors) failures.push(["chain_broken", e]);
  if (manifest.head_hash !== walked.head_hash) {
    failures.push(["manifest_mismatch", `manifest head mismatch: ${pyPrefix(manifest.head_hash, 16)}... vs walked ${pyPrefix(walked.head_hash, 16)}...`]);
  }
  if (manifest.steps !== BigInt(walked.steps)) {
    failures.push(["manifest_mismatch", `manifest step count mismatch: ${manifest.steps} vs walked ${walked.steps}`]);
  }
  const expected = opts.expectedHead;
  if (expected !== undefined && expected !== null && expected !== walked.head_hash) {
    failures.push(["head_mismatch", `expected head ${pyPrefix(expected, 16)}... but walked ${pyPrefix(walked.head_hash, 16)}...`]);
  }
  const first = failures[0];
  const errors = failures.map((f) => f[1]);
  return {
    ok: first === undefined,
    error: first?.[0] ?? null,
    detail: first === undefined ? null : firstOfErrors(errors, first[1]),
    head_hash: walked.head_hash,
    steps: walked.steps,
    errors,
    signed: sigRaw !== null,
    signature: sig.state,
    signature_checked: key !== null,
  };
}

/**
 * One rule: a key given means a signature required, and it must verify over
 * the exact manifest.json bytes stored in the archive (what the exporter
 * signed), never over fields re-encoded from the parsed manifest: an added
 * field or any changed byte fails. Without a key nothing is claimed.
 */
function signatureVerdict(
  key: KeyObject | null,
  keys: typeof import("./keys.ts") | null,
  manifestRaw: Uint8Array,
  sigRaw: Uint8Array | null,
): { state: SignatureState; failure: [ReceiptFailure, string] | null } {
  if (key === null || keys === null) return { state: sigRaw === null ? "absent" : "unchecked", failure: null };
  if (sigRaw === null) {
    return { state: "absent", failure: ["signature_missing", "receipt is not signed (no manifest.sig) but --public-key requires a signature"] };
  }
  const ok = keys.verifyManifestSignature(key, manifestRaw, new TextDecoder("latin1").decode(sigRaw));
  return ok ? { state: "valid", failure: null } : { state: "invalid", failure: ["signature_invalid", "manifest signature failed Ed25519 verification"] };
}
