import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernsteinJson, binPath, VECTORS } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";

/**
 * Input you can trust (issue 15): standard input is read to its end, a
 * path that is not a regular file is refused before any read, the verdict
 * says how many bytes it read, and a row past the row limit is refused.
 * Every case goes through the compiled binary; every spawn has a 5 s guard
 * so a hang fails the test (killed: exit 137) instead of blocking it.
 */

const dirs = tempDirs("e2e-input-trust");
afterAll(() => dirs.cleanup());
const VDIR = join(VECTORS, "run-journal");
const GUARD = 5_000;

interface Piped {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** `cat FILE | bernstein ARGS --as-json` through a real pipe (sh), with the 5 s guard. */
async function piped(file: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Piped> {
  const proc = Bun.spawn(["sh", "-c", 'cat "$IN" | "$BIN" "$@" --as-json', "sh", ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", IN: file, BIN: binPath(), ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), GUARD);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr, json: JSON.parse(stdout) };
}

/** The verdict without the fields that name the input (its path, and the run its directory names). */
function verdict(j: Record<string, unknown>): Record<string, unknown> {
  const { path, run_id, ...rest } = j;
  void path, run_id;
  return rest;
}

const VECTOR_FILES = ["chain-4", "hazards", "foreign-writer", "hazards-crlf-line-endings", "hazards-torn-tail", "hazards-blank-lines", "hazards-payload-edit", "hazards-rows-swapped", "hazards-junk-line-middle"].map((n) =>
  join(VDIR, `${n}.jsonl`),
);

describe("journal verify reads standard input to its end", () => {
  test("a piped journal (via - and /dev/stdin) gives the file's verdict, count, head and divergent_index; bytes_read is the file size", async () => {
    const cwd = dirs.make();
    for (const f of VECTOR_FILES) {
      const file = await bernsteinJson(["journal", "verify", f], { cwd, timeoutMs: GUARD });
      expect(file.json.bytes_read).toBe(statSync(f).size);
      for (const word of ["-", "/dev/stdin"]) {
        for (const extra of [[], ["--links-only"]]) {
          const fromFile = extra.length ? await bernsteinJson(["journal", "verify", f, ...extra], { cwd, timeoutMs: GUARD }) : file;
          const p = await piped(f, ["journal", "verify", word, ...extra], cwd);
          // A torn tail is classified by the repair policy, which reads the file once more: a stream
          // cannot be read again, so its verdict stays coverage_partial (and names no repair).
          const streamOnly = (j: Record<string, unknown>) => {
            const { error, detail, torn_tail, fix, ...rest } = verdict(j);
            void detail, torn_tail, fix;
            return { ...rest, error: error === "torn_tail" ? "coverage_partial" : error };
          };
          const torn = fromFile.json.error === "torn_tail";
          if (torn) expect(p.json.error).toBe("coverage_partial");
          const pick = torn ? streamOnly : verdict;
          expect({ f, word, extra, code: p.code, v: pick(p.json) }).toEqual({ f, word, extra, code: fromFile.code, v: pick(fromFile.json) });
          expect(p.json.path).toBe(word);
        }
      }
    }
    // A tampered journal: exit 1 at the same step, and no divergence report written for stdin (it has no run directory).
    const tampered = join(VDIR, "hazards-payload-edit.jsonl");
    const p = await piped(tampered, ["journal", "verify", "-"], cwd);
    expect([p.code, p.json.ok, p.json.chain_consistent]).toEqual([1, false, false]);
    expect(p.json.divergent_index).toBe((await bernsteinJson(["journal", "verify", tampered], { cwd })).json.divergent_index);
    expect(p.json.divergent_index).not.toBeNull();
    expect(readdirSync(cwd)).toEqual([]);
  }, 60_000);

  test("a slow writer (10-byte pieces, a pause every 200 bytes) is read to its end: short reads are never taken for the end", async () => {
    const cwd = dirs.make();
    const f = join(VDIR, "foreign-writer.jsonl");
    const data = await Bun.file(f).bytes();
    const proc = Bun.spawn([binPath(), "journal", "verify", "-", "--as-json"], { cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
    for (let o = 0; o < data.length; o += 10) {
      proc.stdin.write(data.subarray(o, o + 10));
      await proc.stdin.flush();
      if (o % 200 === 0) await Bun.sleep(1);
    }
    proc.stdin.end();
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    clearTimeout(timer);
    const file = await bernsteinJson(["journal", "verify", f], { cwd });
    expect([code, verdict(JSON.parse(stdout))]).toEqual([file.code, verdict(file.json)]);
  }, 20_000);

  test("--threads is ignored for standard input, with a note on stderr; an empty stdin is input_empty, or with --allow-empty an empty chain of 0 bytes read", async () => {
    const cwd = dirs.make();
    const f = join(VDIR, "hazards.jsonl");
    const p = await piped(f, ["journal", "verify", "-", "--threads", "3"], cwd, { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "1" });
    expect(p.stderr).toContain("--threads ignored: standard input is verified as one stream");
    expect(verdict(p.json)).toEqual(verdict((await bernsteinJson(["journal", "verify", f], { cwd })).json));
    const empty = join(cwd, "empty");
    writeFileSync(empty, "");
    const refused = await piped(empty, ["journal", "verify", "-"], cwd);
    expect([refused.code, refused.json.ok, refused.json.error]).toEqual([3, false, "input_empty"]);
    const e = await piped(empty, ["journal", "verify", "-", "--allow-empty"], cwd);
    expect([e.code, e.json.ok, e.json.count, e.json.bytes_read]).toEqual([0, true, 0, 0]);
  }, 20_000);

  test("bytes_read is the file size for a multi-threaded verify too (the sum over threads and ranges)", async () => {
    const cwd = dirs.make();
    const f = join(cwd, "big.jsonl");
    // Many copies of one chain are no longer one chain, but every byte is still read once.
    const text = Bun.file(join(VDIR, "hazards.jsonl"));
    writeFileSync(f, Buffer.from(await text.arrayBuffer()).toString("latin1").repeat(40), "latin1");
    for (const threads of ["1", "2", "3"]) {
      const r = await bernsteinJson(["journal", "verify", f, "--threads", threads], { cwd, env: { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "4096" }, timeoutMs: GUARD });
      expect([threads, r.json.bytes_read]).toEqual([threads, statSync(f).size]);
    }
  }, 20_000);
});

/**
 * Each kind of non-regular file, made at `at` (inside a run directory a
 * symlink out of the state tree is refused by the run-id containment check
 * already, so the devices are made in place: mknod, which needs root).
 */
const canMknod = process.getuid?.() === 0;
const KINDS: [string, (at: string) => void, boolean][] = [
  ["fifo", (at) => Bun.spawnSync(["mkfifo", at]), true],
  ["directory", (at) => mkdirSync(at), true],
  ["character device like /dev/zero", (at) => Bun.spawnSync(["mknod", at, "c", "1", "5"]), canMknod],
  ["character device like /dev/null", (at) => Bun.spawnSync(["mknod", at, "c", "1", "3"]), canMknod],
];

/** Every command that reads a run journal, by run id. */
const RUN_COMMANDS: string[][] = [
  ["journal", "verify", "r1"],
  ["journal", "verify", "r1", "--links-only"],
  ["journal", "record", "r1", "ev"],
  ["journal", "record", "r1"],
  ["journal", "seal", "r1"],
  ["replay", "repair", "r1"],
  ["replay", "r1", "--verify"],
  ["replay", "r1", "--verify", "--links-only"],
  ["replay", "r1"],
  ["replay", "r1", "--from-step", "0"],
  ["replay", "diff", "r1", "r1"],
];

describe("a path that is not a regular file is refused before any read (exit 3 input_not_regular_file)", () => {
  test("as a file argument: /dev/zero, /dev/null, /proc/self/mem, /proc/self/status, a directory, a FIFO, a socket, a symlink to /dev/zero", async () => {
    const cwd = dirs.make();
    Bun.spawnSync(["mkfifo", join(cwd, "fifo.jsonl")]);
    const socket = Bun.listen({ unix: join(cwd, "sock.jsonl"), socket: { data() {} } });
    symlinkSync("/dev/zero", join(cwd, "zero.jsonl"));
    mkdirSync(join(cwd, "d"));
    const paths = ["/dev/zero", "/dev/null", "/proc/self/mem", "/proc/self/status", join(cwd, "d"), "d", join(cwd, "fifo.jsonl"), "fifo.jsonl", "sock.jsonl", "zero.jsonl"];
    const runs = paths.flatMap((p) => [["journal", "verify", p], ["journal", "verify", p, "--links-only"], ["journal", "verify", p, "--threads", "2"]]);
    const results = await Promise.all(runs.map((args) => bernsteinJson(args, { cwd, timeoutMs: GUARD }).then((r) => ({ args, code: r.code, error: r.json.error }))));
    socket.stop(true);
    for (const r of results) expect(r).toEqual({ args: r.args, code: 3, error: "input_not_regular_file" });
    // A seal file is read before the journal: a FIFO there must not hang either.
    const sealed = await bernsteinJson(["journal", "verify", join(VDIR, "chain-4.jsonl"), "--seal", "fifo.jsonl"], { cwd, timeoutMs: GUARD });
    expect([sealed.code, sealed.json.error]).toEqual([3, "input_not_regular_file"]);
  }, 30_000);

  for (const [kind, make, possible] of KINDS) {
    test.skipIf(!possible)(`a run whose journal.jsonl is a ${kind}: every command that reads it`, async () => {
      const cwd = dirs.make();
      mkdirSync(join(cwd, ".sdd", "runs", "r1"), { recursive: true });
      make(join(cwd, ".sdd", "runs", "r1", "journal.jsonl"));
      const results = [];
      // One after another: writers take the run's lock, concurrent ones would refuse each other (journal_locked).
      for (const args of RUN_COMMANDS) {
        const r = await bernsteinJson(args, { cwd, timeoutMs: GUARD, stdin: '{"event": "x"}\n' });
        results.push({ args, code: r.code, error: r.json.error, detail: r.json.detail });
      }
      for (const r of results) {
        expect({ args: r.args, code: r.code, error: r.error }).toEqual({ args: r.args, code: 3, error: "input_not_regular_file" });
        expect(r.detail).toContain("not a regular file");
      }
      // Nothing was written beside it.
      expect(readdirSync(join(cwd, ".sdd", "runs", "r1")).sort()).toEqual(["journal.jsonl"]);
    }, 30_000);
  }
});

describe("row limit: a longer row is refused up front, never parsed", () => {
  const MIB = 1024 * 1024;
  /** A 60 MB dense row `[1.5, 1.5, …]`: what used to cost gigabytes. */
  function denseRow(bytes: number): Buffer {
    const head = '{"ts": 1.0, "elapsed_s": 0.0, "index": 0, "event": "big", "prev_hash": "", "data": [';
    const tail = '], "event_hash": "' + "0".repeat(64) + '"}\n';
    const n = Math.floor((bytes - head.length - tail.length) / 5);
    return Buffer.from(head + "1.5, ".repeat(n - 1) + "1.5" + tail);
  }

  /** Peak RSS (KB) of the command via /usr/bin/time -v, or null when it is not installed. */
  async function peakKb(args: string[], cwd: string, stdinFile?: string): Promise<{ code: number; kb: number | null; stdout: string }> {
    const timeBin = existsSync("/usr/bin/time") ? ["/usr/bin/time", "-v"] : [];
    const proc = Bun.spawn([...timeBin, binPath(), ...args, "--as-json"], {
      cwd,
      env: { ...process.env, NO_COLOR: "1" },
      stdin: stdinFile ? Bun.file(stdinFile) : "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    clearTimeout(timer);
    const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
    return { code, kb: m ? Number(m[1]) : null, stdout };
  }

  test("a 60 MB dense row: journal verify (file and stdin) and journal record from stdin at --max-row-bytes 16M — row_too_large, exit 3, flat memory; at the default every verb reads it", async () => {
    const cwd = dirs.make();
    const row = denseRow(60 * MIB);
    const runDir = join(cwd, ".sdd", "runs", "big");
    mkdirSync(runDir, { recursive: true });
    writeFileSync(join(runDir, "journal.jsonl"), Buffer.concat([Buffer.from("\n"), row]));
    writeFileSync(join(cwd, "event.jsonl"), Buffer.concat([Buffer.from('{"event": "ok"}\n'), Buffer.from('{"event": "big", "data": ['), Buffer.from("1.5, ".repeat(6 * MIB)), Buffer.from("1.5]}\n")]));
    // a run journal's rows are read up to 256 MiB by default (issue 30); --max-row-bytes 16M is the old limit
    const cases: [string[], string | undefined, number][] = [
      [["journal", "verify", join(runDir, "journal.jsonl"), "--max-row-bytes", "16M"], undefined, 2],
      [["journal", "verify", "big", "--threads", "2", "--max-row-bytes", "16M"], undefined, 2],
      [["journal", "verify", "-", "--max-row-bytes", "16M"], join(runDir, "journal.jsonl"), 2],
      [["journal", "record", "rec", "--max-row-bytes", "16M"], join(cwd, "event.jsonl"), 2],
    ];
    for (const [args, stdin, line] of cases) {
      const r = await peakKb(args, cwd, stdin);
      const json = JSON.parse(r.stdout);
      expect({ args, code: r.code, error: json.error, line: json.line, limit: json.limit_bytes }).toEqual({ args, code: 3, error: "row_too_large", line, limit: 16 * MIB });
      expect(json.detail).toContain(`line ${line} `);
      // Refused while reading: far below the 64 MB + 3 x row bound (the row itself is never held whole).
      if (r.kb !== null) expect({ args, kb: r.kb < 200_000 }).toEqual({ args, kb: true });
    }
    // Under the default limit the row is read and judged as Python judges it: its hashes are wrong.
    for (const [args, stdin] of [[["journal", "verify", "big"], undefined], [["journal", "verify", "-"], join(runDir, "journal.jsonl")]] as const) {
      const r = await peakKb([...args], cwd, stdin);
      expect({ args, code: r.code, error: JSON.parse(r.stdout).error }).toEqual({ args, code: 1, error: "chain_broken" });
    }
    // The replay verbs read it too (the writer's limit: what it writes, every verb reads), within 64 MB + 3 x the row:
    // the display shows the row (it does not verify), --from-step projects it, --follow finds its hash wrong.
    let n = 0;
    for (let at = row.indexOf("1.5"); at >= 0; at = row.indexOf("1.5", at + 3)) n++;
    for (const [args, code, check] of [
      [["replay", "big"], 0, (d: Record<string, unknown>) => (d.events as { data: unknown[] }[])[0]!.data.length === n],
      [["replay", "big", "--from-step", "1"], 0, (d: Record<string, unknown>) => JSON.stringify(d.events) === '["big"]'],
      [["replay", "big", "--follow"], 1, (d: Record<string, unknown>) => d.error === "chain_broken" && d.divergent_line === 2],
    ] as const) {
      const r = await peakKb([...args], cwd);
      const lines = r.stdout.trimEnd().split("\n");
      const doc = JSON.parse((args as readonly string[]).includes("--follow") ? lines[lines.length - 1]! : r.stdout);
      expect({ args, code: r.code, read: check(doc) }).toEqual({ args, code, read: true });
      if (r.kb !== null) expect({ args, kb: r.kb < 64_000 + 3 * 61_440 }).toEqual({ args, kb: true });
    }
    // All or nothing: the refused batch recorded nothing.
    expect(existsSync(join(cwd, ".sdd", "runs", "rec", "journal.jsonl")) ? statSync(join(cwd, ".sdd", "runs", "rec", "journal.jsonl")).size : 0).toBe(0);
  }, 60_000);

  test("a row under the limit keeps its verdict: a 1 MB event records and verifies, from the file and from stdin", async () => {
    const cwd = dirs.make();
    writeFileSync(join(cwd, "ev.jsonl"), '{"event": "big", "data": [' + "1.5, ".repeat(200_000) + "1.5]}\n");
    const rec = await bernsteinJson(["journal", "record", "r"], { cwd, stdin: await Bun.file(join(cwd, "ev.jsonl")).bytes(), timeoutMs: 20_000 });
    expect([rec.code, rec.json.count]).toEqual([0, 1]);
    const file = await bernsteinJson(["journal", "verify", "r"], { cwd, timeoutMs: 20_000 });
    expect([file.code, file.json.ok, file.json.count, file.json.head]).toEqual([0, true, 1, rec.json.head]);
    const p = await piped(join(cwd, ".sdd", "runs", "r", "journal.jsonl"), ["journal", "verify", "-"], cwd);
    expect(verdict(p.json)).toEqual(verdict(file.json));
  }, 30_000);
});
