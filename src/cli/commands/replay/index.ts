import { UsageError } from "../../../errors/index.ts";
import { closest } from "../../suggest.ts";
import { defineCliCommand } from "../../command.ts";
import { replayArgs } from "./args.ts";
import type { ReplayContext, ReplayHandler } from "./context.ts";
import { replayFormHelp, replayOverviewHelp, VERB_NAMES } from "./verbs.ts";
import type { DocsHost, HelpHost } from "../../command.ts";
import type { CommandDocs } from "../../../json-fields.ts";
import type { FormHost } from "../../completion.ts";

const USAGE =
  "usage: bernstein replay <RUN_ID | AGENT_ID | TASK_ID | latest | list> | agents [RUN_ID] | <RUN_ID | latest> --html [OUT] | diff RUN_A RUN_B | repair RUN_ID | export|publish|verify|diff-journal|debug ...";

/** Verbs with their own handler module, loaded only when used. */
const VERBS: Record<string, () => Promise<ReplayHandler>> = {
  list: () => import("./list.ts").then((m) => m.runList),
  agents: () => import("./agents.ts").then((m) => m.runAgentsList),
  diff: () => import("./diff.ts").then((m) => m.runDiff),
  repair: () => import("./repair.ts").then((m) => m.runRepair),
  export: () => import("./export.ts").then((m) => m.runExport),
  publish: () => import("./publish.ts").then((m) => m.runPublish),
  verify: () => import("./verify-receipt.ts").then((m) => m.runVerifyReceipt),
  "diff-journal": () => import("./diff-journal.ts").then((m) => m.runDiffJournal),
  debug: () => import("./debug.ts").then((m) => m.runDebug),
};

/** Each form's docs (docs/cli/replay.md), declared in its handler module and loaded only by the generator. */
const FORM_DOCS: Record<string, () => Promise<CommandDocs>> = {
  list: () => import("./list.ts").then((m) => m.LIST_DOCS),
  agents: () => import("./agents.ts").then((m) => m.AGENTS_DOCS),
  latest: () => import("./run-docs.ts").then((m) => m.runDocs("latest")),
  diff: () => import("./diff.ts").then((m) => m.DIFF_DOCS),
  repair: () => import("./repair.ts").then((m) => m.REPAIR_DOCS),
  export: () => import("./export.ts").then((m) => m.EXPORT_DOCS),
  publish: () => import("./publish.ts").then((m) => m.PUBLISH_DOCS),
  verify: () => import("./verify-receipt.ts").then((m) => m.VERIFY_RECEIPT_DOCS),
  "diff-journal": () => import("./diff-journal.ts").then((m) => m.DIFF_JOURNAL_DOCS),
  debug: () => import("./debug.ts").then((m) => m.DEBUG_DOCS),
  RUN_ID: () => import("./run-docs.ts").then((m) => m.runDocs("$RUN")),
  AGENT_ID: () => import("./run-docs.ts").then((m) => m.AGENT_DOCS),
  TASK_ID: () => import("./task.ts").then((m) => m.TASK_DOCS),
};

const DESCRIPTION = "Replay, verify, diff, repair and export run and agent journals";

const replay = defineCliCommand({
  meta: { name: "replay", description: DESCRIPTION },
  args: {
    target: { type: "positional", required: false, description: "list | agents | latest | RUN_ID | AGENT_ID | TASK_ID | diff | repair | export | publish | verify | diff-journal | debug" },
    ...replayArgs,
  },
  verbs: VERB_NAMES,
  async run({ args, json, rawArgs }) {
    const words = args._.map(String);
    const [first, ...rest] = words;
    // The publish confirmation is refused by name on every other verb, before any work.
    if (args["yes-i-want-to-publish"] && first !== "publish") {
      throw new UsageError(
        `--yes-i-want-to-publish applies only to 'bernstein replay publish', not to '${first ?? "replay"}'`,
        "flag_not_applicable",
      );
    }
    if (first === undefined) throw new UsageError(USAGE);
    const ctx: ReplayContext = { positionals: rest, args, json, sddDir: args["sdd-dir"] ?? ".sdd", rawArgs };
    const verb = VERBS[first];
    // A signal ends any replay form with its report (a verb that holds more facts has its own guard inside);
    // loaded here, not with the command list `--help` reads
    const { withInterrupts } = await import("../../interrupt.ts");
    if (verb) return withInterrupts({ json, command: `replay ${first}` }, async () => (await verb())(ctx));
    // `replay <RUN> --html OUT` is the one target form with a second word.
    if (rest.length > (args.html ? 1 : 0)) {
      const hint = closest(first, [...VERB_NAMES]);
      if (hint === undefined) throw new UsageError(USAGE);
      throw new UsageError(`unknown command '${first}' for 'bernstein replay' (did you mean '${hint}'?)`, "usage", { suggestion: hint });
    }
    ctx.positionals = [first, ...rest];
    const { runTarget } = await import("./target.ts");
    return withInterrupts({ json, command: "replay" }, () => runTarget(ctx));
  },
});

/** `replay <verb> --help` shows that verb's page; `replay --help` the overview of verbs and target forms. */
export default Object.assign(replay, {
  helpFor: (words: string[]) => replayFormHelp(words[0]),
  helpOverview: replayOverviewHelp(DESCRIPTION),
  completionForms: () => VERB_NAMES.map((v) => replayFormHelp(v)!),
  formDocs: (form: string) => FORM_DOCS[form]?.() ?? Promise.resolve(undefined),
} satisfies HelpHost & FormHost & DocsHost);
