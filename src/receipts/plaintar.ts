import { fstatSync, readSync } from "node:fs";

/**
 * The plain-tar fast path of `walkArchive`: a header-only pass over an
 * uncompressed tar (one 512-byte pread per header, data skipped) that
 * accepts only archives whose every header it reads exactly as the
 * tar-stream path would, so the member data can then be read with
 * `readSync` into one reusable buffer instead of through Node streams.
 *
 * The pass has no side effects and returns null for anything it does not
 * fully understand; the caller then walks the archive through tar-stream
 * from the start, so every refusal (links, devices, odd names, too many
 * members, truncated data, bad checksums, PAX/GNU long names, base-256
 * sizes, non-ASCII names, trailing partial blocks) keeps its exact message
 * and its place relative to the members visited before it.
 *
 * Accepted: ustar ("ustar\0") and GNU ("ustar  \0") headers with a correct
 * checksum, typeflag '0'/NUL (file, even when the name ends in '/', as
 * tar-stream reports it), '5' (directory, size 0) or '7' (contiguous
 * file); all-zero blocks are skipped (tar-stream reads on past them); the
 * last member's data and padding must end exactly at the end of the file.
 */
export interface PlainMember {
  name: string;
  size: number;
  type: "file" | "contiguous-file" | "directory";
  /** Offset of the member's data in the file. */
  offset: number;
}

/** Zero blocks tolerated by the fast pass (a normal trailer plus record padding is at most ~21). */
const MAX_ZERO_BLOCKS = 1024;

/**
 * A numeric header field as tar-stream decodes it (leading spaces, then up
 * to the first space, leading NULs skipped, octal digits up to the first
 * other byte), or -1 when the field is not in that plain form (base-256,
 * a sign, a non-digit first character): the caller then falls back.
 */
function octal(h: Uint8Array, off: number, len: number): number {
  if ((h[off]! & 0x80) !== 0) return -1;
  const lim = off + len;
  let p = off;
  while (p < lim && h[p] === 0x20) p++;
  let end = p;
  while (end < lim && h[end] !== 0x20) end++;
  while (p < end && h[p] === 0) p++;
  if (p === end) return 0;
  let v = 0;
  let digits = 0;
  while (p < end) {
    const c = h[p]!;
    if (c < 0x30 || c > 0x37) break;
    v = v * 8 + (c - 0x30);
    digits++;
    p++;
  }
  return digits === 0 ? -1 : v;
}

/** A NUL-terminated ASCII field, or null when it holds a byte >= 0x80 (decoded differently by UTF-8). */
function asciiField(h: Uint8Array, off: number, len: number): string | null {
  let s = "";
  for (let i = off; i < off + len; i++) {
    const c = h[i]!;
    if (c === 0) break;
    if (c >= 0x80) return null;
    s += String.fromCharCode(c);
  }
  return s;
}

function isMagic(h: Uint8Array, bytes: readonly number[]): boolean {
  for (let i = 0; i < bytes.length; i++) if (h[257 + i] !== bytes[i]) return false;
  return true;
}
const USTAR = [0x75, 0x73, 0x74, 0x61, 0x72, 0x00];
const GNU = [0x75, 0x73, 0x74, 0x61, 0x72, 0x20, 0x20, 0x00];

/**
 * The members of a plain tar whose structure the fast path reads exactly
 * like the tar-stream path, or null (use that path). `accept` vets each
 * member's name (a name the walker would refuse sends the archive to the
 * stream path, which refuses it in order).
 */
export function planPlainTar(fd: number, maxMembers: number, accept: (name: string) => boolean): PlainMember[] | null {
  const fileSize = fstatSync(fd).size;
  const h = new Uint8Array(512);
  const members: PlainMember[] = [];
  let zeros = 0;
  let off = 0;
  while (off < fileSize) {
    if (fileSize - off < 512) return null;
    if (readSync(fd, h, 0, 512, off) !== 512) return null;
    let sum = 0;
    for (let i = 0; i < 148; i++) sum += h[i]!;
    for (let i = 156; i < 512; i++) sum += h[i]!;
    if (sum === 0) {
      // tar-stream skips a block whose bytes (checksum field aside) are all zero.
      if (++zeros > MAX_ZERO_BLOCKS) return null;
      off += 512;
      continue;
    }
    if (octal(h, 148, 8) !== sum + 8 * 0x20) return null;
    const ustar = isMagic(h, USTAR);
    if (!ustar && !isMagic(h, GNU)) return null;
    let name = asciiField(h, 0, 100);
    if (name === null) return null;
    if (ustar && h[345] !== 0) {
      const prefix = asciiField(h, 345, 155);
      if (prefix === null) return null;
      name = `${prefix}/${name}`;
    }
    const flag = h[156];
    let type: PlainMember["type"];
    // tar-stream derives the type from the flag alone (its trailing-slash rule comes too late to change it).
    if (flag === 0 || flag === 0x30) type = "file";
    else if (flag === 0x35) type = "directory";
    else if (flag === 0x37) type = "contiguous-file";
    else return null;
    const size = octal(h, 124, 12);
    if (size < 0 || (type === "directory" && size !== 0)) return null;
    if (members.length >= maxMembers || !accept(name)) return null;
    const data = off + 512;
    const next = data + size + ((512 - (size % 512)) % 512);
    if (next > fileSize) return null;
    members.push({ name, size, type, offset: data });
    off = next;
  }
  return members;
}
