import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BernsteinError } from "../../src/errors/index.ts";
import { EventJournal } from "../../src/journal/writer.ts";
import { verifyJournalSync } from "../../src/journal/verify.ts";
import { StepJournal } from "../../src/steps/writer.ts";
import { verifyStepJournal } from "../../src/steps/verify.ts";
import { looksLikeStackTrace } from "./binary.ts";
import { Rng } from "./rng.ts";

/**
 * Writer harnesses beyond the single SIGKILL (tools/fuzz/crash.ts calls
 * them as trial kinds):
 *  - N concurrent writers on one run journal (`journal record` processes)
 *    or one step journal (driver processes), started together: every
 *    writer either records everything or is refused (`journal_locked` /
 *    `agent_journal_locked`, exit 2), and the journal is ONE chain holding
 *    exactly the winners' events (0 forks);
 *  - power loss: `journal record` runs under strace, which logs its
 *    write/fsync syscalls on journal.jsonl; from that log the harness knows
 *    the durable prefix (bytes written before the last fsync). A writer
 *    that exited 0 must have fsynced everything it wrote; then the file is
 *    cut at a random offset at or after the durable prefix (what a power
 *    loss may drop) and must repair, verify and resume with every
 *    acknowledged event present;
 *  - repair of each hostile tail shape, run and step journals: the file is
 *    untouched unless the shape is one unterminated final line;
 *  - export/publish to each forbidden target: refused with exit 2 and the
 *    target unchanged.
 */

export class WriterFailure extends Error {}
function fail(msg: string): never {
  throw new WriterFailure(msg);
}

const EVENT = (i: number, w: number) => JSON.stringify({ event: "tick", w, i, note: "x".repeat((i * 37) % 200) }) + "\n";

