/**
 * Just enough DER (X.690) to read an RFC 3161 time-stamp token and write a
 * time-stamp request: tag-length-value nodes over a byte array, definite
 * lengths only (DER forbids the others), no value decoding beyond what the
 * callers ask for.
 */

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DerError";
  }
}

export interface Node {
  /** The identifier octet (class, constructed bit, tag number < 31). */
  tag: number;
  /** Offsets into `bytes`: the whole TLV, and the value. */
  start: number;
  valueStart: number;
  end: number;
  bytes: Uint8Array;
}

export const TAG = { BOOLEAN: 0x01, INTEGER: 0x02, OCTET_STRING: 0x04, NULL: 0x05, OID: 0x06, SEQUENCE: 0x30, SET: 0x31, GENERALIZED_TIME: 0x18 } as const;

/** The node starting at `pos` (which must end by `limit`). */
export function readNode(bytes: Uint8Array, pos = 0, limit = bytes.length): Node {
  if (pos + 2 > limit) throw new DerError("truncated DER");
  const tag = bytes[pos]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError("high tag numbers are not used here");
  let len = bytes[pos + 1]!;
  let p = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new DerError("unsupported DER length");
    if (p + n > limit) throw new DerError("truncated DER length");
    len = 0;
    for (let k = 0; k < n; k++) len = len * 256 + bytes[p + k]!;
    p += n;
  }
  if (p + len > limit) throw new DerError("DER value runs past its container");
  return { tag, start: pos, valueStart: p, end: p + len, bytes };
}

/** The children of a constructed node. */
export function children(n: Node): Node[] {
  const out: Node[] = [];
  let p = n.valueStart;
  while (p < n.end) {
    const c = readNode(n.bytes, p, n.end);
    out.push(c);
    p = c.end;
  }
  return out;
}

export function value(n: Node): Uint8Array {
  return n.bytes.subarray(n.valueStart, n.end);
}

export function whole(n: Node): Uint8Array {
  return n.bytes.subarray(n.start, n.end);
}

export function expectTag(n: Node | undefined, tag: number, what: string): Node {
  if (!n || n.tag !== tag) throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, found ${n ? "0x" + n.tag.toString(16) : "nothing"}`);
  return n;
}

/** Dotted text of an OBJECT IDENTIFIER. */
export function oid(n: Node): string {
  const v = value(expectTag(n, TAG.OID, "object identifier"));
  const parts: number[] = [];
  let acc = 0;
  for (const b of v) {
    acc = acc * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(acc);
      acc = 0;
    }
  }
  const first = parts.shift() ?? 0;
  const a = first < 80 ? Math.floor(first / 40) : 2;
  return [a, first - a * 40, ...parts].join(".");
}

/** A non-negative INTEGER as bigint. */
export function integer(n: Node): bigint {
  const v = value(expectTag(n, TAG.INTEGER, "integer"));
  let x = 0n;
  for (const b of v) x = (x << 8n) | BigInt(b);
  return v.length && v[0]! & 0x80 ? x - (1n << BigInt(v.length * 8)) : x;
}

/** GeneralizedTime (`YYYYMMDDHHMMSS[.f]Z`) as an ISO-8601 string. */
export function generalizedTime(n: Node): string {
  const t = new TextDecoder().decode(value(expectTag(n, TAG.GENERALIZED_TIME, "genTime")));
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\.\d+)?Z$/.exec(t);
  if (!m) throw new DerError(`unsupported GeneralizedTime ${JSON.stringify(t)}`);
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[7] ?? ""}Z`;
}

// ---- writing (for the request) ----

function lengthBytes(n: number): number[] {
  if (n < 0x80) return [n];
  const out: number[] = [];
  while (n > 0) {
    out.unshift(n & 0xff);
    n = Math.floor(n / 256);
  }
  return [0x80 | out.length, ...out];
}

export function tlv(tag: number, ...parts: Uint8Array[]): Uint8Array {
  const len = parts.reduce((a, p) => a + p.length, 0);
  const head = [tag, ...lengthBytes(len)];
  const out = new Uint8Array(head.length + len);
  out.set(head);
  let o = head.length;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export function encodeInteger(x: bigint): Uint8Array {
  const bytes: number[] = [];
  do {
    bytes.unshift(Number(x & 0xffn));
    x >>= 8n;
  } while (x > 0n);
  if (bytes[0]! & 0x80) bytes.unshift(0);
  return tlv(TAG.INTEGER, new Uint8Array(bytes));
}

export function encodeOid(dotted: string): Uint8Array {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out: number[] = [];
  for (const x of [a! * 40 + b!, ...rest]) {
    const chunk: number[] = [x & 0x7f];
    let y = Math.floor(x / 128);
    while (y > 0) {
      chunk.unshift((y & 0x7f) | 0x80);
      y = Math.floor(y / 128);
    }
    out.push(...chunk);
  }
  return tlv(TAG.OID, new Uint8Array(out));
}
