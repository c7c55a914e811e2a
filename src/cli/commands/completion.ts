import { UsageError } from "../../errors/index.ts";
import { defineCliCommand } from "../command.ts";
import { bashScript, completionTree, fishScript, zshScript } from "../completion.ts";
import { writeStdout } from "../output.ts";

const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/**
 * `bernstein completion bash|zsh|fish`: a completion script for the shell,
 * generated from the command tree (commands, `replay` verbs, flags; run ids
 * under `.sdd/runs` for `replay`).
 */
export default defineCliCommand({
  docs: { noJson: { prints: "a shell script", example: "bernstein completion bash" } },
  meta: {
    name: "completion",
    description: "Print a shell completion script: bash (source <(bernstein completion bash)), zsh, or fish (| source)",
  },
  args: {
    shell: { type: "positional", required: false, description: "bash | zsh | fish" },
  },
  async run({ args, data, json }) {
    const words = args._.map(String);
    const shell = words[0];
    if (words.length !== 1 || !shell || !(shell in SHELLS)) {
      throw new UsageError(`usage: bernstein completion bash|zsh|fish${shell && !(shell in SHELLS) ? ` (unknown shell '${shell}')` : ""}`);
    }
    if (json) throw new UsageError("'bernstein completion' prints a shell script and has no JSON form; leave out --as-json", "flag_not_applicable");
    // The tree comes from main: the registry imports this command, so this command cannot import the registry.
    if (data?.root === undefined) throw new Error("completion needs the command tree from main");
    const tree = await completionTree(data.root, "bernstein");
    await writeStdout(SHELLS[shell as keyof typeof SHELLS](tree));
    return 0;
  },
});
