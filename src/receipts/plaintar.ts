import { fstatSync, readSync } from "node:fs";

/**
 * The one tar reader of receipts (src/receipts/archive.ts walks it): ustar
 * and GNU headers, GNU long names ('L'/'N', 'K'), PAX extended and global
 * headers; gzip is undone by the caller (node:zlib) before the bytes get
 * here. Headers are read the way the tar-stream 3.2 extractor read them
 * (numeric fields as its `parseInt` spelling, names as UTF-8, the same
 * refusals with the same messages, at the same point), except for long
 * names, which follow Python's tarfile (the reference): the FIRST GNU long
 * name or PAX `path` since the last member wins, a PAX path loses its
 * trailing slashes, and an empty one (even an 'L' of size 0) renames the
 * member to "". The receipt fuzzer found each of those differences.
 *
 * Two ways through one decoder: `planPlainTar`, a header-only pass over an
 * uncompressed file that succeeds only when every header is a plain member
 * (so the data can be read with `readSync` straight into the caller's
 * buffer), and `readTar`, the streaming state machine for everything else.
 * The plan has no side effects and returns null for anything unusual; the
 * caller then streams from the start, so every refusal keeps its place
 * relative to the members visited before it.
 */
export class TarError extends Error {}

export interface TarHeader {
  name: string;
  /** As decoded: null for a base-256 field tar-stream could not read, NaN or negative for nonsense. */
  size: number;
  type: string | null;
  /**
   * What else shaped the member, for readers that must refuse what other
   * tar implementations read differently (src/receipts/members.ts); set by
   * `readTar` on the members it hands out.
   */
  quirks?: TarQuirks;
}

/** Header facts on which GNU tar and Python's tarfile may part ways. */
export interface TarQuirks {
  /** Type flags of the extended headers ('x', 'L', 'K', 'N', ...) since the previous member, in order. */
  extended: string;
  /** Those headers' own names (their ustar name fields), in the same order. */
  extendedNames: string[];
  /** The name as the single name-setting extended header spelled it (before any slash was stripped), else null. */
  longName: string | null;
  /** Keys of the PAX extended headers applied to the member. */
  paxKeys: string[];
  /** Keys of the PAX global headers in force. */
  globalKeys: string[];
  /** A PAX header held a record that is not `<len> <key>=<value>\n` (readers disagree on where it stops). */
  paxMalformed: boolean;
  /** A GNU-magic header with bytes in the ustar prefix field (tarfile prepends them to the name, GNU tar does not). */
  gnuPrefix: boolean;
  /** The member came after an end-of-archive block (GNU tar and tarfile stop at the first zero block). */
  afterEnd: boolean;
}

const MAX_LONG_HEADER = 4 * 1024 * 1024;
const END = "Unexpected end of data";

function utf8(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8");
}

function indexOf(block: Uint8Array, byte: number, from: number, end: number): number {
  for (; from < end; from++) if (block[from] === byte) return from;
  return end;
}

function decodeStr(h: Uint8Array, off: number, len: number): string {
  return utf8(h.subarray(off, indexOf(h, 0, off, off + len)));
}

/** A base-256 field: 0x80 positive, 0xff negative, anything else null (as tar-stream reads it). */
function parse256(f: Uint8Array): number | null {
  const positive = f[0] === 0x80;
  if (!positive && f[0] !== 0xff) return null;
  let sum = 0;
  for (let i = f.length - 1, k = 0; i > 0; i--, k++) sum += (positive ? f[i]! : 0xff - f[i]!) * Math.pow(256, k);
  return positive ? sum : -sum;
}

/** A numeric field: leading spaces, up to the next space, leading NULs skipped, then `parseInt(…, 8)`. */
function decodeOct(h: Uint8Array, off: number, len: number): number {
  const f = h.subarray(off, off + len);
  if (f[0]! & 0x80) return parse256(f) as number;
  let p = 0;
  while (p < f.length && f[p] === 0x20) p++;
  const end = indexOf(f, 0x20, p, f.length);
  while (p < end && f[p] === 0) p++;
  if (end === p) return 0;
  return parseInt(utf8(f.subarray(p, end)), 8);
}

