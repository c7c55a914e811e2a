/**
 * `<sdd>/runtime/server.json`: how CLI commands find the running server.
 * Written atomically with mode 0600 (it holds the bearer token), removed on
 * a clean shutdown by the process that wrote it.
 */
import { readFileSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { ensurePrivateDir, serverInfoPath } from "./paths.ts";

export const ServerInfoSchema = v.object({
  url: v.string(),
  host: v.string(),
  port: v.number(),
  pid: v.number(),
  token: v.string(),
  started_at: v.number(),
});
export type ServerInfo = v.InferOutput<typeof ServerInfoSchema>;

export function writeServerInfo(sddDir: string, info: ServerInfo): void {
  ensurePrivateDir(dirname(serverInfoPath(sddDir)));
  writeFileAtomic(serverInfoPath(sddDir), JSON.stringify(info, null, 2) + "\n", { mode: 0o600 });
}

/** The recorded server, or null when the file is missing or unreadable. */
export function readServerInfo(sddDir: string): ServerInfo | null {
  let text: string;
  try {
    text = readFileSync(serverInfoPath(sddDir), "utf8");
  } catch {
    return null;
  }
  try {
    const r = v.safeParse(ServerInfoSchema, JSON.parse(text));
    return r.success ? r.output : null;
  } catch {
    return null;
  }
}

/** Remove server.json if (and only if) it still describes this process. */
export function removeServerInfo(sddDir: string, pid = process.pid): void {
  const info = readServerInfo(sddDir);
  if (info && info.pid !== pid) return;
  try {
    unlinkSync(serverInfoPath(sddDir));
  } catch {
    /* already gone */
  }
}

