import { materialize } from "../pyjson/parse.ts";
import { pyRepr } from "../pyjson/python.ts";
import { PyNum, PyRaw, type PyValue } from "../pyjson/types.ts";

/**
 * ReplayGateway's `v1:` key scheme (upstream-parity §5.1): the logged key is
 * `"v1:" + hex(SHA-256("bernstein.replay.key.v1\0" + ENC((caller_key,))))`,
 * ENC a tagged, length-prefixed encoding. Older logs carry the caller's key
 * itself (unversioned). Used by `replay diff` to tell two logs recorded
 * under different schemes from two logs of different calls.
 */

const DOMAIN = new TextEncoder().encode("bernstein.replay.key.v1\0");
const utf8 = new TextEncoder();

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function tagged(tag: number, body: Uint8Array): Uint8Array {
  return concat([new Uint8Array([tag]), u32(body.length), body]);
}

/** Python `format(float(x), ".10f")`. */
function fixed10(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  // toFixed switches to exponent form at 1e21; such doubles are integers.
  if (Math.abs(x) >= 1e21) return BigInt(x).toString() + ".0000000000";
  const s = x.toFixed(10);
  return Object.is(x, -0) ? "-" + s : s;
}

/** ENC of one parsed JSON value. */
export function encodeKeyPart(v: PyValue): Uint8Array {
  // a huge row's large member is still its bytes (src/pyjson/row.ts): a list is encoded as the list it is
  if (v instanceof PyRaw) return encodeKeyPart(materialize(v));
  if (v === null) return new Uint8Array([0x00]);
  if (v === true || v === false) return new Uint8Array([0x01, v ? 1 : 0]);
  if (v instanceof PyNum) return tagged(0x02, utf8.encode(fixed10(Number(v.raw))));
  if (typeof v === "string") return tagged(0x03, utf8.encode(v));
  if (Array.isArray(v)) {
    const parts = [new Uint8Array([0x05]), u32(v.length)];
    for (const e of v) {
      const enc = encodeKeyPart(e);
      parts.push(u32(enc.length), enc);
    }
    return concat(parts);
  }
  return tagged(0xff, utf8.encode(pyRepr(v)));
}

export function deriveReplayKey(callerKey: PyValue): string {
  const payload = encodeKeyPart([callerKey]);
  return "v1:" + (Bun.SHA256.hash(concat([DOMAIN, payload]), "hex") as string);
}

const V1 = /^v1:[0-9a-f]{64}$/;

export function keyScheme(key: PyValue | undefined): "v1" | "unversioned" {
  return typeof key === "string" && V1.test(key) ? "v1" : "unversioned";
}