const TYPES: Record<number, string> = {
  0: "file", 1: "link", 2: "symlink", 3: "character-device", 4: "block-device", 5: "directory", 6: "fifo", 7: "contiguous-file",
  72: "pax-header", 55: "pax-global-header", 27: "gnu-long-link-path", 28: "gnu-long-path", 30: "gnu-long-path",
};
const LONG = new Set(["gnu-long-path", "gnu-long-link-path", "pax-global-header", "pax-header"]);

function magicIs(h: Uint8Array, bytes: readonly number[]): boolean {
  for (let i = 0; i < bytes.length; i++) if (h[257 + i] !== bytes[i]) return false;
  return true;
}
const USTAR = [0x75, 0x73, 0x74, 0x61, 0x72, 0x00];
const GNU = [0x75, 0x73, 0x74, 0x61, 0x72, 0x20, 0x20, 0x00];

/** A decoded header block: its raw type flag byte, and whether a GNU header carried a prefix field. */
export interface DecodedHeader extends TarHeader {
  flag: number;
  gnuPrefix?: true;
}

/** One 512-byte header block; null for a block that is zero but for its checksum field (skipped). */
export function decodeHeader(h: Uint8Array): DecodedHeader | null {
  // The type comes from the flag alone ('0' with a trailing '/' in the name stays a file).
  const flag = h[156] === 0 ? 0 : h[156]! - 0x30;
  let name = decodeStr(h, 0, 100);
  const size = decodeOct(h, 124, 12);
  let sum = 8 * 0x20;
  for (let i = 0; i < 148; i++) sum += h[i]!;
  for (let i = 156; i < 512; i++) sum += h[i]!;
  if (sum === 8 * 0x20) return null;
  if (sum !== decodeOct(h, 148, 8)) throw new TarError("Invalid tar header. Maybe the tar is corrupted or it needs to be gunzipped?");
  if (magicIs(h, USTAR)) {
    if (h[345]) name = decodeStr(h, 345, 155) + "/" + name;
  } else if (!magicIs(h, GNU)) {
    throw new TarError("Invalid tar header: unknown format.");
  } else if (h[345]) {
    return { name, size, type: TYPES[flag] ?? null, flag: h[156]!, gnuPrefix: true };
  }
  return { name, size, type: TYPES[flag] ?? null, flag: h[156]! };
}

/** PAX records `<len> <key>=<value>\n`, read as tar-stream does (it stops at the first record it cannot read). */
function decodePax(input: Uint8Array): Record<string, string> {
  const result: Record<string, string> = {};
  let buf = input;
  while (buf.length) {
    let i = 0;
    while (i < buf.length && buf[i] !== 0x20) i++;
    const len = parseInt(utf8(buf.subarray(0, i)), 10);
    if (!len) return result;
    const b = utf8(buf.subarray(i + 1, len - 1));
    const eq = b.indexOf("=");
    if (eq === -1) return result;
    result[b.slice(0, eq)] = b.slice(eq + 1);
    buf = buf.subarray(len);
  }
  return result;
}

/**
 * The keys of a PAX header's records, read strictly: each record
 * `<len> <key>=<value>\n` with `len` its exact decimal length, up to the end
 * or a NUL; `malformed` when a record is not that (tar-stream stops there,
 * tarfile and GNU tar refuse or read on).
 */
function paxKeys(data: Uint8Array): { keys: string[]; malformed: boolean } {
  const keys: string[] = [];
  let pos = 0;
  while (pos < data.length && data[pos] !== 0) {
    let i = pos;
    while (i < data.length && data[i]! >= 0x30 && data[i]! <= 0x39) i++;
    const len = i > pos && i - pos < 16 ? parseInt(utf8(data.subarray(pos, i)), 10) : 0;
    const end = pos + len;
    if (len === 0 || data[i] !== 0x20 || end > data.length || data[end - 1] !== 0x0a) return { keys, malformed: true };
    const eq = indexOf(data, 0x3d, i + 1, end - 1);
    if (eq === end - 1 || eq === i + 1) return { keys, malformed: true };
    keys.push(utf8(data.subarray(i + 1, eq)));
    pos = end;
  }
  return { keys, malformed: false };
}

function allZero(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
}

/** Zero padding after `size` bytes of data. */
function padding(size: number): number {
  const r = size & 511;
  return r && 512 - r;
}

/** A member plain enough to be read by offset. */
export interface PlainMember {
  name: string;
  size: number;
  type: "file" | "contiguous-file" | "directory";
  /** Offset of the member's data in the file. */
  offset: number;
}

