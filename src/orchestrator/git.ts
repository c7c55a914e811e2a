/** `git rev-parse` facts of the project for run_started/metadata ("" when not a repo or no git). */
export function gitFacts(cwd: string): { sha: string; branch: string } {
  const ask = (args: string[]): string => {
    try {
      const r = Bun.spawnSync(["git", ...args], { cwd, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
      return r.exitCode === 0 ? r.stdout.toString().trim() : "";
    } catch {
      return "";
    }
  };
  const sha = ask(["rev-parse", "HEAD"]);
  return { sha, branch: sha ? ask(["rev-parse", "--abbrev-ref", "HEAD"]) : "" };
}

/** Whether `cwd` is inside a git work tree (git installed and `git rev-parse --is-inside-work-tree` says true). */
export function isGitWorkTree(cwd: string): boolean {
  try {
    const r = Bun.spawnSync(["git", "rev-parse", "--is-inside-work-tree"], { cwd, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
    return r.exitCode === 0 && r.stdout.toString().trim() === "true";
  } catch {
    return false;
  }
}
