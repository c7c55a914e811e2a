import { describe, expect, test } from "bun:test";
import { wrapUpStopOutcome } from "../../src/cli/commands/wrap-up.ts";
import { stopDocument, stopFailure } from "../../src/cli/stop-report.ts";
import type { StopReport } from "../../src/session/stop.ts";
import type { WrapUpBrief } from "../../src/session/wrapup.ts";
import type { ErrorCode } from "../../src/errors/index.ts";

/**
 * The stop failures a live run cannot be made to produce on demand (a
 * refused stop, a process that outlives the wait, a server gone between the
 * brief and the stop): `wrap-up --stop` must fail them exactly as
 * `bernstein stop` does, with the written brief kept in the document.
 */
const brief: WrapUpBrief = {
  timestamp: 1700000000.5,
  session_id: "1700000000",
  changes_summary: "- A: done",
  learnings: [],
  next_session_brief: "No open tasks remaining.",
  git_diff_stat: "(no uncommitted changes)",
  completed_task_ids: ["A"],
};
const path = ".sdd/sessions/1700000000-wrapup.json";

const reached: StopReport = {
  reachable: true,
  url: "http://127.0.0.1:1",
  session_saved: true,
  session_path: ".sdd/runtime/session.json",
  session_error: null,
  completed: 1,
  pending: 0,
  open: 0,
  counts_from: "stop_request",
  stop_accepted: true,
  stop_detail: "stopping",
  force: false,
  timeout_s: 30,
  grace_s: 5,
  pid: 4242,
  pid_role: "orchestrator",
  exited: true,
  waited_s: 1.2,
};

describe("wrap-up --stop outcome", () => {
  test("stopped: {ok, path, ...brief, stop} with stop as 'bernstein stop --as-json' prints it", () => {
    const out = wrapUpStopOutcome(path, brief, reached);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.document).toEqual({ ok: true, path, ...brief, stop: { ok: true, ...reached } });
    expect(Object.keys(out.document)).toEqual(["ok", "path", ...Object.keys(brief), "stop"]);
  });

  const failures: [ErrorCode, StopReport, string][] = [
    ["stop_refused", { ...reached, stop_accepted: false, stop_detail: "nope", exited: null }, "did not accept the stop: nope"],
    ["stop_timeout", { ...reached, exited: false, waited_s: 40 }, "still running after 40s"],
    [
      "server_unreachable",
      { reachable: false, url: null, reason: "gone", fallback_path: ".sdd/runtime/session_state.json", fallback: { stopped_at: "2026-01-01T00:00:00", open_tasks: 1, claimed_tasks: 0 } },
      "cannot reach the task server (gone)",
    ],
  ];
  for (const [code, report, message] of failures) {
    test(`${code}: exit 1 with the stop's code; the brief stays in the document`, () => {
      const out = wrapUpStopOutcome(path, brief, report);
      expect(out.ok).toBe(false);
      if (out.ok) return;
      const stopErr = stopFailure(report)!;
      expect(out.error.code).toBe(code);
      expect(out.error.exitCode).toBe(stopErr.exitCode);
      expect(out.error.exitCode).toBe(1);
      expect(out.error.message).toStartWith(`wrap-up brief written to ${path}, but the run was not stopped: `);
      expect(out.error.message).toContain(message);
      expect(out.error.message).not.toContain("\n");
      expect(out.error.facts).toEqual({ path, ...brief, stop: stopDocument(report) });
      // `stop` is the failure document `bernstein stop --as-json` prints
      expect(out.error.facts.stop).toEqual({ ok: false, error: code, detail: stopErr.message, ...stopErr.facts });
    });
  }
});
