import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson, binPath } from "../helpers/cli.ts";

const VERBS = ["list", "agents", "latest", "diff", "repair", "export", "publish", "verify", "diff-journal", "debug"];
const COMMANDS = ["replay", "journal", "run", "stop", "status", "server", "session", "keys", "verify", "seal", "checkpoint", "wrap-up", "completion"];

/** What bash's completion function offers for the words typed so far (the last one being completed). */
async function bashComplete(words: string[], cwd: string): Promise<string[]> {
  const script = `source <(${JSON.stringify(binPath())} completion bash)
COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(" ")}); COMP_CWORD=${words.length - 1}
_bernstein_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const proc = Bun.spawn(["bash", "-c", script], { cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect([code, err]).toEqual([0, ""]);
  return out.split("\n").filter(Boolean);
}

describe("bernstein completion (compiled binary)", () => {
  let cwd: string;
  beforeAll(() => {
    cwd = mkdtempSync(join(tmpdir(), "bernstein-completion-"));
    mkdirSync(join(cwd, ".sdd", "runs", "run-20261201"), { recursive: true });
    writeFileSync(join(cwd, ".sdd", "runs", "run-20261201", "journal.jsonl"), "");
  });
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  test("bash can source the script and registers the completion", async () => {
    const proc = Bun.spawn(["bash", "-c", `source <(${JSON.stringify(binPath())} completion bash); complete -p bernstein`], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(0);
    expect(err).toBe("");
    expect(out).toContain("-F _bernstein_complete bernstein");
  });

  test("bash completes commands, replay verbs and run ids, and each verb's own flags", async () => {
    expect(await bashComplete(["bernstein", ""], cwd)).toEqual(COMMANDS);
    const replay = await bashComplete(["bernstein", "replay", ""], cwd);
    for (const v of VERBS) expect(replay).toContain(v);
    expect(replay).toContain("run-20261201");
    expect(await bashComplete(["bernstein", "replay", "di"], cwd)).toEqual(["diff", "diff-journal"]);
    expect(await bashComplete(["bernstein", "journal", "verify", "--th"], cwd)).toEqual(["--threads"]);
    const publish = await bashComplete(["bernstein", "replay", "publish", "--"], cwd);
    expect(publish).toContain("--yes-i-want-to-publish");
    expect(publish).not.toContain("--verify");
    // Flags between the words do not lose the path.
    expect(await bashComplete(["bernstein", "--no-color", "keys", ""], cwd)).toEqual(["generate", "vkey"]);
  });

  test("zsh and fish scripts name every command, verb and flag of the tree", async () => {
    for (const shell of ["zsh", "fish"]) {
      const r = await bernstein(["completion", shell]);
      expect(r.code).toBe(0);
      for (const w of [...COMMANDS, ...VERBS]) expect([shell, w, r.stdout.includes(`'${w}`)]).toEqual([shell, w, true]);
      for (const f of ["yes-i-want-to-publish", "links-only", "public-key", "sdd-dir"]) expect(r.stdout).toContain(f);
      expect(r.stdout).not.toContain("asJson");
    }
    expect((await bernstein(["completion", "zsh"])).stdout).toContain("compdef _bernstein bernstein");
    expect((await bernstein(["completion", "fish"])).stdout).toContain("complete -c bernstein -f -n '__fish_seen_subcommand_from replay; and not __fish_seen_subcommand_from list");
  });

  test("an unknown or missing shell is a usage error", async () => {
    for (const args of [["completion"], ["completion", "tcsh"], ["completion", "bash", "zsh"]]) {
      const r = await bernsteinJson(args);
      expect([args.join(" "), r.code, r.json.error]).toEqual([args.join(" "), 2, "usage"]);
    }
  });
});
