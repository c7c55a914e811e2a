/**
 * A throw-away PostgreSQL cluster for the tests that need a real database:
 * `initdb` into a temp dir (as the `postgres` user when we are root, since
 * initdb refuses root), `pg_ctl start` on a free loopback port, one database
 * per test file. `.ci/system-packages` installs the server in CI; elsewhere
 * the tests skip with a message (see require-service.ts).
 */
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The directory holding initdb and pg_ctl, or null. */
export function postgresBinDir(): string | null {
  const roots = ["/usr/lib/postgresql"];
  for (const root of roots) {
    if (!existsSync(root)) continue;
    const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(join(root, v, "bin", "initdb"))) return join(root, v, "bin");
  }
  const which = Bun.which("initdb");
  return which ? which.replace(/\/initdb$/, "") : null;
}

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:PORT/DB */
  url(db: string): string;
  createDatabase(db: string): Promise<void>;
  /** `pg_ctl restart -m fast` (without blocking the caller): every session is cut (57P01), the server is back within a second or two. */
  restart(): Promise<void>;
  stop(): void;
}

function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

export function startPostgres(): PgCluster {
  const bin = postgresBinDir();
  if (!bin) throw new Error("no PostgreSQL server binaries (initdb) found");
  const dir = mkdtempSync(join(tmpdir(), "bern-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim();
    const gid = Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim();
    chownSync(dir, Number(id), Number(gid));
    chmodSync(dir, 0o700);
  }
  const as = (argv: string[]) => (asRoot ? ["runuser", "-u", "postgres", "--", ...argv] : argv);
  const run = (argv: string[]) => {
    const r = Bun.spawnSync(as(argv), { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${r.stderr.toString()}${r.stdout.toString()}`);
  };
  run([join(bin, "initdb"), "--no-sync", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8"]);
  const port = freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const ctlArgv = (action: string, extra: string[] = []) => [join(bin, "pg_ctl"), "-D", data, "-o", opts, "-l", join(dir, "log"), "-w", ...extra, action];
  const ctl = (action: string, extra: string[] = []) => run(ctlArgv(action, extra));
  ctl("start");
  let running = true;
  return {
    url: (db) => `postgres://postgres@127.0.0.1:${port}/${db}`,
    async createDatabase(db) {
      run([join(bin, "createdb"), "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", db]);
    },
    async restart() {
      const p = Bun.spawn(as(ctlArgv("restart", ["-m", "fast"])), { stdout: "ignore", stderr: "pipe" });
      if ((await p.exited) !== 0) throw new Error(`pg_ctl restart failed: ${await new Response(p.stderr).text()}`);
    },
    stop() {
      if (!running) return;
      running = false;
      try {
        ctl("stop", ["-m", "immediate"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