/**
 * The members of a plain tar, or null (stream it instead): every header
 * decodes to a file, contiguous file or empty directory with a readable
 * size (no long names, nothing refused), at most `maxMembers` of them, each
 * name passing `accept`, and the last member's data and padding end exactly
 * at the end of the file (zero blocks aside).
 */
export function planPlainTar(fd: number, maxMembers: number, accept: (name: string) => boolean): PlainMember[] | null {
  const fileSize = fstatSync(fd).size;
  const block = new Uint8Array(512);
  const members: PlainMember[] = [];
  let off = 0;
  let afterEnd = false;
  while (off < fileSize) {
    if (fileSize - off < 512 || readSync(fd, block, 0, 512, off) !== 512) return null;
    let h: DecodedHeader | null;
    try {
      h = decodeHeader(block);
    } catch {
      return null;
    }
    if (h === null) {
      off += 512;
      afterEnd = true;
      // Streamed instead, where it is reported.
      if (!allZero(block)) return null;
      continue;
    }
    // Streamed instead, where the member's quirks are reported.
    if (afterEnd || h.gnuPrefix) return null;
    const type = h.type;
    if (type !== "file" && type !== "contiguous-file" && type !== "directory") return null;
    if (!Number.isSafeInteger(h.size) || h.size < 0 || (type === "directory" && h.size !== 0)) return null;
    if (members.length >= maxMembers || !accept(h.name)) return null;
    const data = off + 512;
    const next = data + h.size + padding(h.size);
    if (next > fileSize) return null;
    members.push({ name: h.name, size: h.size, type, offset: data });
    off = next;
  }
  return members;
}

/** Receives a member's data (chunks valid during the call) and its end. */
export interface TarDataSink {
  data(chunk: Uint8Array): void | Promise<void>;
  end(): void | Promise<void>;
}

/** Unread bytes of the source, in the chunks they came in. */
class Chunks {
  private readonly queue: Uint8Array[] = [];
  private head = 0;
  private offset = 0;
  buffered = 0;

  push(chunk: Uint8Array): void {
    this.buffered += chunk.length;
    this.queue.push(chunk);
  }

  /** Up to `size` bytes from the first chunk. */
  first(size: number): Uint8Array {
    const buf = this.queue[this.head]!;
    const rem = buf.length - this.offset;
    if (size >= rem) {
      const sub = buf.subarray(this.offset);
      this.head++;
      if (this.head > 64) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      this.offset = 0;
      this.buffered -= rem;
      return sub;
    }
    this.buffered -= size;
    return buf.subarray(this.offset, (this.offset += size));
  }

