import { paint } from "../../render/ansi.ts";
import { captureWrapUp } from "../../session/capture.ts";
import { defineCliCommand } from "../command.ts";
import { printJson, printLines } from "../output.ts";

export default defineCliCommand({
  meta: { name: "wrap-up", description: "Write a wrap-up brief of the session under .sdd/sessions" },
  args: {
    "sdd-dir": { type: "string", default: ".sdd", description: "State directory" },
  },
  async run({ args, json }) {
    const { path, brief } = await captureWrapUp(args["sdd-dir"]);
    if (json) {
      await printJson({ ok: true, path, ...brief });
      return 0;
    }
    await printLines(
      `Wrap-up brief written to ${path}`,
      "",
      paint("bold", "Changes"),
      brief.changes_summary,
      "",
      paint("bold", "Learnings"),
      ...(brief.learnings.length ? brief.learnings.map((l) => `- ${l}`) : ["(none)"]),
      "",
      paint("bold", "Next session"),
      brief.next_session_brief,
      "",
      paint("bold", "Diff stat"),
      brief.git_diff_stat,
    );
    return 0;
  },
});
