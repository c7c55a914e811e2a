import { jsonDoc } from "../../json-fields.ts";
import { captureCheckpoint } from "../../session/capture.ts";
import { defineCliCommand } from "../command.ts";
import { printJson, printLines } from "../output.ts";
import { sddDirArgs } from "../args.ts";

export default defineCliCommand({
  docs: {
    exits: { 0: "written", 1: "the task server cannot be reached (server_unreachable)" },
    json: [
      jsonDoc({ example: "bernstein checkpoint --goal 'ship the store'", server: "needs" }, [
        ["ok", "true", "The checkpoint was written"],
        ["path", "string", "Its file under .sdd/sessions/"],
        ["timestamp", "number", "When (seconds since the epoch)"],
        ["goal", "string", "The goal recorded"],
        ["completed_task_ids", "string[]", "Tasks done"],
        ["in_flight_task_ids", "string[]", "Tasks claimed and running"],
        ["next_steps", "string[]", "Open tasks (title, else id)"],
        ["git_sha", "string", "The commit (\"\" outside a git repository)"],
        ["cost_spent", "number", "Cost so far"],
      ]),
    ],
  },
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
