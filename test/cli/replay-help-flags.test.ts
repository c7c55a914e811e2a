/**
 * Every replay verb's help lists every flag the verb accepts, because the
 * handler refuses flags against the same list the help page is drawn from
 * (verbs.ts): for each verb, each replay flag is either on its page and
 * accepted, or off its page and refused (flag_not_applicable).
 */
import { describe, expect, test } from "bun:test";
import { binPath } from "../helpers/cli.ts";
import { replayArgs } from "../../src/cli/commands/replay/args.ts";
import { REPLAY_VERBS } from "../../src/cli/commands/replay/verbs.ts";

function run(args: string[]) {
  const r = Bun.spawnSync([binPath(), ...args], { env: { ...process.env, NO_COLOR: "1", COLUMNS: "200" }, stdout: "pipe", stderr: "pipe", cwd: "/" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const VALUE: Record<string, string> = {};
for (const [name, def] of Object.entries(replayArgs)) if ((def as { type: string }).type === "string") VALUE[name] = "x";

describe("replay verb help lists exactly what the verb accepts", () => {
  for (const verb of ["verify", "export", "publish", "diff-journal", "debug", "list", "repair", "diff", "agents"]) {
    test(verb, () => {
      // The option column only: a description may name another verb's flag.
      const page = new Set(run(["replay", verb, "--help"]).stdout.split("\n").flatMap((l) => /^\s+(?:-\w, )?(--[a-z0-9-]+)/.exec(l)?.[1] ?? []));
      const form = REPLAY_VERBS[verb]!;
      const words = form.positionals.filter((p) => p.required).map((_, i) => `w${i}`);
      // publish asks for its confirmation before anything else.
      const confirm = verb === "publish" ? ["--yes-i-want-to-publish"] : [];
      for (const name of Object.keys(replayArgs)) {
        if (name === "sdd-dir") continue;
        const flag = name === "default-ignores" ? "--no-default-ignores" : `--${name}`;
        const given = VALUE[name] !== undefined ? [flag, VALUE[name]!] : [flag];
        const r = run(["replay", verb, ...words, ...confirm, ...given, "--sdd-dir", "/nonexistent-bernstein-sdd", "--as-json"]);
        const refused = r.code === 2 && r.stdout.includes('"flag_not_applicable"');
        const listed = page.has(flag);
        expect({ flag: name, listed, refused }).toEqual({ flag: name, listed: (form.flags as string[]).includes(name), refused: !(form.flags as string[]).includes(name) });
      }
    }, 60_000);
  }
});
