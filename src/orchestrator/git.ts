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
