/**
 * Hand-made tar archives for hostile-receipt tests: full control over every
 * header field (type flags, names, declared sizes), so cases a well-behaved
 * writer never produces can be built.
 */
export interface CraftEntry {
  name: string;
  data?: Uint8Array | string;
  /** Type flag: "0" file, "1" hard link, "2" symlink, "3" char dev, "4" block dev, "5" dir, "6" fifo, "x" PAX. */
  type?: string;
  linkname?: string;
  /** Declared size (defaults to the data length). */
  size?: number;
}

const enc = new TextEncoder();

function putString(buf: Uint8Array, off: number, len: number, s: string): void {
  const b = enc.encode(s);
  buf.set(b.subarray(0, len), off);
}

function putOctal(buf: Uint8Array, off: number, len: number, n: number): void {
  putString(buf, off, len, n.toString(8).padStart(len - 1, "0") + "\0");
}

export function header(e: CraftEntry, size: number): Uint8Array {
  const h = new Uint8Array(512);
  putString(h, 0, 100, e.name);
  putOctal(h, 100, 8, 0o600);
  putOctal(h, 108, 8, 0);
  putOctal(h, 116, 8, 0);
  putOctal(h, 124, 12, size);
  putOctal(h, 136, 12, 1_700_000_000);
  h.fill(0x20, 148, 156);
  putString(h, 156, 1, e.type ?? "0");
  putString(h, 157, 100, e.linkname ?? "");
  putString(h, 257, 6, "ustar\0");
  putString(h, 263, 2, "00");
  let sum = 0;
  for (const b of h) sum += b;
  putString(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

function pad(n: number): number {
  return (512 - (n % 512)) % 512;
}

/** PAX extended header record `"<len> key=value\n"`. */
export function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = body.length + 1;
  while (String(len).length + body.length !== len) len = String(len).length + body.length;
  return `${len}${body}`;
}

export function craftTar(entries: CraftEntry[], { end = true }: { end?: boolean } = {}): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const data = typeof e.data === "string" ? enc.encode(e.data) : (e.data ?? new Uint8Array(0));
    parts.push(header(e, e.size ?? data.length));
    parts.push(data);
    parts.push(new Uint8Array(pad(data.length)));
  }
  if (end) parts.push(new Uint8Array(1024));
  const total = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export interface ListedMember {
  name: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  type: string;
  uname: string;
  data: Uint8Array;
}

const dec = new TextDecoder();
const cstr = (b: Uint8Array) => dec.decode(b.subarray(0, b.indexOf(0) === -1 ? b.length : b.indexOf(0)));

/** Parse a plain ustar archive (what export writes) for inspection. */
export function listTar(bytes: Uint8Array): ListedMember[] {
  const out: ListedMember[] = [];
  let off = 0;
  while (off + 512 <= bytes.length) {
    const h = bytes.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const size = parseInt(cstr(h.subarray(124, 136)).trim(), 8);
    out.push({
      name: cstr(h.subarray(0, 100)),
      size,
      mode: parseInt(cstr(h.subarray(100, 108)).trim(), 8),
      uid: parseInt(cstr(h.subarray(108, 116)).trim(), 8),
      gid: parseInt(cstr(h.subarray(116, 124)).trim(), 8),
      type: String.fromCharCode(h[156]!),
      uname: cstr(h.subarray(265, 297)),
      data: bytes.subarray(off + 512, off + 512 + size),
    });
    off += 512 + size + pad(size);
  }
  return out;
}
