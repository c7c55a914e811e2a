/**
 * Issue 29: a remote read that a server drags out. A plain-http server in
 * this test (127.0.0.1, Bun.listen) answers the size probe at once and then
 * trickles each ranged body: the verify must end with s3_timeout (exit 3)
 * when the minimum rate or the whole-object deadline is missed, and SIGTERM
 * or SIGINT must end it within 2 s while it is blocked on the socket (with a
 * margin for a loaded 2-core machine). Before the fix such a verify ignored
 * both signals and ran for as long as the server dripped.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Socket, TCPSocketListener } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeBigJournal } from "../../helpers/big-journal.ts";
import { bernsteinJson, binPath } from "../../helpers/cli.ts";

/** How each path's ranged bodies are paced: `bytes` every `everyMs`. */
const PACE: Record<string, { bytes: number; everyMs: number }> = {
  // 1 byte/s: the red-team server.
  "/slow/journal.jsonl": { bytes: 1, everyMs: 1000 },
  // The same bytes as a "receipt": `replay verify` copies a remote receipt to a private file first.
  "/slow/receipt.tar": { bytes: 1, everyMs: 1000 },
  // 500 B/s: above a 100 B/s minimum, but the 18 KB object takes ~37 s.
  "/steady/journal.jsonl": { bytes: 50, everyMs: 100 },
};

type Conn = { buf: string; timer: ReturnType<typeof setInterval> | null };

let dir: string;
let object: Buffer;
let server: TCPSocketListener<Conn>;
let base: string;
/** Ranged body GETs (not the one-byte size probe) the server has started answering. */
let bodiesStarted = 0;
const sockets = new Set<Socket<Conn>>();

/** Requests for /silent/…, which are never answered (not even a status line). */
let silentRequests = 0;

