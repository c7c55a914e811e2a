/** Prompts built from task records. */
import type { Task } from "../server/model.ts";

export function agentPrompt(task: Task, goal: string, workdir: string): string {
  if (task.role === MANAGER_ROLE) {
    // The stored description holds a shortened goal (the task store's limit); the agent gets it whole.
    const instructions = goal ? managerDescription(goal, Infinity) : task.description.trim();
    return [`You are the manager agent of a Bernstein orchestration run.`, "", instructions, "", `Working directory: ${workdir}`].join("\n");
  }
  const parts = [
    `You are a ${task.role} agent in a Bernstein orchestration run.`,
    "",
    `Task ${task.id}: ${task.title}`,
  ];
  if (task.description.trim()) parts.push("", task.description.trim());
  if (goal) parts.push("", `Overall goal: ${goal}`);
  parts.push(
    "",
    `Working directory: ${workdir}`,
    "",
    'When you are done, end your output with one line that summarises what you did, prefixed with "RESULT: ".',
  );
  return parts.join("\n");
}

/** Characters of the goal kept in the planning task's stored description (its limit is 100,000). */
export const MANAGER_GOAL_CHARS = 90_000;

/** The manager's planning task: it must answer with a JSON task list. */
export function managerDescription(goal: string, maxGoalChars = MANAGER_GOAL_CHARS): string {
  const shown = goal.length > maxGoalChars ? `${goal.slice(0, maxGoalChars)}… (${goal.length - maxGoalChars} more characters; the manager agent receives the whole goal)` : goal;
  return [
    "Break the goal below into small tasks for coding agents.",
    "",
    `Goal: ${shown}`,
    "",
    "Answer with a JSON array only, one object per task:",
    '  {"id": "short-id", "title": "...", "description": "...", "role": "backend", "priority": 2, "depends_on": ["other-id"]}',
    "Only title is required; depends_on names ids (or titles) of other tasks of the same list.",
  ].join("\n");
}

export const MANAGER_ROLE = "manager";
