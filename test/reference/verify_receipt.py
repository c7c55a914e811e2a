#!/usr/bin/env python3
"""Independent reference for agent-journal receipts, standard library only
(tarfile, json, hashlib), written from the spec (receipts-traces-sessions.md
§1.3, §2, §5b). Used by the test suite as a cross-check and by the benchmark
as the baseline.

  verify_receipt.py RECEIPT [--head HEX]
      -> prints {"ok", "head_hash", "steps", "errors", "signed"}; exit 0/1.
         A file that is not a receipt prints {"ok": false, "error":
         "receipt_malformed", "detail"} and exits 3.
  verify_receipt.py export JOURNAL.jsonl AGENT_ID OUT.tar
      -> writes a receipt of an on-disk step journal (no signature).
"""
import hashlib
import io
import json
import sys
import tarfile
import time

GENESIS = "0" * 64
UNAUTHENTICATED = ["ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"]


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def step_hash(prev_hash, input_hash, model, prompt, tool_call, tool_result, effort=None):
    payload = {
        "prev_hash": prev_hash,
        "input_hash": input_hash,
        "model": model,
        "prompt": prompt,
        "tool_call": tool_call,
        "tool_result": tool_result,
    }
    if effort is not None:
        payload["effort"] = effort
    return hashlib.sha256(canonical(payload).encode("utf-8")).hexdigest()


class Malformed(Exception):
    pass


def verify(path, expected_head=None):
    try:
        tar = tarfile.open(path, "r")
    except (tarfile.TarError, OSError) as exc:
        raise Malformed("receipt is not a valid tar archive: %s" % exc)
    with tar:
        try:
            manifest_member = tar.getmember("manifest.json")
        except KeyError:
            raise Malformed("receipt missing manifest: %s" % path)
        try:
            manifest = json.loads(tar.extractfile(manifest_member).read().decode("utf-8"))
            m_head = str(manifest["head_hash"])
            m_steps = int(manifest["steps"])
        except (ValueError, KeyError, TypeError) as exc:
            raise Malformed("manifest unreadable: %s" % exc)
        names = tar.getnames()
        signed = "manifest.sig" in names
        journal = sorted(
            (m for m in tar.getmembers() if m.isfile() and m.name.startswith("journal/")),
            key=lambda m: m.name,
        )
        if not journal:
            raise Malformed("receipt missing journal payload: %s" % path)
        parts = []
        for m in journal:
            data = tar.extractfile(m).read()
            if data and not data.endswith(b"\n"):
                data += b"\n"
            parts.append(data)
    try:
        text = b"".join(parts).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed("journal is not UTF-8: %s" % exc)

    errors = []
    head = GENESIS
    steps = 0
    expected = 0
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append("journal line %d: invalid JSON (%s)" % (n, exc))
            continue
        if not isinstance(row, dict):
            errors.append("journal line %d: not a JSON object" % n)
            continue
        try:
            seq = int(row.get("seq", -1))
        except (TypeError, ValueError):
            seq = None
            errors.append("journal line %d: seq is not an integer (got %r)" % (n, row.get("seq")))
        if seq is not None and seq != expected:
            errors.append("journal line %d: seq mismatch (expected %d, got %s)" % (n, expected, row.get("seq")))
        prev = str(row.get("prev_hash", ""))
        if prev != head:
            errors.append("journal line %d: prev_hash mismatch (expected %s..., got %s...)" % (n, head[:16], prev[:16]))
        recomputed = step_hash(
            prev,
            str(row.get("input_hash", "")),
            row.get("model"),
            row.get("prompt"),
            row.get("tool_call"),
            row.get("tool_result"),
            row.get("effort"),
        )
        stored = str(row.get("step_hash", ""))
        if recomputed != stored:
            errors.append("journal line %d: step_hash mismatch (expected %s..., got %s...)" % (n, recomputed[:16], stored[:16]))
        head = stored
        steps += 1
        expected += 1
    if m_head != head:
        errors.append("manifest head mismatch: %s... vs walked %s..." % (m_head[:16], head[:16]))
    if m_steps != steps:
        errors.append("manifest step count mismatch: %d vs walked %d" % (m_steps, steps))
    if expected_head is not None and expected_head != head:
        errors.append("expected head %s... but walked %s..." % (expected_head[:16], head[:16]))
    return {"ok": not errors, "head_hash": head, "steps": steps, "errors": errors, "signed": signed}


def export(journal_path, agent_id, out):
    rows = []
    with open(journal_path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rows.append(json.loads(line))
    head = GENESIS
    digests = []
    for r in rows:
        head = r["step_hash"]
        for d in r.get("blob_refs") or []:
            if d not in digests:
                digests.append(d)
    manifest = {
        "agent_id": agent_id,
        "head_hash": head,
        "steps": len(rows),
        "bernstein_version": "reference",
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "blob_digests": digests,
        "format_version": 1,
        "unauthenticated_fields": UNAUTHENTICATED,
    }
    payload = "".join(canonical(r) + "\n" for r in rows).encode("utf-8")
    with tarfile.open(out, "w") as tar:
        for name, data in (("manifest.json", canonical(manifest).encode("utf-8")), ("journal/000000.jsonl", payload)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o600
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return {"output": out, "head_hash": head, "steps": len(rows)}


def main(argv):
    if len(argv) >= 1 and argv[0] == "export":
        if len(argv) != 4:
            print("usage: verify_receipt.py export JOURNAL.jsonl AGENT_ID OUT.tar", file=sys.stderr)
            return 2
        print(json.dumps(export(argv[1], argv[2], argv[3])))
        return 0
    if not argv:
        print("usage: verify_receipt.py RECEIPT [--head HEX]", file=sys.stderr)
        return 2
    head = None
    if len(argv) == 3 and argv[1] == "--head":
        head = argv[2]
    try:
        verdict = verify(argv[0], head)
    except Malformed as exc:
        print(json.dumps({"ok": False, "error": "receipt_malformed", "detail": str(exc)}))
        return 3
    print(json.dumps(verdict))
    return 0 if verdict["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
