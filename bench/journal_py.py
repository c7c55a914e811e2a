#!/usr/bin/env python3
"""The bench's `python` journal shape: a run journal written by Python itself.

Rows are spelled by Python's own json module exactly as spec run-journal
§1.2 says the orchestrator writes them (envelope ts, elapsed_s, index,
event, prev_hash, payload_hash, event_hash, then the payload in caller
order, `json.dumps(row, default=str)`), hashed with the pre-images of §1.4
and §1.5 (test/reference/verify_journal.py's payload_hash and event_hash),
so the bench also measures input no TypeScript writer spelled: NaN and
Infinity, ints past 2**64, lone surrogates, tuples and `default=str`
values, every float as repr spells it (metrics rows of random doubles of
every magnitude), non-ASCII dict keys (file paths), and coverage maps of
20 to 150 path keys in the order they were filled (keys that share long
heads, some escaped: their sort is the verify's work).

    python3 bench/journal_py.py --sdd DIR --run ID --bytes N [--seed N] [--newline crlf] [--spacing compact]

Writes DIR/runs/ID/journal.jsonl (replacing it) and metadata.json; prints
one JSON line: path, rows, bytes, head. Same seed and size, same bytes.
`--newline crlf` ends every line as Python's text mode does on Windows
(the bench's `windows` shape); `--spacing compact` writes each row as
`jq -c` rewrites a journal (no whitespace between tokens, non-ASCII text
as raw UTF-8 but DEL escaped: the bench's `compact` shape; a lone surrogate
stays escaped, where jq would write U+FFFD and the row would no longer
verify). The rows' values are the same.
"""
import json
import os
import pathlib
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "reference"))
from verify_journal import event_hash, payload_hash  # noqa: E402

FLOATS = (0.1, 1e-07, 1e22, 123456789.125, 0.1 + 0.2, 1e16, 1e-05, 5e-324, 1.7976931348623157e308, -0.0,
          2.5, 1e21, 0.0001, 1 / 3, 100.0, float("nan"), float("inf"), float("-inf"))
WORDS = ("Résumé", "naïve", "задача", "修复", "日志", "テスト", "🚀", "✓", "👩‍💻", '"quoted"', "back\\slash",
         "tab\there", "line\nbreak", "nul\x00", "del\x7f", "\u2028", "lone \udc80 surrogate", "plain", "ascii", "words")
MODELS = ("claude-sonnet-4-5", "gpt-5-codex", "gemini-2.5-pro")
# Paths as dict keys (Python escapes a non-ASCII key, which then sorts by its code points, not its bytes)
PATHS = ("src/core/mod.py", "docs/Résumé.md", "src/日志/handler.py", "tests/test_naïve.py", "assets/🚀.svg", "README.md", "src/z_last.py")
SIGNALS = ("tests", "lint", "typecheck", "review")
# Where a coverage map's paths lie: long shared heads, and non-ASCII ones (escaped in the key)
COVERAGE_DIRS = ("src/components/widgets/", "src/components/forms/", "src/日志/", "tests/unit/", "docs/Résumé/", "lib/", "a/")


