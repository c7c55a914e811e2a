/**
 * A minimal ustar reader/writer for building hostile receipts: members of
 * any type and name (links, devices, `..`, absolute paths, PAX headers),
 * sizes that lie, checksums recomputed or not. Not used by the product.
 */
export interface TarMember {
  name: string;
  /** ustar typeflag: "0" file, "1" hard link, "2" symlink, "3" char dev, "5" dir, "6" fifo, "x" PAX, ... */
  type: string;
  data: Uint8Array;
  linkname?: string;
  /** Declared size when it should lie about data.length. */
  declaredSize?: number;
  mode?: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder("latin1");

function putString(h: Uint8Array, off: number, len: number, s: string): void {
  const b = enc.encode(s).subarray(0, len);
  h.set(b, off);
}

function putOctal(h: Uint8Array, off: number, len: number, n: number): void {
  putString(h, off, len, n.toString(8).padStart(len - 1, "0").slice(-(len - 1)) + "\0");
}

export function header(m: TarMember, opts: { badChecksum?: boolean } = {}): Uint8Array {
  const h = new Uint8Array(512);
  putString(h, 0, 100, m.name);
  putOctal(h, 100, 8, m.mode ?? 0o600);
  putOctal(h, 108, 8, 0);
  putOctal(h, 116, 8, 0);
  putOctal(h, 124, 12, m.declaredSize ?? m.data.length);
  putOctal(h, 136, 12, 1_700_000_000);
  h.fill(0x20, 148, 156);
  putString(h, 156, 1, m.type);
  putString(h, 157, 100, m.linkname ?? "");
  putString(h, 257, 6, "ustar\0");
  putString(h, 263, 2, "00");
  let sum = 0;
  for (const b of h) sum += b;
  if (opts.badChecksum) sum += 1;
  putString(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

/** A PAX extended header member setting `path` for the next member. */
export function paxPath(path: string): TarMember {
  const body = (len: number) => `${len} path=${path}\n`;
  let rec = body(0);
  let len = enc.encode(rec).length;
  for (;;) {
    const next = enc.encode(body(len)).length;
    if (next === len) break;
    len = next;
  }
  rec = body(len);
  return { name: "PaxHeader", type: "x", data: enc.encode(rec) };
}

export function buildTar(members: TarMember[], opts: { badChecksumAt?: number; noTrailer?: boolean } = {}): Uint8Array {
  const parts: Uint8Array[] = [];
  members.forEach((m, i) => {
    parts.push(header(m, { badChecksum: opts.badChecksumAt === i }));
    parts.push(m.data);
    const pad = (512 - (m.data.length % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  });
  if (!opts.noTrailer) parts.push(new Uint8Array(1024));
  let n = 0;
  for (const p of parts) n += p.length;
  const record = opts.noTrailer ? n : Math.ceil(n / 10240) * 10240;
  const out = new Uint8Array(record);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Members of a well-formed ustar archive (seeds only; stops at the first zero block). */
export function readTar(bytes: Uint8Array): TarMember[] {
  const out: TarMember[] = [];
  let off = 0;
  while (off + 512 <= bytes.length) {
    const h = bytes.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const str = (a: number, l: number) => dec.decode(h.subarray(a, a + l)).replace(/\0.*$/s, "");
    const size = parseInt(str(124, 12).trim() || "0", 8);
    const type = str(156, 1) || "0";
    const data = bytes.slice(off + 512, off + 512 + size);
    out.push({ name: str(0, 100), type, data, linkname: str(157, 100) });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** One header block for `m`, edited by `edit`, with its checksum recomputed (hostile headers the writer cannot make). */
export function edited(m: TarMember, edit: (h: Uint8Array) => void): Uint8Array {
  const h = header(m);
  edit(h);
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.set(enc.encode(sum.toString(8).padStart(6, "0") + "\0 "), 148);
  return h;
}

/** `data` padded with zeros to whole 512-byte blocks. */
export function padded(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.length / 512) * 512);
  out.set(data);
  return out;
}
