import { join } from "node:path";
import { binPath, ROOT } from "./cli.ts";

/**
 * Journals with one huge dense row, written (hashes included) by Python's
 * json and hashlib, and the peak RSS of a binary run on them.
 */

export type DenseKind = "numbers" | "objects";

const GEN = `
import json, hashlib, sys, os
out, kind, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
unit, per = (1.5, 5) if kind == "numbers" else ({"b": "xy", "a": 1.5, "c": [1, None, "\\u00e9"]}, 45)
data = [unit] * (target // per)
ND = {"ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"}
def sha(v): return hashlib.sha256(json.dumps(v, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
def ph(event, payload):
    p = {k: v for k, v in payload.items() if k not in ND}; p["event"] = event
    return sha(p)
def eh(prev, event, p, i): return sha({"prev_hash": prev, "event_type": event, "payload_hash": p, "index": i})
rows, prev = [], ""
for i, (event, payload) in enumerate([("run_started", {"run_id": "r"}), ("big", {"data": data})]):
    p = ph(event, payload); h = eh(prev, event, p, i)
    row = {"ts": 1727000000.5 + i, "elapsed_s": 0.0, "index": i, "event": event, "prev_hash": prev, "payload_hash": p, "event_hash": h}
    row.update(payload); rows.append(json.dumps(row)); prev = h
d = os.path.join(out, "sdd", "runs", "r"); os.makedirs(d)
open(os.path.join(d, "journal.jsonl"), "w").write("\\n".join(rows) + "\\n")
open(os.path.join(out, "events.jsonl"), "w").write(json.dumps({"event": "big", "data": data}) + "\\n")
recorded = eh("", "big", ph("big", {"data": data}), 0)
sprev, steps = "0" * 64, []
for seq, result in enumerate(["small", data, "after"]):
    f = {"input_hash": "a" * 64, "model": None, "prev_hash": sprev, "prompt": "p%d" % seq, "tool_call": {"name": "run", "args": {}}, "tool_result": result}
    h = sha(f); row = dict(f); row.update({"blob_refs": [], "schema_version": 2, "seq": seq, "step_hash": h, "ts": 1747000000.5 + seq})
    steps.append(json.dumps(row, sort_keys=True, separators=(",", ":"))); sprev = h
a = os.path.join(out, "sdd", "runtime", "journal", "ag"); os.makedirs(a)
open(os.path.join(a, "000000.jsonl"), "w").write("\\n".join(steps) + "\\n")
print(json.dumps({"head": prev, "recorded_head": recorded, "step_head": sprev, "items": len(data),
                  "row_bytes": max(len(rows[1]), max(len(s) for s in steps))}))
`;

export interface DenseFixture {
  dir: string;
  sdd: string;
  journal: string;
  events: string;
  head: string;
  recordedHead: string;
  stepHead: string;
  items: number;
  /** The longest row of any of the files, in bytes. */
  rowBytes: number;
}

/** Write the fixture of `kind` with a dense row of about `bytes` bytes into the (new) directory `dir`. */
export function writeDenseFixture(dir: string, kind: DenseKind, bytes: number): DenseFixture {
  const r = Bun.spawnSync(["python3", "-c", GEN, dir, kind, String(bytes)], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`python3 failed: ${r.stderr.toString()}`);
  const o = JSON.parse(r.stdout.toString());
  const sdd = join(dir, "sdd");
  return {
    dir,
    sdd,
    journal: join(sdd, "runs", "r", "journal.jsonl"),
    events: join(dir, "events.jsonl"),
    head: o.head,
    recordedHead: o.recorded_head,
    stepHead: o.step_head,
    items: o.items,
    rowBytes: o.row_bytes,
  };
}

// getrusage(RUSAGE_CHILDREN).ru_maxrss after the one child: what `/usr/bin/time -f %M` reports (KiB on Linux).
const RSS = `
import resource, subprocess, sys
stdin = open(sys.argv[1], "rb") if sys.argv[1] != "-" else subprocess.DEVNULL
r = subprocess.run(sys.argv[2:], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sys.stdout.buffer.write(r.stdout)
sys.stderr.buffer.write(r.stderr + b"\\nMAXRSS_KB=%d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r.returncode)
`;

export interface MeasuredRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Peak resident set size of the binary, in bytes. */
  peakRss: number;
}

/** Run the binary with `args` (stdin from the file `stdinFile`, if any) and measure its peak RSS. */
export async function measuredRun(args: string[], opts: { stdinFile?: string; cwd?: string } = {}): Promise<MeasuredRun> {
  const proc = Bun.spawn(["python3", "-c", RSS, opts.stdinFile ?? "-", binPath(), ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const m = /MAXRSS_KB=(\d+)\s*$/.exec(stderr);
  if (!m) throw new Error(`no RSS measured: ${stderr.slice(-500)}`);
  return { code, stdout, stderr: stderr.slice(0, m.index), peakRss: Number(m[1]) * 1024 };
}
