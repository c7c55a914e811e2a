import { captureCheckpoint } from "../../session/capture.ts";
import { defineCliCommand } from "../command.ts";
import { printJson, printLines } from "../output.ts";
import { sddDirArgs } from "../args.ts";

export default defineCliCommand({
  meta: { name: "checkpoint", description: "Write a checkpoint of the current session under .sdd/sessions" },
  args: {
    goal: { type: "string", description: "Goal to record (default: the run's goal)" },
    ...sddDirArgs,
  },
  async run({ args, json }) {
    const { path, checkpoint: cp } = await captureCheckpoint(args["sdd-dir"], { goal: args.goal });
    if (json) {
      await printJson({ ok: true, path, ...cp });
      return 0;
    }
    await printLines(
      `Checkpoint written to ${path}`,
      `  goal:      ${cp.goal || "(none)"}`,
      `  done:      ${cp.completed_task_ids.length}`,
      `  in flight: ${cp.in_flight_task_ids.length}`,
      `  next:      ${cp.next_steps.length} open task(s)`,
      `  git:       ${cp.git_sha || "(not a git repository)"}`,
    );
    return 0;
  },
});
