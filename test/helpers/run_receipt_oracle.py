#!/usr/bin/env python3
"""An independent verifier of upstream run receipts, written from the spec
(upstream-parity.md section 1.9) with the Python standard library only: its
own CJ (json.dumps), journal walk, keyless spine walk, binding block, DSSE
PAE and an RFC 8032 Ed25519 verifier. Used by the tests as an oracle for
receipts written by `bernstein verify run`; it shares no code with the tool.

Usage: run_receipt_oracle.py FILE...   -> one JSON list of results on stdout
(each {"file", "status", "errors", "divergent_step", "receipt_sha256"}).
"""
import base64
import binascii
import hashlib
import json
import sys

RECEIPT_TYPE = "https://bernstein.run/attestations/run-receipt/v1"
PAYLOAD_TYPE = "application/vnd.bernstein.run-receipt+json"
ENVELOPE = {"ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"}


def cj(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def cj_raw(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha(b):
    return hashlib.sha256(b if isinstance(b, bytes) else b.encode("utf-8")).hexdigest()


# ---- RFC 8032 Ed25519 verification (affine Edwards arithmetic; slow but plain) ----
P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
I = pow(2, (P - 1) // 4, P)


def _xrecover(y):
    xx = (y * y - 1) * pow(D * y * y + 1, P - 2, P)
    x = pow(xx, (P + 3) // 8, P)
    if (x * x - xx) % P:
        x = x * I % P
    if x % 2:
        x = P - x
    return x


BY = 4 * pow(5, P - 2, P) % P
BASE = (_xrecover(BY), BY)


def _ext(pt):
    return (pt[0], pt[1], 1, pt[0] * pt[1] % P)


def _add(a, b):
    # Extended coordinates (Hisil et al.), a = -1: no inversions.
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % P
    bb = (y1 + x1) * (y2 + x2) % P
    cc = 2 * D * t1 * t2 % P
    dd = 2 * z1 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _mul(s, pt):
    q = (0, 1, 1, 0)
    while s:
        if s & 1:
            q = _add(q, pt)
        pt = _add(pt, pt)
        s >>= 1
    return q


def _same(a, b):
    return (a[0] * b[2] - b[0] * a[2]) % P == 0 and (a[1] * b[2] - b[1] * a[2]) % P == 0


def _decode(b):
    y = int.from_bytes(b, "little") & (2**255 - 1)
    if y >= P:
        return None
    x = _xrecover(y)
    if (x & 1) != (b[31] >> 7):
        x = P - x
    if (-x * x + y * y - 1 - D * x * x * y * y) % P:
        return None
    return _ext((x, y))


def ed25519_verify(pk, msg, sig):
    if len(pk) != 32 or len(sig) != 64:
        return False
    r, a = _decode(sig[:32]), _decode(pk)
    s = int.from_bytes(sig[32:], "little")
    if r is None or a is None or s >= L:
        return False
    h = int.from_bytes(hashlib.sha512(sig[:32] + pk + msg).digest(), "little") % L
    return _same(_mul(s, _ext(BASE)), _add(r, _mul(h, a)))


# ---- the receipt ----
class Fail(Exception):
    def __init__(self, status, msg, step=None):
        super().__init__(msg)
        self.status, self.msg, self.step = status, msg, step


def walk_journal(events):
    prev = ""
    for i, row in enumerate(events):
        etype = str(row.get("event", ""))
        payload = {k: v for k, v in row.items() if k not in ENVELOPE}
        payload["event"] = etype
        ph = sha(cj(payload))
        expected = sha(cj({"event_type": etype, "index": i, "payload_hash": ph, "prev_hash": prev}))
        if str(row.get("prev_hash", "")) != prev:
            raise Fail("tampered", "journal diverges at step %d: step %d: prev_hash break" % (i, i), i)
        if str(row.get("event_hash", "")) != expected:
            raise Fail("tampered", "journal diverges at step %d: step %d: event_hash mismatch" % (i, i), i)
        prev = str(row.get("event_hash", ""))


FIELDS = ["v", "prev_hash", "artifact_path", "content_hash", "actor", "step_id", "model", "timestamp", "entry_hash"]


def walk_spine(entries):
    prev = ""
    for i, e in enumerate(entries):
        missing = sorted(f for f in FIELDS if f not in e)
        if missing:
            raise Fail("tampered", "spine entry %d: missing fields %r" % (i, missing))
        if str(e["prev_hash"]) != prev:
            raise Fail("tampered", "spine entry %d: prev_hash break" % i)
        if e["v"] not in (None, 1, 2):
            raise Fail("tampered", "spine entry %d: unsupported scheme version %r" % (i, e["v"]))
        body = {k: str(e[k]) for k in ["prev_hash", "artifact_path", "content_hash", "actor", "step_id", "model"]}
        try:
            body["timestamp"] = int(e["timestamp"])
        except Exception:
            raise Fail("tampered", "spine entry %d: unhashable field types" % i)
        for k in ("traceparent", "tracestate", "baggage"):
            if e.get(k) is not None:
                body[k] = e[k]
        pre = ("bernstein:lineage:v2" if e["v"] == 2 else "") + cj_raw(body)
        if str(e["entry_hash"]) != "sha256:" + sha(pre):
            raise Fail("tampered", "spine entry %d: entry_hash mismatch" % i)
        prev = str(e["entry_hash"])
    return prev


def endpoints(events):
    seen = []
    for r in events:
        if r.get("event") == "agent_spawned" and isinstance(r.get("endpoint_adapter_name"), str) and r["endpoint_adapter_name"]:
            s = lambda k: r.get(k) if isinstance(r.get(k), str) else ""
            t = (r["endpoint_adapter_name"], s("endpoint_model"), s("endpoint_base_url"), s("endpoint_profile_name"))
            if t not in seen:
                seen.append(t)
    return [{"adapter": a, "model": m, "base_url": b, "profile": p} for a, m, b, p in sorted(seen)]


def verify(data):
    try:
        r = json.loads(data.decode("utf-8"))
    except Exception as exc:
        raise Fail("malformed", "receipt is not valid JSON: %s" % exc)
    if not isinstance(r, dict):
        raise Fail("malformed", "receipt is not a JSON object")
    if not str(r.get("run_id") or ""):
        raise Fail("malformed", "receipt.run_id missing")
    if r.get("receipt_type") != RECEIPT_TYPE:
        raise Fail("malformed", "unexpected receipt_type %r" % r.get("receipt_type"))
    if r.get("schema_version") not in ("1.0.0", "1.1.0") or r.get("hash_profile", "py-json-v1") != "py-json-v1":
        raise Fail("malformed", "unsupported schema_version or hash_profile")
    j, s, g = r.get("journal"), r.get("spine"), r.get("signing")
    if not isinstance(j, dict) or not isinstance(j.get("events"), list):
        raise Fail("malformed", "receipt.journal.events missing or not a list")
    if not isinstance(s, dict) or not isinstance(s.get("entries"), list):
        raise Fail("malformed", "receipt.spine.entries missing or not a list")
    if not isinstance(g, dict):
        raise Fail("malformed", "receipt.signing missing")
    if g.get("payload_type") != PAYLOAD_TYPE:
        raise Fail("malformed", "unexpected signing.payload_type %r" % g.get("payload_type"))
    ev, en = j["events"], s["entries"]
    if not all(isinstance(x, dict) for x in ev):
        raise Fail("malformed", "receipt.journal.events contains a non-object row")
    if not ev:
        raise Fail("malformed", "receipt embeds no journal events; an empty range attests nothing")
    if not all(isinstance(x, dict) for x in en):
        raise Fail("malformed", "receipt.spine.entries contains a non-object row")
    walk_journal(ev)
    if str(j.get("head_hash")) != str(ev[-1].get("event_hash")):
        raise Fail("tampered", "journal.head_hash does not match the head recomputed from the embedded rows")
    if j.get("event_count") != len(ev):
        raise Fail("tampered", "journal.event_count does not match the embedded rows")
    spine_head = walk_spine(en)
    if str(s.get("head_hash")) != spine_head:
        raise Fail("tampered", "spine.head_hash does not match the head recomputed from the embedded entries")
    if s.get("entry_count") != len(en):
        raise Fail("tampered", "spine.entry_count does not match the embedded entries")
    block = {"journal_event_count": len(ev), "journal_head": str(ev[-1].get("event_hash")), "run_id": str(r["run_id"]),
             "spine_entry_count": len(en), "spine_head": spine_head}
    eps = endpoints(ev)
    if eps:
        block["endpoints"] = eps
    a = r.get("audit_range")
    if a is not None:
        if not isinstance(a, dict) or not isinstance(a.get("events"), list):
            raise Fail("malformed", "receipt.audit_range.events missing or not a list")
        head = sha("".join(cj(e) + "\n" for e in a["events"]))
        if str(a.get("head_sha256")) != head:
            raise Fail("tampered", "audit_range.head_sha256 does not match the head recomputed from the embedded events")
        if a.get("event_count") != len(a["events"]):
            raise Fail("tampered", "audit_range.event_count does not match the embedded events")
        block["audit_range_head_sha256"] = head
        if r["schema_version"] != "1.0.0":
            for k in ("event_count", "head_hmac", "since", "until"):
                if a.get(k) is not None:
                    block["audit_range_" + k] = a[k]
    binding = cj(block).encode("utf-8")
    stated = str(((r.get("subject") or {}).get("digest") or {}).get("sha256", ""))
    if stated != sha(binding):
        raise Fail("tampered", "signed subject does not match the digest recomputed from the embedded ranges")
    jwk = g.get("public_key_jwk")
    if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not isinstance(jwk.get("x"), str):
        raise Fail("malformed", "embedded JWK is not a usable Ed25519 key")
    x = jwk["x"]
    pk = base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))
    if len(pk) != 32:
        raise Fail("malformed", "embedded JWK is not a usable Ed25519 key")
    if not isinstance(g.get("signature_b64"), str):
        raise Fail("malformed", "receipt.signing.signature_b64 missing")
    try:
        sig = base64.b64decode(g["signature_b64"], validate=True)
    except binascii.Error:
        raise Fail("malformed", "receipt.signing.signature_b64 is not valid base64")
    pae = b"DSSEv1 %d %s %d " % (len(PAYLOAD_TYPE), PAYLOAD_TYPE.encode(), len(binding)) + binding
    if not ed25519_verify(pk, pae, sig):
        raise Fail("tampered", "Ed25519 signature does not verify over the recomputed subject binding")
    return sha((cj(r) + "\n").encode("utf-8"))


def check(data, name=None):
    """The verdict on receipt bytes; a value Python cannot even hash (a lone surrogate) is tampered."""
    try:
        digest = verify(data)
        return {"file": name, "status": "ok", "errors": [], "divergent_step": None, "receipt_sha256": digest}
    except Fail as e:
        return {"file": name, "status": e.status, "errors": [e.msg], "divergent_step": e.step, "receipt_sha256": None}
    except (UnicodeEncodeError, TypeError, ValueError) as e:
        return {"file": name, "status": "tampered", "errors": ["unhashable value: %s" % e], "divergent_step": None, "receipt_sha256": None}


def main(files):
    json.dump([check(open(f, "rb").read(), f) for f in files], sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