function answer(s: Socket<Conn>, req: string): void {
  const path = /^GET (\S+)/.exec(req)?.[1] ?? "";
  if (path.startsWith("/silent/")) {
    silentRequests++;
    return;
  }
  const pace = PACE[path];
  const m = /\r\nRange: bytes=(\d+)-(\d+)/i.exec(req);
  if (!pace || !m) {
    s.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    return;
  }
  const a = Number(m[1]);
  const b = Math.min(Number(m[2]), object.length - 1);
  s.write(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${b - a + 1}\r\nContent-Range: bytes ${a}-${b}/${object.length}\r\n\r\n`);
  if (b === a) {
    // The size probe: answered at once.
    s.write(object.subarray(a, b + 1));
    return;
  }
  bodiesStarted++;
  let at = a;
  s.data.timer = setInterval(() => {
    if (at > b) return;
    s.write(object.subarray(at, Math.min(b + 1, at + pace.bytes)));
    at += pace.bytes;
  }, pace.everyMs);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "slow-remote-"));
  const file = join(dir, "journal.jsonl");
  writeBigJournal(file, 50);
  object = readFileSync(file);
  server = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { buf: "", timer: null };
        sockets.add(s);
      },
      data(s, d) {
        s.data.buf += d.toString("latin1");
        for (let end = s.data.buf.indexOf("\r\n\r\n"); end >= 0; end = s.data.buf.indexOf("\r\n\r\n")) {
          const req = s.data.buf.slice(0, end);
          s.data.buf = s.data.buf.slice(end + 4);
          answer(s, req);
        }
      },
      close(s) {
        if (s.data?.timer) clearInterval(s.data.timer);
        sockets.delete(s);
      },
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => {
  for (const s of sockets) {
    if (s.data?.timer) clearInterval(s.data.timer);
    s.terminate();
  }
  server?.stop(true);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("remote reads have a deadline and a minimum rate (s3_timeout, exit 3)", () => {
  test("1 byte/s under --s3-min-rate 1KiB/2s: s3_timeout naming the rate, well before the object could arrive", async () => {
    const t0 = performance.now();
    const r = await bernsteinJson(["journal", "verify", `${base}/slow/journal.jsonl`, "--s3-min-rate", "1KiB/2s"], { timeoutMs: 60_000 });
    const seconds = (performance.now() - t0) / 1000;
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "s3_timeout", timeout: "min_rate", min_rate_bytes_per_s: 1024, window_s: 2, object_bytes: object.length });
    expect(r.json.rate_bytes_per_s).toBeLessThan(10);
    expect(r.json.detail).toContain("under the minimum rate of 1024 B/s over 2 s (--s3-min-rate)");
    expect(r.stderr).not.toContain("    at ");
    // The window is 2 s of waiting; the object would take 5 hours at this pace.
    expect(seconds).toBeLessThan(30);
  }, 60_000);

  test("the same limit from BERNSTEIN_S3_MIN_RATE", async () => {
    const r = await bernsteinJson(["journal", "verify", `${base}/slow/journal.jsonl`], { env: { BERNSTEIN_S3_MIN_RATE: "512/2s" }, timeoutMs: 60_000 });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ error: "s3_timeout", timeout: "min_rate", min_rate_bytes_per_s: 512, window_s: 2 });
  }, 60_000);

  test("500 B/s is above a 100 B/s minimum, but misses --s3-deadline 3: s3_timeout naming the deadline", async () => {
    const t0 = performance.now();
    const r = await bernsteinJson(["journal", "verify", `${base}/steady/journal.jsonl`, "--s3-min-rate", "100/1s", "--s3-deadline", "3"], { timeoutMs: 60_000 });
    const seconds = (performance.now() - t0) / 1000;
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "s3_timeout", timeout: "deadline", deadline_s: 3, object_bytes: object.length });
    expect(r.json.bytes_received).toBeGreaterThan(0);
    expect(r.json.bytes_received).toBeLessThan(object.length);
    expect(r.json.detail).toContain("missed the whole-object deadline of 3.0 s (--s3-deadline)");
    expect(seconds).toBeLessThan(30);
  }, 60_000);

  test("replay verify of a trickling receipt: s3_timeout while it is being copied, not exit 0 nor a hang", async () => {
    const r = await bernsteinJson(["replay", "verify", `${base}/slow/receipt.tar`, "--s3-min-rate", "1KiB/2s"], { timeoutMs: 60_000 });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "s3_timeout", timeout: "min_rate", url: `${base}/slow/receipt.tar` });
  }, 60_000);

  test("a missing object is still s3_not_found (the verify stats it inside its signal guard now)", async () => {
    const r = await bernsteinJson(["journal", "verify", `${base}/nothing/journal.jsonl`]);
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "s3_not_found" });
  });

  test("malformed limits are usage errors (exit 2) before any request", async () => {
    const before = bodiesStarted;
    for (const [args, env] of [
      [["--s3-deadline", "soon"], {}],
      [["--s3-min-rate", "fast"], {}],
      [["--s3-min-rate", "1KiB/0s"], {}],
      [[], { BERNSTEIN_S3_DEADLINE: "-1" }],
    ] as const) {
      const r = await bernsteinJson(["journal", "verify", `${base}/slow/journal.jsonl`, ...args], { env });
      expect(r.code).toBe(2);
      expect(r.json).toMatchObject({ ok: false, error: "usage" });
    }
    expect(bodiesStarted).toBe(before);
  });
});

describe.skipIf(process.platform !== "linux")("SIGINT/SIGTERM end a verify blocked on a trickling server (default limits)", () => {
  const EXIT = { SIGTERM: 143, SIGINT: 130 } as const;
  const journal = () => `${base}/slow/journal.jsonl`;
  const cases: { sig: "SIGTERM" | "SIGINT"; argv: () => string[]; env: Record<string, string>; what: string; command: string }[] = [
    { sig: "SIGTERM", argv: () => ["journal", "verify", journal()], env: {}, what: "journal verify", command: "journal verify" },
    { sig: "SIGINT", argv: () => ["journal", "verify", journal()], env: {}, what: "journal verify", command: "journal verify" },
    // Several ranges: partition probes and two verifying threads, each blocked on its own GET.
    {
      sig: "SIGTERM",
      argv: () => ["journal", "verify", journal(), "--threads", "2"],
      env: { BERNSTEIN_FAST_VERIFY_MIN_RANGE: "4096" },
      what: "journal verify --threads 2, several ranges",
      command: "journal verify",
    },
    { sig: "SIGINT", argv: () => ["replay", "verify", `${base}/slow/receipt.tar`], env: {}, what: "replay verify of a receipt being copied", command: "replay verify" },
    // diff-journal first reads a remote side's first bytes (is it a receipt?), awaiting them as they trickle in.
    { sig: "SIGTERM", argv: () => ["replay", "diff-journal", `${base}/slow/receipt.tar`, "agent-a"], env: {}, what: "replay diff-journal of a receipt being copied", command: "replay diff-journal" },
  ];
  test("SIGTERM while the object's size is asked of a server that never answers: one interrupted document, not a bare kill", async () => {
    const before = silentRequests;
    const proc = Bun.spawn([binPath(), "journal", "verify", `${base}/silent/journal.jsonl`, "--as-json"], { env: { ...process.env, NO_COLOR: "1" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const out = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    try {
      const until = performance.now() + 30_000;
      while (silentRequests === before && proc.exitCode === null && performance.now() < until) await Bun.sleep(10);
      expect(silentRequests).toBeGreaterThan(before);
      await Bun.sleep(500);
      expect(proc.exitCode).toBeNull();
      const t0 = performance.now();
      proc.kill("SIGTERM");
      const code = await proc.exited;
      const ms = performance.now() - t0;
      const [stdout, stderr] = await out;
      expect(code).toBe(143);
      expect(ms).toBeLessThan(5000);
      expect(JSON.parse(stdout)).toMatchObject({ ok: false, error: "interrupted", signal: "SIGTERM", command: "journal verify" });
      expect(stderr).toBe("");
    } finally {
      if (proc.exitCode === null) proc.kill("SIGKILL");
    }
  }, 60_000);

  for (const { sig, argv, env, what, command } of cases) {
    test(`${sig} during ${what}: exit ${EXIT[sig]} within 2 s, one interrupted document`, async () => {
      const before = bodiesStarted;
      const proc = Bun.spawn([binPath(), ...argv(), "--as-json"], {
        env: { ...process.env, NO_COLOR: "1", ...env },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const out = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      try {
        // Blocked on the socket: a ranged body has started dripping (1 byte/s), and a moment more.
        const until = performance.now() + 30_000;
        while (bodiesStarted === before && proc.exitCode === null && performance.now() < until) await Bun.sleep(10);
        expect(bodiesStarted).toBeGreaterThan(before);
        await Bun.sleep(1500);
        expect(proc.exitCode).toBeNull();
        const t0 = performance.now();
        proc.kill(sig);
        const code = await proc.exited;
        const ms = performance.now() - t0;
        const [stdout, stderr] = await out;
        expect(code).toBe(EXIT[sig]);
        // 2 s is the contract; the rest is headroom for a loaded 2-core machine.
        expect(ms).toBeLessThan(5000);
        const doc = JSON.parse(stdout);
        expect(doc).toMatchObject({ ok: false, error: "interrupted", signal: sig, command });
        // One range: the size is known and the range is being read. Several: the signal may come while the boundaries are probed, before the snapshot.
        if (argv().length === 3 && command === "journal verify") expect(doc).toMatchObject({ path: journal(), bytes_total: object.length });
        if (command === "replay verify") {
          // The private copy of the receipt being made is removed, not left in the temp directory.
          expect(doc.temp_files_removed).toHaveLength(1);
          expect(existsSync(doc.temp_files_removed[0])).toBe(false);
        }
        expect(stderr).toBe("");
      } finally {
        if (proc.exitCode === null) proc.kill("SIGKILL");
      }
    }, 60_000);
  }
});
