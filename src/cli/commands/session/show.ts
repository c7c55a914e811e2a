import { jsonDoc } from "../../../json-fields.ts";
import { InputError, NegativeError } from "../../../errors/index.ts";
import { loadSession, sessionPath } from "../../../session/state.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines } from "../../output.ts";
import { describeAge, parseStaleAfter } from "../status.ts";
import { paint } from "../../../render/ansi.ts";
import { sddDirArgs } from "../../args.ts";

/**
 * `bernstein session show`: the saved session (`<sdd>/runtime/session.json`)
 * and whether the next run would resume from it. A stale session is shown
 * (exit 0, `stale: true`); no session is a negative answer (exit 1); an
 * unreadable one is malformed input (exit 3).
 */
export default defineCliCommand({
  docs: {
    exits: { 0: "a session file was found (resumable or stale)", 1: "there is none (no_session)", 3: "it cannot be parsed (session_corrupt)" },
    json: [
      jsonDoc({ example: "bernstein session show" }, [
        ["ok", "true", "The session file was looked at"],
        ["path", "string", "The session.json"],
        ["status", "\"ok\" | \"stale\"", "Resumable, or too old to resume"],
        ["resumable", "boolean", "A run would resume it"],
        ["stale", "boolean", "Too old to resume (--stale-after)"],
        ["age_seconds", "number | null", "Its age"],
        ["session", "object | null", "Its contents: saved_at, goal, completed/pending/open task ids, cost_spent"],
      ]),
    ],
  },
  meta: { name: "show", description: "Show the saved session state and whether it is resumable" },
  args: {
    ...sddDirArgs,
    "stale-after": { type: "string", description: "Minutes after which the session counts as stale (default 30)" },
  },
  async run({ args, json }) {
    const sddDir = args["sdd-dir"];
    const path = sessionPath(sddDir);
    const now = Date.now() / 1000;
    const r = loadSession(sddDir, { staleAfterMinutes: parseStaleAfter(args["stale-after"]), now });
    if (r.status === "missing") throw new NegativeError("no_session", `no saved session at ${path}`, { path, status: r.status });
    if (r.status === "corrupt" || r.state === null) {
      throw new InputError("session_corrupt", r.warning ?? `${path} is not a valid session file`, { path, status: r.status });
    }
    const s = r.state;
    const age = Math.max(0, Math.round((now - s.saved_at) * 10) / 10);
    if (json) {
      await printJson({ ok: true, path, status: r.status, resumable: r.status === "ok", stale: r.status === "stale", age_seconds: age, session: s });
      return 0;
    }
    const list = (ids: string[]) => (ids.length ? ids.join(", ") : "(none)");
    await printLines(
      `Session  ${path}`,
      `  saved:     ${new Date(s.saved_at * 1000).toISOString()} (${describeAge(age)})`,
      `  state:     ${r.status === "ok" ? paint("green", "resumable") : paint("yellow", "stale — a new run starts fresh")}`,
      `  goal:      ${s.goal || "(none)"}`,
      `  cost:      $${s.cost_spent.toFixed(2)}`,
      `  completed: ${list(s.completed_task_ids)}`,
      `  pending:   ${list(s.pending_task_ids)}`,
      `  open:      ${list(s.open_task_ids)}`,
    );
    return 0;
  },
});
