/**
 * Start the compiled `bernstein server --port 0` in a temp state directory
 * and wait until it has written server.json (the real URL and token).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";

export interface ServerProc {
  proc: ReturnType<typeof Bun.spawn>;
  url: string;
  token: string;
  pid: number;
  sddDir: string;
  /** fetch with the bearer token; JSON body when given. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  stop(): Promise<number>;
}

export async function waitFor<T>(fn: () => T | null | undefined | false, timeoutMs = 15000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

export function readServerJson(sddDir: string, pid?: number): { url: string; token: string; pid: number } | null {
  const p = join(sddDir, "runtime", "server.json");
  if (!existsSync(p)) return null;
  try {
    const info = JSON.parse(readFileSync(p, "utf8"));
    if (pid !== undefined && info.pid !== pid) return null;
    return info;
  } catch {
    return null;
  }
}

export async function startServer(cwd: string, extra: string[] = [], env: Record<string, string> = {}): Promise<ServerProc> {
  const sddDir = join(cwd, ".sdd");
  const proc = Bun.spawn([binPath(), "server", "--port", "0", "--sdd-dir", sddDir, ...extra], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const info = await waitFor(() => readServerJson(sddDir, proc.pid), 15000, "server.json");
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(info.url + path, {
      method,
      headers: { authorization: `Bearer ${info.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
  return {
    proc,
    url: info.url,
    token: info.token,
    pid: proc.pid,
    sddDir,
    call,
    async stop() {
      proc.kill("SIGTERM");
      return await proc.exited;
    },
  };
}
