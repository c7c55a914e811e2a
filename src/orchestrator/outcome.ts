/**
 * Outcome evidence: an attempt whose agent exited 0 and answered is done
 * only when nothing it tried was refused and, for a task that is to change
 * files, the work tree changed. Three failed signals come from here:
 *
 *  permission_denied  a tool call the CLI refused by its permission mode or
 *                     sandbox (claude's denials, codex's sandbox-refused or
 *                     declined commands, gemini's policy refusals);
 *  no_write_tool      the agent called a tool able to write that the session
 *                     does not offer (gemini's read-only approval mode);
 *  no_change          `verify: changed` and the work tree is as it was (the
 *                     agent's word that it did something is not evidence).
 *
 * The details never quote the agent's answer: a "Done: …" that did not
 * happen is not repeated as if it were the result.
 */
import type { PermissionMode, VerifyMode } from "./config.ts";
import type { Refusal, ToolCall } from "./result.ts";

export interface Evidence {
  signal: Refusal | "no_change";
  /** One line for the task's fail_reason, the step and the trace. */
  detail: string;
}

function names(calls: readonly ToolCall[]): string {
  return [...new Set(calls.map((c) => c.name))].join(", ");
}

/** The refusal behind an attempt's denied tool calls, or null when none was refused. */
export function refusalOf(calls: readonly ToolCall[]): Evidence | null {
  const denied = calls.filter((c) => c.status === "denied");
  if (denied.length === 0) return null;
  const noTool = denied.filter((c) => c.refused === "no_write_tool");
  if (noTool.length === denied.length) {
    return {
      signal: "no_write_tool",
      detail: `the agent was offered no tool able to write: it called ${names(noTool)}, which this session does not offer (agent.permission_mode read_only?); the task's changes were not made`,
    };
  }
  const refused = denied.filter((c) => c.refused !== "no_write_tool");
  return {
    signal: "permission_denied",
    detail: `the agent's permission mode or sandbox refused ${refused.length} tool call(s) (${names(refused)}); allow them (agent.permission_mode, or agent.args) or the task cannot be done`,
  };
}

/** `no_change` when the task must change the work tree and `filesChanged` (read from the tree) is empty. */
export function changeEvidence(filesChanged: readonly string[]): Evidence | null {
  if (filesChanged.length > 0) return null;
  return {
    signal: "no_change",
    detail: "the agent ended without an error but the work tree is unchanged: no file was created, changed or deleted (verify: changed; a task that only reads is declared read_only: true)",
  };
}

/**
 * The run's default check: the configured `verify` (`changed` listed, the
 * scalar `changed`/`none`), else `changed` in a git work tree. Agents
 * that may not write (`agent.permission_mode: read_only`) are not held to
 * it unless the config lists it.
 */
export function defaultVerifyMode(configured: VerifyMode | null, permissionMode: PermissionMode, gitWorkTree: boolean): VerifyMode {
  if (configured !== null) return configured;
  if (permissionMode === "read_only") return "none";
  return gitWorkTree ? "changed" : "none";
}

/** A task's own declaration (`verify:`, `read_only: true`) wins over the run's default. */
export function taskVerifyMode(declared: VerifyMode | null, runDefault: VerifyMode): VerifyMode {
  return declared ?? runDefault;
}
