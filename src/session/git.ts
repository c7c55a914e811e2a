/**
 * The few git facts the session briefs record. Every helper answers "" when
 * git is missing or the directory is not a repository: a brief without a
 * SHA is still worth writing.
 */
function git(repoDir: string, args: string[]): string | null {
  try {
    const r = Bun.spawnSync(["git", ...args], { cwd: repoDir, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    return r.exitCode === 0 ? r.stdout.toString() : null;
  } catch {
    return null;
  }
}

/** `git rev-parse HEAD`, or "". */
export function gitHeadSha(repoDir: string): string {
  return git(repoDir, ["rev-parse", "HEAD"])?.trim() ?? "";
}

export const NO_CHANGES = "(no uncommitted changes)";

/**
 * What changed during the session: `git diff --stat <start>..HEAD`, where
 * start is the parent of the first commit made after the session began;
 * without such a commit (or a start time), the uncommitted changes
 * (`git diff --stat HEAD`). `(no uncommitted changes)` when empty.
 */
export function gitDiffStatSince(repoDir: string, sessionStart: number | null): string {
  let stat: string | null = null;
  if (sessionStart !== null && sessionStart > 0) {
    const after = new Date(sessionStart * 1000).toISOString();
    const first = git(repoDir, ["log", "--format=%H", "--reverse", `--after=${after}`])?.split("\n")[0]?.trim();
    if (first) {
      const start = git(repoDir, ["rev-parse", "--verify", "--quiet", `${first}^`])?.trim();
      if (start) stat = git(repoDir, ["diff", "--stat", `${start}..HEAD`]);
    }
  }
  stat ??= git(repoDir, ["diff", "--stat", "HEAD"]);
  const trimmed = (stat ?? "").replace(/\s+$/, "");
  return trimmed === "" ? NO_CHANGES : trimmed;
}
