/**
 * Plans: the task list a run works on. Two sources:
 *  - a plan file (YAML): a list of tasks, or `{goal, tasks: [...]}`;
 *  - the answer of the manager agent: a JSON task list (or `{"tasks": [...]}`),
 *    found in its output as the whole output, the last ```json block, or the
 *    last `[...]` span.
 * Each task: `title` (required), `id`, `description`, `role`, `priority`,
 * `scope`, `complexity`, `model`, `effort`, `depends_on` (ids or titles of
 * other tasks of the same plan), `read_only`, `verify` (`changed` | `none`). A malformed plan is an `InputError` naming
 * the task and the field, never a crash.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import * as v from "valibot";
import { InputError } from "../errors/index.ts";
import { TASK_ID_PATTERN, type TaskCreate } from "../server/model.ts";
import { newTaskId } from "../server/store.ts";
import { VERIFY_MODES, type VerifyMode } from "./config.ts";

const PlanTaskSchema = v.object({
  id: v.optional(v.pipe(v.union([v.string(), v.number()], "expected a string"), v.transform(String), v.regex(TASK_ID_PATTERN, "must match ^[A-Za-z0-9_.-]{1,64}$"))),
  title: v.pipe(v.string("expected a string"), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(500, "must be at most 500 characters")),
  description: v.optional(v.pipe(v.string("expected a string"), v.maxLength(100_000)), ""),
  role: v.optional(v.pipe(v.string("expected a string"), v.minLength(1), v.maxLength(200)), "auto"),
  priority: v.optional(v.pipe(v.number("expected an integer"), v.integer("expected an integer"), v.minValue(0), v.maxValue(100)), 2),
  scope: v.optional(v.pipe(v.string("expected a string"), v.minLength(1), v.maxLength(200)), "medium"),
  complexity: v.optional(v.pipe(v.string("expected a string"), v.minLength(1), v.maxLength(200)), "medium"),
  model: v.optional(v.nullable(v.pipe(v.string("expected a string"), v.maxLength(1000))), null),
  effort: v.optional(v.nullable(v.pipe(v.string("expected a string"), v.maxLength(1000))), null),
  depends_on: v.optional(v.array(v.pipe(v.union([v.string(), v.number()], "expected a string"), v.transform(String))), () => []),
  /** The task only reads (a review, a question): exempt from `verify: changed`. */
  read_only: v.optional(v.boolean("expected true or false")),
  /** This task's work-tree check, over the run's default: `changed` or `none`. */
  verify: v.optional(v.picklist(VERIFY_MODES, `expected one of ${VERIFY_MODES.join(", ")}`)),
});
type PlanTask = v.InferOutput<typeof PlanTaskSchema>;

export interface Plan {
  goal: string | null;
  tasks: TaskCreate[];
  /** The work-tree check of the tasks that declare one (`verify:`, `read_only: true` = `none`), by task id. */
  verify: Record<string, VerifyMode>;
}

