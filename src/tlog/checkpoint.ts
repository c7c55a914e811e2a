import { NoteError } from "./note.ts";
import { decodeBase64Canonical } from "../base64.ts";

/**
 * Note texts: the C2SP checkpoint (c2sp.org/tlog-checkpoint) and our own
 * seal note. Both are the TEXT of a signed note (signatures added by
 * note.ts), so both end in a newline.
 *
 * checkpoint:            seal note (ours, versioned by its first line):
 *   <origin>               bernstein-seal/v1
 *   <tree size>            origin <origin>
 *   <base64 root>          run <run id>
 *   [extension lines]      events <n>
 *                          head <64 hex chain head>
 *                          root <base64 RFC 6962 root>
 */

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  extensions: string[];
}

export interface SealNote {
  origin: string;
  runId: string;
  events: number;
  head: string;
  root: Uint8Array;
}

export const SEAL_NOTE_VERSION = "bernstein-seal/v1";

function b64(root: Uint8Array): string {
  return Buffer.from(root).toString("base64");
}

function decodeRoot(s: string, what: string): Uint8Array {
  const b = decodeBase64Canonical(s, { length: 32 });
  if (b === null) throw new NoteError(`${what}: root hash must be base64 of 32 bytes`);
  return new Uint8Array(b);
}

function decimal(s: string, what: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(s)) throw new NoteError(`${what}: size must be a decimal number without leading zeros`);
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new NoteError(`${what}: size out of range`);
  return n;
}

function validOrigin(origin: string): void {
  if (origin.length === 0 || /[\n\u0000-\u001f]/.test(origin)) throw new NoteError("origin must be a non-empty line");
}

export function checkpointText(c: Omit<Checkpoint, "extensions"> & { extensions?: string[] }): string {
  validOrigin(c.origin);
  return [c.origin, String(c.size), b64(c.root), ...(c.extensions ?? [])].join("\n") + "\n";
}

export function parseCheckpointText(text: string): Checkpoint {
  const lines = text.split("\n");
  if (lines.pop() !== "" || lines.length < 3) throw new NoteError("a checkpoint is origin, size and root hash lines");
  const [origin, size, root, ...extensions] = lines as [string, string, string, ...string[]];
  validOrigin(origin);
  if (extensions.some((l) => l.length === 0)) throw new NoteError("checkpoint extension lines must not be empty");
  return { origin, size: decimal(size, "checkpoint"), root: decodeRoot(root, "checkpoint"), extensions };
}

export function sealNoteText(s: SealNote): string {
  validOrigin(s.origin);
  if (!/^[0-9a-f]{64}$/.test(s.head) && s.head !== "") throw new NoteError("seal head must be 64 lowercase hex digits");
  return [SEAL_NOTE_VERSION, `origin ${s.origin}`, `run ${s.runId}`, `events ${s.events}`, `head ${s.head}`, `root ${b64(s.root)}`].join("\n") + "\n";
}

export function parseSealNoteText(text: string): SealNote {
  const lines = text.split("\n");
  if (lines.pop() !== "" || lines[0] !== SEAL_NOTE_VERSION || lines.length !== 6) {
    throw new NoteError(`not a ${SEAL_NOTE_VERSION} seal note`);
  }
  const field = (i: number, key: string): string => {
    const l = lines[i]!;
    if (!l.startsWith(`${key} `)) throw new NoteError(`seal note line ${i + 1} must be '${key} …'`);
    return l.slice(key.length + 1);
  };
  const head = field(4, "head");
  if (!/^([0-9a-f]{64})?$/.test(head)) throw new NoteError("seal note head must be 64 lowercase hex digits");
  return {
    origin: field(1, "origin"),
    runId: field(2, "run"),
    events: decimal(field(3, "events"), "seal note"),
    head,
    root: decodeRoot(field(5, "root"), "seal note"),
  };
}

/** Either kind of note text, as (origin, size, root) for consistency checks. */
export function treeHeadOf(text: string): { origin: string; size: number; root: Uint8Array; head?: string; kind: "checkpoint" | "seal" } {
  if (text.startsWith(`${SEAL_NOTE_VERSION}\n`)) {
    const s = parseSealNoteText(text);
    return { origin: s.origin, size: s.events, root: s.root, head: s.head, kind: "seal" };
  }
  const c = parseCheckpointText(text);
  return { origin: c.origin, size: c.size, root: c.root, kind: "checkpoint" };
}
