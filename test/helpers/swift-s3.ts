/**
 * A real S3 endpoint for tests: OpenStack Swift with its s3api middleware
 * (it checks SigV4 signatures, unlike s3rver), started from generated rings
 * and configs in a temporary directory, on free loopback ports, and stopped
 * with everything it wrote. One server per test file:
 *
 *   const s3 = await startSwiftS3();   // in beforeAll
 *   await s3.stop();                   // in afterAll
 *
 * Credentials are tempauth's `test:tester` / `testing` (an access key with a
 * ':' in it, as every tempauth key is), region us-east-1, path-style.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SWIFT_BINARIES = ["swift-proxy-server", "swift-object-server", "swift-container-server", "swift-account-server"].map((b) => `/usr/bin/${b}`);
export const MEMCACHED = "/usr/bin/memcached";
/** Swift's own interpreter (its modules are Debian's, not a pyenv's). */
const PYTHON = "/usr/bin/python3";

/** Whether Swift and memcached are installed (for `available("swift-s3", …)`). */
export function swiftInstalled(): boolean {
  return [...SWIFT_BINARIES, MEMCACHED].every((p) => existsSync(p));
}

export interface SwiftS3 {
  /** http://127.0.0.1:PORT: the S3 endpoint (and the Swift API under /v1). */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The variables a bernstein process needs to reach the bucket. */
  env: Record<string, string>;
  /** Create another bucket (a Swift container). */
  createBucket(name: string, publicRead?: boolean): Promise<void>;
  /** The public (unsigned) URL of an object in a public-read bucket. */
  publicUrl(bucket: string, key: string): string;
  /** Put an object through the Swift API. */
  putObject(bucket: string, key: string, body: Uint8Array | string | Blob): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function serverConf(dir: string, port: number, kind: "account" | "container" | "object"): string {
  return `[DEFAULT]
devices = ${join(dir, "srv")}
mount_check = false
disable_fallocate = true
bind_ip = 127.0.0.1
bind_port = ${port}
workers = 0
swift_dir = ${dir}
log_name = ${kind}-server
log_level = ERROR
log_address = ${join(dir, "no-syslog")}

[pipeline:main]
pipeline = healthcheck ${kind}-server

[filter:healthcheck]
use = egg:swift#healthcheck

[app:${kind}-server]
use = egg:swift#${kind}
`;
}

/** Middleware that needs no settings. */
const PLAIN_FILTERS = ["catch_errors", "gatekeeper", "listing_formats", "copy", "slo", "dlo"];

function proxyConf(dir: string, port: number, memcachePort: number): string {
  return `[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${port}
workers = 0
swift_dir = ${dir}
log_name = proxy-server
log_level = ERROR
log_address = ${join(dir, "no-syslog")}

[pipeline:main]
pipeline = catch_errors gatekeeper cache listing_formats s3api tempauth copy slo dlo proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
allow_account_management = true

${PLAIN_FILTERS.map((f) => `[filter:${f}]\nuse = egg:swift#${f}\n`).join("")}[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:${memcachePort}
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin
`;
}

function run(cmd: string[], cwd: string): void {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed: ${r.stderr.toString()}${r.stdout.toString()}`);
}

async function waitHttp(url: string, procs: Bun.Subprocess[], deadlineMs: number, dir: string, body?: string): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      const r = await fetch(url);
      const text = await r.text();
      if (body === undefined || text.trim() === body) return;
      throw new Error(`${url} answered ${r.status} ${text.slice(0, 80)}`);
    } catch {
      const dead = procs.find((p) => p.exitCode !== null);
      if (dead) {
        const err = await Bun.file(join(dir, `${procs.indexOf(dead)}.err`)).text().catch(() => "");
        throw new Error(`a Swift process exited (${dead.exitCode}) before ${url} answered: ${err.slice(-2000)}`);
      }
      if (Date.now() > until) throw new Error(`Swift did not answer at ${url} within ${deadlineMs} ms`);
      await Bun.sleep(50);
    }
  }
}

/**
 * Start the endpoint; a start that fails (a port taken by someone else
 * between choosing it and binding it, on a busy machine) is retried once
 * on new ports.
 */
export async function startSwiftS3(bucket = "journals"): Promise<SwiftS3> {
  try {
    return await startOnce(bucket);
  } catch {
    return await startOnce(bucket);
  }
}