def text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def events(rng, run_id):
    """An endless run: (event, payload dict in the caller's kwargs order)."""
    yield "run_started", {"run_id": run_id, "max_agents": 4, "budget_usd": 10.0, "git_sha": "%040x" % rng.getrandbits(160),
                          "git_branch": "main", "config_hash": "%064x" % rng.getrandbits(256)}
    tick, task, spent = 0, 0, 0.0
    while True:
        tick += 1
        yield "tick_start", {"tick": tick}
        agent = "agent-%08x" % tick
        task += 1
        tid = "T-%d" % task
        model = rng.choice(MODELS)
        yield "agent_spawned", {"agent_id": agent, "role": "backend", "model": model, "provider": "anthropic",
                                "task_ids": (tid,), "agent_source": "pool"}
        yield "task_claimed", {"task_id": tid, "agent_id": agent, "model": model}
        for _ in range(1 + rng.randrange(4)):
            yield "tool_call", {
                "agent_id": agent, "task_id": tid, "tool": rng.choice(("bash", "edit_file", "grep")),
                "args": {"path": pathlib.PurePosixPath("src", "core", "mod_%d.py" % rng.randrange(50)), "argv": ("-n", text(rng, 2))},
                "tokens": {"input": rng.randrange(40000), "output": rng.randrange(5000), "big": 2 ** 64 + rng.randrange(1000)},
                "duration_s": rng.choice(FLOATS) if rng.random() < 0.3 else round(rng.random() * 90, 3),
                "output": text(rng, 5 + rng.randrange(60)),
                "touched": {rng.choice(PATHS): rng.choice(("M", "A", "D")) for _ in range(rng.randrange(4))},
            }
        if rng.random() < 0.3:
            yield "coverage", {"agent_id": agent, "task_id": tid,
                               "by_file": {"%smodule_%04d.py" % (rng.choice(COVERAGE_DIRS), rng.randrange(10000)): rng.randrange(500)
                                           for _ in range(20 + rng.randrange(131))}}
        if rng.random() < 0.4:
            # a run's metrics: random doubles of every magnitude, as repr spells them (17 digits, scientific
            # notation below 1e-4 and from 1e16)
            yield "metrics", {"agent_id": agent, "task_id": tid, "loss": rng.random(),
                              "values": [rng.random() * 10.0 ** rng.randrange(-12, 20) for _ in range(8 + rng.randrange(32))]}
        spent += rng.random() * 0.35
        if rng.random() < 0.1:
            yield "task_verification_failed", {"task_id": tid, "failed_signals": [s for s in SIGNALS if rng.random() < 0.5] or ["tests"]}
            yield "task_retried", {"task_id": tid}
        yield "task_completed", {"task_id": tid, "agent_id": agent, "cost_usd": round(spent, 4),
                                 "summary": text(rng, 6), "ratios": [rng.choice(FLOATS), rng.random()]}
        yield "agent_reaped", {"agent_id": agent}


# What jq -c writes escaped although it writes other non-ASCII text raw: DEL; and lone surrogates (see --spacing).
RAW_ESCAPED = re.compile("[\x7f\ud800-\udfff]")


def main(argv):
    args = dict(zip(argv[::2], argv[1::2]))
    if len(argv) % 2 or not {"--sdd", "--run", "--bytes"} <= args.keys() or not args.keys() <= {"--sdd", "--run", "--bytes", "--seed", "--newline", "--spacing"}:
        sys.stderr.write(__doc__)
        return 2
    if args.get("--newline", "lf") not in ("lf", "crlf") or args.get("--spacing", "writer") not in ("writer", "compact"):
        sys.stderr.write(__doc__)
        return 2
    compact = args.get("--spacing") == "compact"
    separators, ensure_ascii = ((",", ":"), False) if compact else (None, True)
    newline = "\r\n" if args.get("--newline") == "crlf" else "\n"
    run_id, target, seed = args["--run"], float(args["--bytes"]), int(args.get("--seed", "11"))
    run_dir = os.path.join(args["--sdd"], "runs", run_id)
    os.makedirs(run_dir, exist_ok=True)
    path = os.path.join(run_dir, "journal.jsonl")
    rng = random.Random(seed)
    clock = random.Random(seed ^ 0x9E3779B9)
    start = t = 1727000000.1234567
    prev, rows, size, buf, buffered = "", 0, 0, [], 0
    with open(path, "w", encoding="utf-8", newline=newline) as fh:
        for event, data in events(rng, run_id):
            ph = payload_hash(event, data)
            eh = event_hash(prev, event, ph, rows)
            t += clock.random() * 0.05
            row = {"ts": t, "elapsed_s": round(t - start, 3), "index": rows, "event": event,
                   "prev_hash": prev, "payload_hash": ph, "event_hash": eh}
            row.update(data)
            line = json.dumps(row, default=str, separators=separators, ensure_ascii=ensure_ascii) + "\n"
            if compact:
                line = RAW_ESCAPED.sub(lambda m: "\\u%04x" % ord(m.group()), line)
            buf.append(line)
            buffered += len(line)
            size += len(line) + len(newline) - 1
            rows += 1
            prev = eh
            if buffered >= 1 << 20:
                fh.write("".join(buf))
                buf, buffered = [], 0
            if size >= target:
                break
        fh.write("".join(buf))
    meta = {"run_id": run_id, "started_at": start, "git_sha": "", "git_branch": "", "config_hash": "", "seed_path": None}
    with open(os.path.join(run_dir, "metadata.json"), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(meta, indent=2))
    sys.stdout.write(json.dumps({"path": path, "rows": rows, "bytes": os.path.getsize(path), "head": prev}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
