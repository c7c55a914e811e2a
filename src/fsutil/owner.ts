import { readFileSync } from "node:fs";

/**
 * Who holds a lock: `<pid> <start-time>\n`. The start time (field 22 of
 * /proc/<pid>/stat, clock ticks since boot) tells a live owner from a
 * later process that reuses its pid; it is absent where /proc is.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm (field 2) may contain spaces and parentheses: count from the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists (one we may not signal counts: EPERM). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function ownerText(pid: number): string {
  const start = processStartTime(pid);
  return start === null ? `${pid}\n` : `${pid} ${start}\n`;
}

export function parseOwner(text: string): { pid: number; start: string | null } | null {
  const [p, s] = text.trim().split(/\s+/);
  const pid = Number.parseInt(p ?? "", 10);
  if (!Number.isSafeInteger(pid) || pid <= 0 || String(pid) !== p) return null;
  return { pid, start: s && /^\d+$/.test(s) ? s : null };
}