async function startOnce(bucket: string): Promise<SwiftS3> {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-swift-"));
  mkdirSync(join(dir, "srv", "d1"), { recursive: true });
  const [proxy, account, container, object, memcache] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const ports = { account, container, object };
  // One partition, one replica, one device: the smallest ring Swift accepts; all three built in one Python process (~0.5 s each otherwise).
  const rings = Object.entries(ports)
    .map(([kind, port]) => `b = RingBuilder(0, 1, 1); b.add_dev({"region": 1, "zone": 1, "ip": "127.0.0.1", "port": ${port}, "device": "d1", "weight": 1}); b.rebalance(); b.get_ring().save("${kind}.ring.gz")`)
    .join("\n");
  run([PYTHON, "-c", `from swift.common.ring import RingBuilder\n${rings}`], dir);
  for (const [kind, port] of Object.entries(ports)) writeFileSync(join(dir, `${kind}-server.conf`), serverConf(dir, port, kind as "account"));
  writeFileSync(join(dir, "proxy-server.conf"), proxyConf(dir, proxy, memcache));
  const procs: Bun.Subprocess[] = [];
  const spawn = (cmd: string[]) => procs.push(Bun.spawn(cmd, { cwd: dir, stdout: "ignore", stderr: Bun.file(join(dir, `${procs.length}.err`)) }));
  // Why a start failed: each process's state and the end of its stderr.
  const diagnostics = async () => {
    const parts = await Promise.all(
      procs.map(async (p, i) => `process ${i} (exit ${p.exitCode}): ${(await Bun.file(join(dir, `${i}.err`)).text().catch(() => "")).slice(-600)}`),
    );
    return parts.join("\n");
  };
  const stop = async () => {
    for (const p of procs) p.kill("SIGTERM");
    await Promise.race([Promise.all(procs.map((p) => p.exited)), Bun.sleep(3000)]);
    for (const p of procs) if (p.exitCode === null) p.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    spawn([MEMCACHED, "-l", "127.0.0.1", "-p", String(memcache), "-U", "0", "-m", "16", ...(process.getuid?.() === 0 ? ["-u", "root"] : [])]);
    for (const kind of Object.keys(ports)) spawn([`/usr/bin/swift-${kind}-server`, join(dir, `${kind}-server.conf`)]);
    spawn(["/usr/bin/swift-proxy-server", join(dir, "proxy-server.conf")]);
    const endpoint = `http://127.0.0.1:${proxy}`;
    // Python start-up of four servers: ~3 s on an idle machine, much more on a loaded one.
    await waitHttp(`${endpoint}/info`, procs, 90_000, dir);
    // Each backend must be ours and up: its healthcheck says OK (a foreign server on a reused port would not).
    for (const port of Object.values(ports)) await waitHttp(`http://127.0.0.1:${port}/healthcheck`, procs, 90_000, dir, "OK");
    const auth = await fetch(`${endpoint}/auth/v1.0`, { headers: { "X-Auth-User": "test:tester", "X-Auth-Key": "testing" } });
    const token = auth.headers.get("x-auth-token");
    const storage = auth.headers.get("x-storage-url");
    if (!auth.ok || !token || !storage) throw new Error(`Swift auth failed: ${auth.status}`);
    const swiftUrl = (b: string, key?: string) => `${endpoint}/v1/AUTH_test/${b}${key === undefined ? "" : `/${key.split("/").map(encodeURIComponent).join("/")}`}`;
    const createBucket = async (name: string, publicRead = false) => {
      const headers: Record<string, string> = { "X-Auth-Token": token };
      if (publicRead) headers["X-Container-Read"] = ".r:*,.rlistings";
      const r = await fetch(swiftUrl(name), { method: "PUT", headers });
      if (!r.ok) throw new Error(`creating bucket ${name} failed: ${r.status} ${await r.text()}`);
    };
    // The account is created on first use; the account and container servers may still be starting (503).
    for (const until = Date.now() + 60_000; ; ) {
      try {
        await createBucket(bucket);
        break;
      } catch (err) {
        if (Date.now() > until) throw new Error(`${(err as Error).message}\n${await diagnostics()}`);
        await Bun.sleep(100);
      }
    }
    const s3: SwiftS3 = {
      endpoint,
      bucket,
      accessKeyId: "test:tester",
      secretAccessKey: "testing",
      region: "us-east-1",
      env: { S3_ENDPOINT: endpoint, S3_ACCESS_KEY_ID: "test:tester", S3_SECRET_ACCESS_KEY: "testing", S3_REGION: "us-east-1" },
      createBucket,
      publicUrl: (b, key) => swiftUrl(b, key),
      putObject: async (b, key, body) => {
        const r = await fetch(swiftUrl(b, key), { method: "PUT", headers: { "X-Auth-Token": token }, body });
        if (!r.ok) throw new Error(`put ${b}/${key} failed: ${r.status}`);
      },
      stop,
    };
    return s3;
  } catch (err) {
    await stop();
    throw err;
  }
}
