import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";

/**
 * Real processes for the session e2e tests: a `bernstein server` (or run)
 * on a random free port, found through the server.json it writes, and a
 * minimal HTTP caller for the test to play the part of an agent.
 */
export interface LiveServer {
  proc: ReturnType<typeof Bun.spawn>;
  sddDir: string;
  url: string;
  token: string;
  pid: number;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** SIGTERM (if still running) and wait. */
  kill(): Promise<number>;
}

const temps: string[] = [];
export function tempProject(prefix = "bern-session-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}
export function cleanupTemps(): void {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
}

export async function waitFor<T>(what: string, probe: () => T | null | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

export function caller(url: string, token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
}

/** Spawn the compiled binary with `args` and wait until it serves (server.json names a live url). */
export async function startLive(projectDir: string, args: string[], env: Record<string, string> = {}): Promise<LiveServer> {
  const sddDir = join(projectDir, ".sdd");
  mkdirSync(sddDir, { recursive: true });
  const proc = Bun.spawn([binPath(), ...args], {
    cwd: projectDir,
    env: { ...process.env, NO_COLOR: "1", BERNSTEIN_SERVER_URL: "", BERNSTEIN_AUTH_TOKEN: "", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const infoPath = join(sddDir, "runtime", "server.json");
  const info = await waitFor("server.json", () => {
    if (proc.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${proc.exitCode} before serving`);
    if (!existsSync(infoPath)) return null;
    try {
      return JSON.parse(readFileSync(infoPath, "utf8")) as { url: string; token: string; pid: number };
    } catch {
      return null; // being replaced right now
    }
  });
  return {
    proc,
    sddDir,
    url: info.url,
    token: info.token,
    pid: info.pid,
    call: caller(info.url, info.token),
    async kill() {
      if (proc.exitCode === null) proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

export function startServer(projectDir: string): Promise<LiveServer> {
  return startLive(projectDir, ["server", "--port", "0", "--sdd-dir", ".sdd"]);
}
