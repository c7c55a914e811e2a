#!/usr/bin/env python3
"""Reference verifier for Bernstein run journals (standard library only).

Implements the Python semantics of spec run-journal.md section 1.8 (tolerant
reader) and 1.9 (chain verification, coverage, seal identity) with Python's
own json and hashlib, so the TypeScript implementation can be checked
against the real thing. Written from the spec, not from the orchestrator.

    python3 test/reference/verify_journal.py FILE [FILE ...] [--seal SEAL.json]

One FILE prints one JSON verdict object; several print a JSON array (one
verdict per file, in order). Exit status: 0 when every verdict is ok, else 1.
"""
import hashlib
import json
import sys

NON_DETERMINISTIC = ("elapsed_s", "event_hash", "index", "payload_hash", "prev_hash", "ts")


def sha256_hex(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def payload_hash(event_type, payload):
    projected = {k: v for k, v in payload.items() if k not in NON_DETERMINISTIC}
    projected["event"] = event_type
    return sha256_hex(json.dumps(projected, sort_keys=True, separators=(",", ":"), default=str))


def event_hash(prev_hash, event_type, p_hash, index):
    pre = {"prev_hash": prev_hash, "event_type": event_type, "payload_hash": p_hash, "index": index}
    return sha256_hex(json.dumps(pre, sort_keys=True, separators=(",", ":")))


def load_events(path):
    """Rows (dicts) and the 0-based physical indices of discarded lines."""
    events, discarded = [], []
    try:
        fh = open(path, "r", encoding="utf-8", errors="surrogateescape", newline=None)
    except FileNotFoundError:
        return events, discarded
    with fh:
        for i, line in enumerate(fh):
            # surrogateescape maps each undecodable byte to U+DC80..U+DCFF
            if any("\udc80" <= ch <= "\udcff" for ch in line):
                discarded.append(i)
                continue
            text = line.strip()
            if not text:
                continue
            try:
                row = json.loads(text)
            except ValueError:
                discarded.append(i)
                continue
            if not isinstance(row, dict):
                discarded.append(i)
                continue
            events.append(row)
    return events, discarded


def verify_events(rows):
    prev = ""
    for i, row in enumerate(rows):
        event_type = str(row.get("event", ""))
        payload = {k: v for k, v in row.items() if k not in NON_DETERMINISTIC}
        expected = event_hash(prev, event_type, payload_hash(event_type, payload), i)
        stored_hash = str(row.get("event_hash", ""))
        stored_prev = str(row.get("prev_hash", ""))
        if stored_prev != prev:
            return False, prev, i, expected, stored_hash, "step %d: prev_hash break" % i
        if stored_hash != expected:
            return False, prev, i, expected, stored_hash, "step %d: event_hash mismatch" % i
        prev = stored_hash
    return True, prev, None, None, None, None


def verify_journal(path, seal=None):
    import os

    exists = os.path.exists(path)
    events, discarded = load_events(path)
    consistent, head, div, expected, actual, err = verify_events(events)
    errors = [err] if err else []
    coverage = "complete" if not discarded else "partial"
    if discarded:
        errors.append(
            "reader discarded unparsable or non-object physical line(s): %s" % ", ".join(str(i) for i in discarded)
        )
    identity = "unverifiable"
    if seal is not None:
        if not exists:
            identity = "mismatched"
            errors.append("journal file is missing but an external seal exists")
        elif consistent and coverage == "complete" and head == seal["head"] and len(events) == seal["event_count"]:
            identity = "verified"
        else:
            identity = "mismatched"
            if len(events) != seal["event_count"]:
                errors.append("journal holds %d events but the seal commits to %d" % (len(events), seal["event_count"]))
            if head != seal["head"]:
                errors.append(
                    "journal head %s does not match sealed head %s" % (head or "(empty)", seal["head"] or "(empty)")
                )
    return {
        "ok": consistent and coverage == "complete" and identity != "mismatched",
        "chain_consistent": consistent,
        "coverage": coverage,
        "identity": identity,
        "count": len(events),
        # The head of the verified prefix, on a divergence too (spec run-journal §1.9, issue 21).
        "head": head,
        "divergent_index": div,
        "expected_hash": expected,
        "actual_hash": actual,
        "discarded_line_indices": discarded,
        "errors": errors,
    }


def main(argv):
    files, seal = [], None
    it = iter(argv)
    for arg in it:
        if arg == "--seal":
            with open(next(it), "r", encoding="utf-8") as fh:
                seal = json.load(fh)
        else:
            files.append(arg)
    if not files:
        sys.stderr.write(__doc__)
        return 2
    verdicts = [verify_journal(f, seal) for f in files]
    out = verdicts[0] if len(files) == 1 else verdicts
    sys.stdout.write(json.dumps(out, indent=2) + "\n")
    return 0 if all(v["ok"] for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
