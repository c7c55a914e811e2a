/**
 * A closed world for the real agent CLIs: the fake provider API
 * (test/helpers/fake-provider.ts) in a loopback-only network namespace
 * (`unshare -n`, lo up) where that works (root), and every command of a
 * test run inside the same namespace (`nsenter --net=/proc/<fake>/ns/net`)
 * under `strace -f`, which records every connect()/sendto()/sendmsg() the
 * whole process tree attempts. A test then asserts that the only addresses
 * ever tried were loopback ones (the fake API and bernstein's own task
 * server), and the namespace guarantees nothing got out even if one were not.
 *
 * The fake API is read over its stdio (a test process outside the
 * namespace cannot reach its port): `requests()` asks it for its log.
 */
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./cli.ts";
import type { LoggedRequest } from "./fake-provider.ts";

export const REAL_CLI_BIN = join(ROOT, "test", "real-clis", "node_modules", ".bin");
export const REAL_CLIS = ["claude", "codex", "gemini"] as const;
export type RealCli = (typeof REAL_CLIS)[number];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export const realClisInstalled = REAL_CLIS.every((n) => executable(join(REAL_CLI_BIN, n)));

/** The pinned versions (test/real-clis/package.json). */
export function pinnedVersions(): Record<string, string> {
  return JSON.parse(readFileSync(join(ROOT, "test", "real-clis", "package.json"), "utf8")).dependencies;
}

const ok = (argv: string[]): boolean => {
  try {
    return Bun.spawnSync(argv, { stdout: "ignore", stderr: "ignore", stdin: "ignore" }).exitCode === 0;
  } catch {
    return false;
  }
};

/** A loopback-only network namespace can be made here (root, unshare, nsenter, ip). */
export const netnsAvailable = process.platform === "linux" && Bun.which("nsenter") !== null && Bun.which("ip") !== null && ok(["unshare", "-n", "true"]);
export const straceAvailable = Bun.which("strace") !== null && ok(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=connect", "true"]);

export interface WorldResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Every inet address (`addr:port`) the process tree tried to connect or send to. */
  addresses: string[];
}

function isLoopback(addr: string): boolean {
  const host = addr.replace(/:\d+$/, "");
  return /^127\./.test(host) || host === "::1" || /^::ffff:127\./.test(host) || host === "0.0.0.0" || host === "::";
}

/** Addresses in an `strace -e trace=connect,sendto,sendmsg` log (AF_INET and AF_INET6 only). */
export function tracedAddresses(log: string): string[] {
  const out: string[] = [];
  for (const line of log.split("\n")) {
    const v4 = /sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/.exec(line);
    if (v4) out.push(`${v4[2]}:${v4[1]}`);
    const v6 = /sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"/.exec(line);
    if (v6) out.push(`${v6[2]}:${v6[1]}`);
  }
  return out;
}

export function externalAddresses(addresses: string[]): string[] {
  return addresses.filter((a) => !isLoopback(a));
}

export class AgentWorld {
  readonly dir = mkdtempSync(join(tmpdir(), "bern-agents-"));
  /** Marks every process a test starts (found in /proc/<pid>/environ when looking for leftovers). */
  readonly marker = `BERNSTEIN_TEST_WORLD=${crypto.randomUUID()}`;
  readonly apiKey = `sk-fake-${crypto.randomUUID()}`;
  port = 0;
  private fakePid = 0;
  private fake!: ReturnType<typeof Bun.spawn>;
  private lines: string[] = [];
  private waiting: ((line: string) => void)[] = [];
  private traces = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const fakeArgv = [process.execPath, join(ROOT, "test", "helpers", "fake-provider.ts")];
    const argv = netnsAvailable ? ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', ...fakeArgv] : fakeArgv;
    this.fake = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "inherit", env: { ...process.env, FAKE_PROVIDER_KEY: this.apiKey } });
    void this.readLines(this.fake.stdout as ReadableStream<Uint8Array>);
    const hello = JSON.parse(await this.nextLine()) as { port: number; pid: number };
    this.port = hello.port;
    this.fakePid = hello.pid;
    return this;
  }

  private async readLines(stream: ReadableStream<Uint8Array>): Promise<void> {
    let buf = "";
    const dec = new TextDecoder();
    for await (const chunk of stream) {
      buf += dec.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const w = this.waiting.shift();
        if (w) w(line);
        else this.lines.push(line);
      }
    }
  }

  private nextLine(): Promise<string> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The fake API's request log so far. */
  async requests(): Promise<LoggedRequest[]> {
    const sink = this.fake.stdin as import("bun").FileSink;
    sink.write("stats\n");
    await sink.flush();
    return (JSON.parse(await this.nextLine()) as { requests: LoggedRequest[] }).requests;
  }

  /** argv prefixed to enter the namespace and be traced; the strace log path. */
  private wrap(argv: string[]): { argv: string[]; log: string | null } {
    const ns = netnsAvailable ? ["nsenter", `--net=/proc/${this.fakePid}/ns/net`, "--"] : [];
    if (!straceAvailable) return { argv: [...ns, ...argv], log: null };
    const log = join(this.dir, `strace-${++this.traces}.log`);
    return { argv: [...ns, "strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=connect,sendto,sendmsg", "-o", log, "--", ...argv], log };
  }

  /** Start argv in the world (not awaited); `finished()` gives its result. */
  spawn(argv: string[], opts: { cwd: string; env?: Record<string, string> }): { finished: () => Promise<WorldResult> } {
    const w = this.wrap(argv);
    const [k, v] = this.marker.split("=") as [string, string];
    const proc = Bun.spawn(w.argv, { cwd: opts.cwd, env: { ...process.env, NO_COLOR: "1", ...opts.env, [k]: v }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const done = (async () => {
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      const addresses = w.log ? tracedAddresses(readFileSync(w.log, "utf8")) : [];
      return { code, stdout, stderr, addresses };
    })();
    return { finished: () => done };
  }

  run(argv: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<WorldResult> {
    return this.spawn(argv, opts).finished();
  }

  /** Processes still alive that a test of this world started (by the environment marker, and by namespace). */
  leftovers(): number[] {
    const ns = netnsAvailable ? readlinkSync(`/proc/${this.fakePid}/ns/net`) : null;
    const found: number[] = [];
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name) || Number(name) === this.fakePid || Number(name) === process.pid) continue;
      try {
        if (ns !== null && readlinkSync(`/proc/${name}/ns/net`) === ns) {
          found.push(Number(name));
          continue;
        }
        if (readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(this.marker)) found.push(Number(name));
      } catch {
        /* gone meanwhile, or not ours to read */
      }
    }
    return found;
  }

  async stop(): Promise<void> {
    (this.fake.stdin as import("bun").FileSink).end();
    await this.fake.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