  /** Exactly `size` bytes, or null when fewer are buffered (nothing taken). */
  take(size: number): Uint8Array | null {
    if (size > this.buffered) return null;
    if (size === 0) return new Uint8Array(0);
    const parts: Uint8Array[] = [];
    let got = 0;
    while (got < size) {
      const p = this.first(size - got);
      parts.push(p);
      got += p.length;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

/**
 * Stream the members of the tar in `source` (chunks, in order) to `onMember`,
 * which returns a sink for the member's data or null to skip it. Throws
 * `TarError` for what is not a tar (the caller names it); whatever
 * `onMember` or a sink throws propagates unchanged. Returns the number of
 * members seen.
 */
export async function readTar(
  source: () => Promise<Uint8Array | null>,
  onMember: (h: TarHeader) => Promise<TarDataSink | null> | TarDataSink | null,
  /** Called at the end with the type flags of extended headers no member followed (tarfile reads an unknown one, like `N`, as a file). */
  onEnd?: (dangling: string, names: string[], strayEnd: boolean) => void,
): Promise<number> {
  const buf = new Chunks();
  const more = async (): Promise<boolean> => {
    const chunk = await source();
    if (chunk === null) return false;
    if (chunk.length > 0) buf.push(chunk);
    return true;
  };
  // The extractor's state, kept as it kept it: a long header of a size it
  // could not use stays "pending" and swallows a later member's padding.
  let missing = 0;
  let longPending = false;
  let header: TarHeader | null = null;
  let gnuLongPath: string | null = null;
  let pax: Record<string, string> | null = null;
  let paxGlobal: Record<string, string> | null = null;
  /** The name the first name-setting header since the last member gave (tarfile's rule). */
  let first: string | undefined;
  let members = 0;
  // What the member's quirks will say (reset at each member).
  let extended = "";
  let extendedNames: string[] = [];
  let longName: string | null = null;
  let memberPaxKeys: string[] = [];
  let globalKeys: string[] = [];
  let paxMalformed = false;
  let afterEnd = false;
  /** An end block that is zero but for its checksum field (tarfile may read it as a nameless member). */
  let strayEnd = false;
  let gnuPrefix = false;

  const decodeLong = (data: Uint8Array | null): void => {
    const type = header!.type;
    const pending = pax;
    if (data === null) return;
    if (type === "gnu-long-path") {
      gnuLongPath = decodeStr(data, 0, data.length);
      if (longName === null) longName = gnuLongPath;
      if (first === undefined) first = gnuLongPath;
    } else if (type === "pax-global-header") {
      paxGlobal = decodePax(data);
      const scan = paxKeys(data);
      globalKeys = scan.keys;
      if (scan.malformed) paxMalformed = true;
    } else if (type === "pax-header") {
      const scan = paxKeys(data);
      memberPaxKeys.push(...scan.keys);
      if (scan.malformed) paxMalformed = true;
      pax = paxGlobal === null ? decodePax(data) : Object.assign({}, paxGlobal, decodePax(data));
      const path = pax.path;
      // Keys of an earlier PAX header win over a later one's.
      if (pending) pax = { ...pax, ...pending };
      if (first === undefined && path !== undefined) first = path.replace(/\/+$/, "");
      if (longName === null && path !== undefined) longName = path;
    }
  };

  const applyLong = (h: TarHeader): void => {
    const name = first;
    first = undefined;
    if (gnuLongPath) {
      h.name = gnuLongPath;
      gnuLongPath = null;
    }
    if (pax) {
      if (pax.path) h.name = pax.path;
      if (pax.size) h.size = parseInt(pax.size, 10);
      pax = null;
    }
    if (name !== undefined) h.name = name;
  };

  for (;;) {
    if (missing > 0) {
      if (longPending) {
        while (missing > buf.buffered) if (!(await more())) throw new TarError(END);
        longPending = false;
        missing = padding(header!.size);
        decodeLong(buf.take(header!.size));
        continue;
      }
      if (buf.buffered === 0 && !(await more())) throw new TarError(END);
      if (buf.buffered > 0) missing -= buf.first(missing).length;
      continue;
    }
    if (buf.buffered < 512) {
      if (await more()) continue;
      if (buf.buffered === 0 && missing === 0) {
        onEnd?.(extended, extendedNames, strayEnd);
        return members;
      }
      throw new TarError(END);
    }
    const block = buf.take(512)!;
    const h = decodeHeader(block);
    header = h ?? header;
    if (h === null) {
      afterEnd = true;
      if (!allZero(block)) strayEnd = true;
      continue;
    }
    if (h.gnuPrefix) gnuPrefix = true;
    if (h.type !== null && LONG.has(h.type)) {
      extended += String.fromCharCode(h.flag);
      extendedNames.push(h.name);
      longPending = true;
      missing = h.size;
      if (missing > MAX_LONG_HEADER) throw new TarError("Header exceeds max size");
      // A size-0 'L' is never decoded: its name is "".
      if (h.type === "gnu-long-path" && h.size === 0 && first === undefined) first = "";
      continue;
    }
    applyLong(h);
    h.quirks = { extended, extendedNames, longName, paxKeys: memberPaxKeys, globalKeys, paxMalformed, gnuPrefix, afterEnd };
    extended = "";
    extendedNames = [];
    longName = null;
    memberPaxKeys = [];
    paxMalformed = false;
    gnuPrefix = false;
    if (!(h.size >= 0)) throw new TarError("Invalid header");
    members++;
    const sink = await onMember(h);
    if (h.size === 0 || h.type === "directory") {
      if (sink !== null) await sink.end();
      continue;
    }
    missing = h.size;
    while (missing > 0) {
      if (buf.buffered === 0 && !(await more())) throw new TarError(END);
      const chunk = buf.first(missing);
      missing -= chunk.length;
      if (sink !== null) await sink.data(chunk);
    }
    if (sink !== null) await sink.end();
    missing = padding(h.size);
  }
}