/** Validate a parsed plan document and resolve `depends_on` to task ids. */
export function planFromDocument(doc: unknown, source: string): Plan {
  let goal: string | null = null;
  let list: unknown = doc;
  if (doc !== null && typeof doc === "object" && !Array.isArray(doc)) {
    const o = doc as Record<string, unknown>;
    if (!("tasks" in o)) throw new InputError("plan_invalid", `${source}: expected a list of tasks or a mapping with 'tasks'`, { path: source });
    if (o.goal !== undefined && o.goal !== null && typeof o.goal !== "string") {
      throw new InputError("plan_invalid", `${source}: goal: expected a string`, { path: source });
    }
    goal = (o.goal as string | undefined) ?? null;
    list = o.tasks;
  }
  if (!Array.isArray(list)) throw new InputError("plan_invalid", `${source}: expected a list of tasks`, { path: source });
  if (list.length === 0) throw new InputError("plan_invalid", `${source}: the plan has no tasks`, { path: source });
  if (list.length > 10_000) throw new InputError("plan_invalid", `${source}: too many tasks (${list.length} > 10000)`, { path: source });

  const parsed: PlanTask[] = list.map((item, i) => {
    const r = v.safeParse(PlanTaskSchema, item);
    if (!r.success) {
      const issue = r.issues[0];
      const key = v.getDotPath(issue);
      const label = item && typeof item === "object" && typeof (item as { title?: unknown }).title === "string" && (item as { title: string }).title.trim() ? ` ('${(item as { title: string }).title}')` : "";
      throw new InputError("plan_invalid", `${source}: task ${i + 1}${label}: ${key ? `${key}: ` : ""}${issue.message}`, { path: source, task_index: i });
    }
    return r.output;
  });

  const ids = parsed.map((t) => t.id ?? newTaskId());
  const byId = new Map<string, number>();
  ids.forEach((id, i) => {
    if (byId.has(id)) throw new InputError("plan_invalid", `${source}: task ${i + 1}: duplicate id '${id}'`, { path: source, task_index: i });
    byId.set(id, i);
  });
  const byTitle = new Map<string, number[]>();
  parsed.forEach((t, i) => byTitle.set(t.title, [...(byTitle.get(t.title) ?? []), i]));

  const tasks: TaskCreate[] = parsed.map((t, i) => {
    const deps = t.depends_on.map((ref) => {
      if (byId.has(ref)) return ref;
      const titled = byTitle.get(ref);
      if (titled && titled.length === 1) return ids[titled[0]!]!;
      if (titled && titled.length > 1) {
        throw new InputError("plan_invalid", `${source}: task ${i + 1} ('${t.title}'): depends_on '${ref}' names several tasks; use ids`, { path: source, task_index: i });
      }
      throw new InputError("plan_invalid", `${source}: task ${i + 1} ('${t.title}'): depends_on '${ref}' is not a task of this plan`, { path: source, task_index: i });
    });
    return {
      id: ids[i]!,
      title: t.title,
      description: t.description,
      role: t.role,
      priority: t.priority,
      scope: t.scope,
      complexity: t.complexity,
      model: t.model,
      effort: t.effort,
      depends_on: [...new Set(deps)],
    };
  });
  assertNoCycle(tasks, source);
  const verify: Record<string, VerifyMode> = {};
  parsed.forEach((t, i) => {
    if (t.read_only === true && t.verify === "changed") {
      throw new InputError("plan_invalid", `${source}: task ${i + 1} ('${t.title}'): read_only: true and verify: changed contradict each other`, { path: source, task_index: i });
    }
    const mode = t.read_only === true ? "none" : t.verify;
    if (mode) verify[ids[i]!] = mode;
  });
  return { goal, tasks, verify };
}

function assertNoCycle(tasks: TaskCreate[], source: string): void {
  const state = new Map<string, 0 | 1 | 2>();
  const deps = new Map(tasks.map((t) => [t.id!, t.depends_on ?? []]));
  const visit = (id: string, trail: string[]): void => {
    const s = state.get(id) ?? 0;
    if (s === 2) return;
    if (s === 1) throw new InputError("plan_invalid", `${source}: dependency cycle: ${[...trail.slice(trail.indexOf(id)), id].join(" -> ")}`, { path: source });
    state.set(id, 1);
    for (const d of deps.get(id) ?? []) visit(d, [...trail, id]);
    state.set(id, 2);
  };
  for (const t of tasks) visit(t.id!, []);
}

/** Read a YAML plan file. */
export function loadPlanFile(path: string): Plan {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const looked = resolve(path);
    throw new InputError(
      code === "ENOENT" ? "plan_not_found" : "plan_unreadable",
      `cannot read plan ${path}: ${code === "ENOENT" ? `no such file (looked for ${looked})` : (code ?? String(err))}`,
      { path, looked_for: [looked] },
    );
  }
  let doc: unknown;
  try {
    doc = Bun.YAML.parse(text);
  } catch (err) {
    throw new InputError("plan_invalid", `${path}: not valid YAML: ${(err as Error).message.split("\n")[0]}`, { path });
  }
  return planFromDocument(doc, path);
}

/**
 * Find the JSON task list in a manager agent's output: the whole output,
 * else the last ```json fenced block, else the span from the first `[` to
 * the last `]`. Throws `plan_invalid` when none parses to a valid plan.
 */
export function planFromAgentOutput(output: string, source = "manager output"): Plan {
  const candidates: string[] = [];
  const trimmed = output.trim();
  if (trimmed) candidates.push(trimmed);
  const fences = [...output.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)];
  if (fences.length) candidates.push(fences[fences.length - 1]![1]!.trim());
  const first = output.indexOf("[");
  const last = output.lastIndexOf("]");
  if (first >= 0 && last > first) candidates.push(output.slice(first, last + 1));
  let lastError = "no JSON task list found";
  for (const c of candidates) {
    let doc: unknown;
    try {
      doc = JSON.parse(c);
    } catch (err) {
      lastError = `not JSON (${(err as Error).message})`;
      continue;
    }
    return planFromDocument(doc, source);
  }
  const firstLine = trimmed.split("\n", 1)[0]!;
  const begins = firstLine ? `; its answer begins ${JSON.stringify(firstLine.length > 80 ? `${firstLine.slice(0, 80)}…` : firstLine)}` : "; its answer is empty";
  throw new InputError("plan_invalid", `${source}: the manager did not answer with a JSON task list: ${lastError}${begins}`);
}