async function runBin(bin: string, args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string; json: Record<string, unknown> | null }> {
  const p = Bun.spawn([bin, ...args], { stdin: stdin === undefined ? "ignore" : new Blob([stdin]), stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (looksLikeStackTrace(stderr)) fail(`bernstein ${args.join(" ")} printed a stack trace: ${stderr.slice(0, 200)}`);
  let json: Record<string, unknown> | null = null;
  try {
    json = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  return { code, stdout, stderr, json };
}

export interface ConcurrencyStats {
  writers: number;
  winners: number;
  refused: number;
}

/** N `journal record` processes on one run, started together. */
export async function concurrentRunWriters(bin: string, work: string, rng: Rng, n: number): Promise<ConcurrencyStats> {
  const sdd = join(work, "sdd");
  let pre = 0;
  if (rng.chance(0.5)) {
    pre = rng.range(1, 50);
    const r = await runBin(bin, ["journal", "record", "race", "--sdd-dir", sdd, "--as-json"], Array.from({ length: pre }, (_, i) => EVENT(i, -1)).join(""));
    if (r.code !== 0) fail(`setup record exited ${r.code}`);
  }
  const events = rng.range(50, 400);
  const inputs = Array.from({ length: n }, (_, w) => Array.from({ length: events }, (_, i) => EVENT(i, w)).join(""));
  const results = await Promise.all(inputs.map((input) => runBin(bin, ["journal", "record", "race", "--sdd-dir", sdd, "--as-json"], input)));
  let recorded = 0;
  let winners = 0;
  for (const r of results) {
    if (r.code === 0) {
      winners++;
      recorded += Number(r.json?.recorded);
    } else if (r.code !== 2 || r.json?.error !== "journal_locked") {
      fail(`a writer exited ${r.code} (${String(r.json?.error)}): ${(r.json?.detail as string) ?? r.stderr.slice(0, 200)}`);
    }
  }
  if (winners === 0) fail("every writer was refused: nobody held the lock");
  const v = verifyJournalSync(join(sdd, "runs", "race", "journal.jsonl"));
  if (!v.ok) fail(`the journal forked or broke: ${v.errors.slice(0, 2).join("; ")}`);
  if (v.count !== pre + recorded) fail(`journal holds ${v.count} events, the winners recorded ${pre} + ${recorded}`);
  return { writers: n, winners, refused: n - winners };
}

/** N step-journal writer processes on one agent, started together. */
export async function concurrentStepWriters(work: string, rng: Rng, n: number): Promise<ConcurrencyStats> {
  const sdd = join(work, "sdd");
  const steps = rng.range(20, 120);
  const driver = join(import.meta.dir, "drivers", "step-writer.ts");
  const procs = Array.from({ length: n }, (_, w) =>
    Bun.spawn([process.execPath, driver, sdd, "race-agent", String(rng.u32() + w), String(steps)], { stdout: "pipe", stderr: "pipe" }),
  );
  let winners = 0;
  for (const p of procs) {
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code === 0 && out.includes("done")) winners++;
    else if (!(code === 2 && out.trim() === "agent_journal_locked")) fail(`a step writer exited ${code}: ${(out + err).slice(0, 200)}`);
  }
  if (winners === 0) fail("every step writer was refused");
  const v = await verifyStepJournal(join(sdd, "runtime", "journal", "race-agent", "000000.jsonl"));
  if (!v.ok || v.steps !== winners * steps) fail(`step journal: ok=${v.ok} steps ${v.steps}, expected ${winners} x ${steps}: ${v.errors[0] ?? ""}`);
  return { writers: n, winners, refused: n - winners };
}

let straceMode: string[] | null | undefined;

/** strace's command prefix (with seccomp-bpf filtering when it has it), or null when it cannot trace here. */
export function straceCommand(): string[] | null {
  if (straceMode !== undefined) return straceMode;
  straceMode = null;
  if (!Bun.which("strace")) return null;
  for (const extra of [["--seccomp-bpf"], []]) {
    const cmd = ["strace", "-f", "-qq", "-y", "-s", "0", ...extra, "-e", "trace=write,pwrite64,writev,fsync,fdatasync,ftruncate"];
    const r = Bun.spawnSync([...cmd, "-o", "/dev/null", "true"], { stdout: "ignore", stderr: "ignore" });
    if (r.exitCode === 0) {
      straceMode = cmd;
      break;
    }
  }
  return straceMode;
}

interface SyscallLog {
  written: number;
  /** Bytes written before the last fsync/fdatasync of the file. */
  durable: number;
  /** A truncate, or a write whose result strace never saw (killed mid-call). */
  unsure: boolean;
}

function parseTrace(text: string, file: string): SyscallLog {
  const log: SyscallLog = { written: 0, durable: 0, unsure: false };
  const call = /^(\d+)\s+(write|pwrite64|writev|fsync|fdatasync|ftruncate)\(\d+<([^>]*)>/;
  const result = /\)\s+=\s+(-?\d+)/;
  const resumed = /^(\d+)\s+<\.\.\. (\w+) resumed>/;
  // A call split across threads: "<unfinished ...>" now, "<... write resumed>) = N" later.
  const pending = new Map<string, string>();
  const apply = (op: string, ret: number): void => {
    if (ret < 0) return;
    if (op === "fsync" || op === "fdatasync") log.durable = log.written;
    else if (op === "ftruncate") log.unsure = true;
    else log.written += ret;
  };
  for (const line of text.split("\n")) {
    const c = call.exec(line);
    if (c) {
      if (c[3] !== file) continue;
      if (line.includes("<unfinished ...>")) {
        pending.set(c[1]!, c[2]!);
        continue;
      }
      const r = result.exec(line);
      if (r) apply(c[2]!, Number(r[1]));
      else log.unsure = true;
      continue;
    }
    const rs = resumed.exec(line);
    if (rs && pending.has(rs[1]!)) {
      const op = pending.get(rs[1]!)!;
      pending.delete(rs[1]!);
      const r = result.exec(line);
      if (r) apply(op, Number(r[1]));
      else log.unsure = true;
    }
  }
  if (pending.size > 0) log.unsure = true;
  return log;
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export interface PowerLossResult {
  finished: boolean;
  delayMs: number;
  /** Bytes the simulated power loss dropped. */
  lost: number;
  acknowledged: number;
}

/**
 * One power-loss trial; `check` is the crash harness's run-journal
 * invariant (repair if torn, verify, resume). Returns null without strace.
 */
export async function powerLossTrial(bin: string, work: string, rng: Rng, check: (sdd: string, runId: string) => Promise<unknown>): Promise<PowerLossResult | null> {
  const strace = straceCommand();
  if (!strace) return null;
  const sdd = join(work, "sdd");
  const path = join(sdd, "runs", "pl", "journal.jsonl");
  let acknowledged = 0;
  if (rng.chance(0.5)) {
    const r = await runBin(bin, ["journal", "record", "pl", "--sdd-dir", sdd, "--as-json"], Array.from({ length: rng.range(1, 300) }, (_, i) => EVENT(i, 0)).join(""));
    if (r.code !== 0) fail(`setup record exited ${r.code}`);
    acknowledged = Number(r.json?.count);
  }
  const initial = existsSync(path) ? statSync(path).size : 0;
  const trace = join(work, "strace.log");
  const input = Array.from({ length: rng.range(5000, 40000) }, (_, i) => EVENT(i, 1)).join("");
  const p = Bun.spawn([...strace, "-o", trace, bin, "journal", "record", "pl", "--sdd-dir", sdd, "--as-json"], { stdin: new Blob([input]), stdout: "pipe", stderr: "pipe" });
  const out = new Response(p.stdout).text();
  const delay = rng.range(30, 600);
  const done = await Promise.race([p.exited.then(() => true), Bun.sleep(delay).then(() => false)]);
  if (!done) for (const c of children(p.pid)) process.kill(c, "SIGKILL");
  const code = await p.exited;
  const finished = done || code === 0;
  if (finished) {
    if (code !== 0) fail(`traced journal record exited ${code}`);
    acknowledged = Number(JSON.parse(await out).count);
  }
  if (!existsSync(path)) {
    if (acknowledged > 0) fail("the journal vanished");
    return { finished, delayMs: delay, lost: 0, acknowledged };
  }
  const log = parseTrace(readFileSync(trace, "utf8"), path);
  const size = statSync(path).size;
  if (!log.unsure && initial + log.written !== size) fail(`strace saw ${log.written} bytes written after ${initial}, the file holds ${size}`);
  if (finished && (log.unsure || log.durable !== log.written)) fail(`journal record acknowledged ${acknowledged} events with ${log.written - log.durable} bytes not fsynced`);
  // The power loss: everything after the durable prefix may go, from any byte on.
  const floor = initial + log.durable;
  const cutAt = floor + rng.int(size - floor + 1);
  if (cutAt < size) truncateSync(path, cutAt);
  await check(sdd, "pl");
  const v = verifyJournalSync(path);
  if (v.count < acknowledged + 1) fail(`after power loss and resume the journal holds ${v.count} events; ${acknowledged} were acknowledged before (+1 resumed)`);
  return { finished, delayMs: delay, lost: size - cutAt, acknowledged };
}

interface TailShape {
  name: string;
  /** The journal bytes: good prefix + tail, or a whole re-encoding. */
  make(good: Buffer): Buffer;
  repairable: boolean;
}

const TAIL_SHAPES: TailShape[] = [
  { name: "torn row", make: (g) => Buffer.concat([g, g.subarray(0, 37)]), repairable: true },
  { name: "unterminated NUL run", make: (g) => Buffer.concat([g, Buffer.alloc(300)]), repairable: true },
  { name: "UTF-16 re-encoding", make: (g) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(g.toString("utf8"), "utf16le")]), repairable: false },
  { name: "complete garbage lines", make: (g) => Buffer.concat([g, Buffer.from("junk line\n".repeat(500))]), repairable: false },
  { name: "one terminated garbage line", make: (g) => Buffer.concat([g, Buffer.from('{"ts": 1\n')]), repairable: false },
  { name: "CRLF garbage line", make: (g) => Buffer.concat([g, Buffer.from("junk\r\n")]), repairable: false },
  { name: "torn line then blank line", make: (g) => Buffer.concat([g, Buffer.from("{torn\n\n")]), repairable: false },
  { name: "two unterminated-looking lines", make: (g) => Buffer.concat([g, Buffer.from("{a\n{b")]), repairable: false },
  { name: "lone-CR split fragment", make: (g) => Buffer.concat([g, Buffer.from("{a\r{b")]), repairable: false },
  { name: "garbage in the middle", make: (g) => { const i = g.indexOf(10) + 1; return Buffer.concat([g.subarray(0, i), Buffer.from("garbage\n"), g.subarray(i)]); }, repairable: false },
];

function fragmentsBeside(path: string): string[] {
  const dir = join(path, "..");
  const base = path.slice(dir.length + 1);
  return readdirSync(dir).filter((n) => n.startsWith(`${base}.torn-`)).map((n) => join(dir, n));
}

/** Every hostile tail shape against `replay repair` (run journals) and the step writer's recovery. */
export async function hostileTailChecks(bin: string, work: string, rng: Rng): Promise<number> {
  let checked = 0;
  const goodRun = (() => {
    const sdd = join(work, "good");
    const j = EventJournal.create("g", { sddDir: sdd });
    for (let i = 0; i < rng.range(3, 30); i++) j.record("tick", { i });
    j.close();
    return readFileSync(join(sdd, "runs", "g", "journal.jsonl"));
  })();
  const goodStep = (() => {
    const j = StepJournal.open(join(work, "good"), "g");
    for (let i = 0; i < rng.range(3, 30); i++) j.append({ input_hash: `h${i}`, prompt: "p" });
    j.close();
    return readFileSync(join(work, "good", "runtime", "journal", "g", "000000.jsonl"));
  })();
  for (const [k, shape] of TAIL_SHAPES.entries()) {
    for (const linked of shape.repairable ? [false, true] : [false]) {
      const sdd = join(work, `t${k}${linked ? "l" : ""}`);
      const runId = "r";
      const path = join(sdd, "runs", runId, "journal.jsonl");
      mkdirSync(join(sdd, "runs", runId), { recursive: true });
      const bytes = shape.make(goodRun);
      writeFileSync(path, bytes);
      const outside = join(work, `outside-${k}`);
      if (linked) linkSync(path, outside);
      const r = await runBin(bin, ["replay", "repair", runId, "--sdd-dir", sdd, "--as-json"]);
      const after = readFileSync(path);
      const shouldRepair = shape.repairable && !linked;
      const what = `${shape.name}${linked ? " (hard-linked)" : ""}`;
      if (shouldRepair) {
        if (r.code !== 0 || r.json?.repaired !== true) fail(`repair of "${what}" exited ${r.code}: ${String(r.json?.detail)}`);
        if (!after.equals(goodRun)) fail(`repair of "${what}" did not leave exactly the good prefix`);
        const saved = fragmentsBeside(path);
        if (saved.length !== 1 || !readFileSync(saved[0]!).equals(bytes.subarray(goodRun.length))) fail(`repair of "${what}" did not save the fragment beside the journal`);
      } else {
        if (r.code !== 2 || r.json?.error !== "repair_refused") fail(`repair of "${what}" exited ${r.code} (${String(r.json?.error)}), expected repair_refused`);
        if (!after.equals(bytes)) fail(`refused repair of "${what}" changed the file`);
        if (linked && !readFileSync(outside).equals(bytes)) fail(`refused repair of "${what}" changed the other link`);
      }
      checked++;
    }
    // The same shape on a step journal: the writer's recovery applies the same policy.
    const stepSdd = join(work, `s${k}`);
    const bucket = join(stepSdd, "runtime", "journal", "a", "000000.jsonl");
    mkdirSync(join(bucket, ".."), { recursive: true });
    const sbytes = shape.make(goodStep);
    writeFileSync(bucket, sbytes);
    let opened = false;
    try {
      StepJournal.open(stepSdd, "a").close();
      opened = true;
    } catch (err) {
      if (!(err instanceof BernsteinError)) throw err;
      if (!["repair_refused", "agent_journal_corrupt"].includes(err.code)) fail(`step journal "${shape.name}": unexpected ${err.code}: ${err.message}`);
    }
    const safter = readFileSync(bucket);
    if (shape.repairable) {
      if (!opened || !safter.equals(goodStep)) fail(`step journal "${shape.name}" was not recovered to the good prefix`);
      if (fragmentsBeside(bucket).length !== 1) fail(`step journal "${shape.name}": fragment not saved`);
    } else if (opened || !safter.equals(sbytes)) fail(`step journal "${shape.name}" was ${opened ? "opened" : "changed"} although not a torn tail`);
    checked++;
  }
  return checked;
}

/** Export/publish to each forbidden target: exit 2, the named code, the target unchanged. */
export async function forbiddenExportChecks(bin: string, work: string): Promise<number> {
  const sdd = join(work, "sdd");
  const j = StepJournal.open(sdd, "ag");
  for (let i = 0; i < 5; i++) j.append({ input_hash: `h${i}`, prompt: "p", tool_result: { out: i } });
  j.close();
  const rj = EventJournal.create("r1", { sddDir: sdd });
  rj.record("tick", {});
  rj.close();
  const bucket = join(sdd, "runtime", "journal", "ag", "000000.jsonl");
  const existing = join(work, "existing.tar");
  writeFileSync(existing, "unrelated bytes\n");
  const hard = join(work, "hard.jsonl");
  linkSync(bucket, hard);
  const soft = join(work, "soft.tar");
  symlinkSync(join(sdd, "runs", "r1", "journal.jsonl"), soft);
  const fifo = join(work, "fifo");
  Bun.spawnSync(["mkfifo", fifo]);
  const dir = join(work, "a-dir");
  mkdirSync(dir);
  const targets: [string, string, string[]][] = [
    [join(sdd, "runs", "r1", "journal.jsonl"), "output_forbidden", []],
    [join(sdd, "runs", "new.tar"), "output_forbidden", []],
    [bucket, "output_forbidden", []],
    [join(sdd, "runtime", "journal", "ag", "x.tar"), "output_forbidden", []],
    [hard, "output_forbidden", ["--force"]],
    [soft, "output_forbidden", ["--force"]],
    ["/dev/null", "output_forbidden", ["--force"]],
    [dir, "output_forbidden", ["--force"]],
    [existing, "output_exists", []],
    ["", "invalid_output_path", []],
    [".", "invalid_output_path", []],
    [`${work}/`, "invalid_output_path", []],
  ];
  if (existsSync(fifo)) targets.push([fifo, "output_forbidden", ["--force"]]);
  const snapshot = (p: string): string => {
    try {
      const l = lstatSync(p);
      return `${l.mode}:${l.ino}:${l.isFile() ? readFileSync(p).toString("base64") : ""}`;
    } catch {
      return "absent";
    }
  };
  let checked = 0;
  for (const [target, code, extra] of targets) {
    for (const verb of ["export", "publish"]) {
      const before = snapshot(target);
      const args = ["replay", verb, "ag", target, ...extra, "--sdd-dir", sdd, "--as-json", ...(verb === "publish" ? ["--yes-i-want-to-publish"] : [])];
      const r = await runBin(bin, args);
      if (r.code !== 2 || r.json?.error !== code) fail(`${verb} to ${JSON.stringify(target)} exited ${r.code} (${String(r.json?.error)}), expected ${code}`);
      if (snapshot(target) !== before) fail(`${verb} to ${JSON.stringify(target)} changed it`);
      checked++;
    }
  }
  return checked;
}
