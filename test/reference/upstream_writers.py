#!/usr/bin/env python3
"""Writers of the files upstream's orchestrator leaves behind (standard library only).

Written for this repository from spec/upstream-parity.md (not copied from the
orchestrator), so the tests get files shaped as Python writes them, from an
implementation independent of the TypeScript one:

* run journals (spec run-journal §1.2, hashes as verify_journal.py computes them);
* the lineage spine and its journal-head seal (§2.2-2.4: CJ-raw rows, HKDF key,
  HMAC tags, spine.head);
* ReplayGateway logs, events.jsonl (§5.1: the v1: key derivation and the row layout);
* provider_state_mutation payloads (§4.1: digests and content address).

    python3 test/reference/upstream_writers.py < jobs.json

stdin: a JSON list of jobs; stdout: a JSON list of answers (one per job).
"""
import hashlib
import hmac as hmac_mod
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verify_journal import event_hash, payload_hash  # noqa: E402

ENVELOPE = ("ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash")


def write_journal(job):
    """Rows in the writer's key order: ts, elapsed_s, index, event, payload..., prev_hash, payload_hash, event_hash."""
    prev = ""
    lines = []
    t0 = 1727000000.0
    for i, ev in enumerate(job["events"]):
        event = ev["event"]
        payload = {k: v for k, v in ev.items() if k != "event"}
        ph = payload_hash(event, payload)
        eh = event_hash(prev, event, ph, i)
        row = {"ts": t0 + i, "elapsed_s": float(i), "index": i, "event": event}
        row.update(payload)
        row.update({"prev_hash": prev, "payload_hash": ph, "event_hash": eh})
        lines.append(json.dumps(row) + "\n")
        prev = eh
    os.makedirs(os.path.dirname(job["path"]), exist_ok=True)
    with open(job["path"], "w", encoding="utf-8") as fh:
        fh.write("".join(lines))
    return {"head": prev, "count": len(lines)}


def cj_raw(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def hkdf_sha256(ikm, info, length=32):
    prk = hmac_mod.new(b"\x00" * 32, ikm, hashlib.sha256).digest()
    out, block, n = b"", b"", 1
    while len(out) < length:
        block = hmac_mod.new(prk, block + info + bytes([n]), hashlib.sha256).digest()
        out += block
        n += 1
    return out[:length]


def spine_append(job):
    """One spine entry (v2 unless job["v"] == 1), then spine.head rewritten."""
    master = job["master"].encode("ascii").strip()
    v = job.get("v", 2)
    key = hkdf_sha256(master, b"lineage") if v == 2 else master
    d = job["dir"]
    os.makedirs(d, exist_ok=True)
    spine = os.path.join(d, "spine.jsonl")
    prev, count = "", 0
    if os.path.exists(spine):
        with open(spine, "r", encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        count = len(lines)
        if lines:
            try:
                prev = json.loads(lines[-1])["entry_hash"]
            except ValueError:
                prev = ""
    content = job["content"].encode("utf-8") if "content" in job else open(job["content_path"], "rb").read()
    body = {
        "prev_hash": prev,
        "artifact_path": job["artifact_path"],
        "content_hash": "sha256:" + hashlib.sha256(content).hexdigest(),
        "actor": job.get("actor", "orchestrator"),
        "step_id": job["step_id"],
        "model": job.get("model", ""),
        "timestamp": job["timestamp"],
    }
    prefix = "bernstein:lineage:v2" if v == 2 else ""
    entry_hash = "sha256:" + hashlib.sha256((prefix + cj_raw(body)).encode("utf-8")).hexdigest()
    row = dict(body, v=v, entry_hash=entry_hash)
    row["hmac"] = hmac_mod.new(key, cj_raw(row).encode("utf-8"), hashlib.sha256).hexdigest()
    line = cj_raw(row) + "\n"
    with open(spine, "a", encoding="utf-8") as fh:
        fh.write(line)
    head_key = hkdf_sha256(master, b"lineage")
    head = {"count": count + 1, "head_hash": entry_hash}
    head["hmac"] = hmac_mod.new(head_key, cj_raw(head).encode("utf-8"), hashlib.sha256).hexdigest()
    with open(os.path.join(d, "spine.head.tmp"), "w", encoding="utf-8") as fh:
        fh.write(cj_raw(head))
    os.replace(os.path.join(d, "spine.head.tmp"), os.path.join(d, "spine.head"))
    return {"line": line, "entry_hash": entry_hash, "key": key.hex()}


def enc(x):
    """The tagged encoding of key_scheme v1."""
    if x is None:
        return b"\x00"
    if isinstance(x, bool):
        return b"\x01" + (b"\x01" if x else b"\x00")
    if isinstance(x, (int, float)):
        s = format(float(x), ".10f").encode("ascii")
        return b"\x02" + struct.pack(">I", len(s)) + s
    if isinstance(x, str):
        b = x.encode("utf-8")
        return b"\x03" + struct.pack(">I", len(b)) + b
    if isinstance(x, bytes):
        return b"\x04" + struct.pack(">I", len(x)) + x
    if isinstance(x, (list, tuple)):
        out = b"\x05" + struct.pack(">I", len(x))
        for e in x:
            e_enc = enc(e)
            out += struct.pack(">I", len(e_enc)) + e_enc
        return out
    r = repr(x).encode("utf-8")
    return b"\xff" + struct.pack(">I", len(r)) + r


def replay_key(caller_key):
    return "v1:" + hashlib.sha256(b"bernstein.replay.key.v1\x00" + enc((caller_key,))).hexdigest()


def write_gateway(job):
    """events.jsonl as ReplayGateway records it: ts, kind, key, response, [metadata], seq."""
    lines = []
    for seq, call in enumerate(job["calls"], start=1):
        row = {"ts": 1727000000.5 + seq, "kind": call["kind"], "key": replay_key(call["key"]) if job.get("v1", True) else call["key"], "response": call["response"]}
        if call.get("metadata"):
            row["metadata"] = call["metadata"]
        row["seq"] = seq
        lines.append(json.dumps(row, default=str) + "\n")
    os.makedirs(os.path.dirname(job["path"]), exist_ok=True)
    with open(job["path"], "w", encoding="utf-8") as fh:
        fh.write("".join(lines))
    return {"keys": [json.loads(l)["key"] for l in lines]}


def _digest(obj):
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8")).hexdigest()


def mutation(job):
    """A provider_state_mutation payload for a reported detail (§4.1)."""
    detail = job["detail"]
    before = _digest({k: v for k, v in detail.items() if k.startswith("pre_") or k.startswith("before_")})
    after = _digest(detail)
    kind = job.get("kind", "compact_boundary")
    step = job.get("step_index", 0)
    address = _digest({"kind": kind, "before_digest": before, "after_digest": after, "step_index": step})
    return {"event": "provider_state_mutation", "mutation_kind": kind, "before_digest": before, "after_digest": after,
            "step_index": step, "content_address": address, "flagged": bool(job.get("flagged", False)), "agent_id": job.get("agent_id", "agent-1")}


JOBS = {"journal": write_journal, "spine": spine_append, "gateway": write_gateway, "mutation": mutation,
        "replay_key": lambda j: replay_key(j["key"])}

if __name__ == "__main__":
    print(json.dumps([JOBS[j["job"]](j) for j in json.load(sys.stdin)]))
