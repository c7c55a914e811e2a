import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { InputError } from "../../../errors/index.ts";
import { pyFloat } from "../../../pyjson/types.ts";
import { paint } from "../../../render/ansi.ts";
import { Table, idColumn, measure, terminalWidth, type Column } from "../../../render/table.ts";
import { localTime, sizeKb } from "../../../replay/format.ts";
import { listRuns, type RunListEntry } from "../../../replay/list.ts";
import { log } from "../../log.ts";
import { printJson, printLines } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { expectPositionals, limitOf, refuseFlags } from "./flags.ts";

/**
 * `bernstein replay list [--limit N]`: the runs under `<sdd>/runs` that have
 * a journal, the one that started last first. `--as-json` prints an array
 * (empty when there are no runs; that is not an error). A run that cannot be
 * read is skipped with a warning on stderr and the others are listed (exit
 * 0); when runs exist but none could be read, `runs_unreadable` (exit 3).
 */
export async function runList(ctx: ReplayContext): Promise<number> {
  expectPositionals(ctx, 0, "bernstein replay list [--limit N] [--sdd-dir DIR] [--as-json]");
  refuseFlags(ctx, REPLAY_VERBS.list!.flags, "replay list");
  const limit = limitOf(ctx);
  const list = await listRuns(ctx.sddDir, { limit });
  for (const name of list.skipped) log.warn(`skipped ${name}: its journal resolves outside ${list.runsDir}`);
  for (const u of list.unreadable) log.warn(`skipped ${u.runId}: cannot read it (${u.reason})`);
  // Skipping is no reason to hide the readable runs; but a list of nothing because nothing could be read is no answer.
  if (list.runs.length === 0 && list.unreadable.length > 0 && limit !== 0) {
    throw new InputError(
      "runs_unreadable",
      `none of the ${list.unreadable.length} run(s) under ${list.runsDir} could be read (first: ${list.unreadable[0]!.runId}: ${list.unreadable[0]!.reason})`,
      { runs_dir: list.runsDir, unreadable: list.unreadable.map((u) => ({ run_id: u.runId, reason: u.reason })) },
    );
  }
  if (ctx.json) {
    await printJson(list.runs.map(toJson));
    return 0;
  }
  if (!list.runsDirExists) {
    await printLines(paint("dim", `No runs recorded yet (${list.runsDir} does not exist).`));
    return 0;
  }
  if (list.runs.length === 0) {
    await printLines(paint("dim", `No replay logs found under ${list.runsDir}.`));
    return 0;
  }
  await printLines(...renderTable(list.runs));
  return 0;
}

function toJson(e: RunListEntry): Record<string, unknown> {
  return {
    run_id: e.run_id,
    started_at: e.started_at === null ? null : pyFloat(e.started_at),
    git_branch: e.git_branch,
    git_sha: e.git_sha,
    event_count: e.event_count,
    size_bytes: e.size_bytes,
    journal: e.journal,
    continues: e.continues,
  };
}

function renderTable(runs: RunListEntry[]): string[] {
  const rows = runs.map((r) => [
    r.run_id,
    (r.started_at !== null && localTime(r.started_at, false)) || "-",
    r.git_branch || "-",
    r.git_sha ? Array.from(r.git_sha).slice(0, 8).join("") : "-",
    String(r.event_count),
    sizeKb(r.size_bytes),
    r.continues ?? "",
  ]);
  const col = (header: string, i: number, extra: Partial<Column> = {}): Column => ({
    header,
    width: measure(header, rows.map((r) => r[i]!)),
    ...extra,
  });
  // Run ids are never cut below ID_MIN_WIDTH; start, counts and size are never cut at all.
  // On a narrow terminal SHA, then Branch, move below their row (labelled) instead.
  const fixed = (header: string, i: number, extra: Partial<Column> = {}): Column => {
    const c = col(header, i, extra);
    return { ...c, minWidth: c.width };
  };
  const table = new Table(
    [
      idColumn("Run ID", measure("", rows.map((r) => r[0]!))),
      fixed("Started", 1),
      col("Branch", 2, { minWidth: 6, fold: "branch: ", foldPriority: 1, placeholder: "-" }),
      col("SHA", 3, { minWidth: 3, fold: "sha: ", foldPriority: 2, placeholder: "-" }),
      fixed("Events", 4, { align: "right" }),
      fixed("Size", 5, { align: "right" }),
      ...(rows.some((r) => r[6]) ? [col("Continues", 6, { minWidth: 8, fold: "continues: ", foldPriority: 3, placeholder: "-" })] : []),
    ],
    { width: terminalWidth() },
  );
  return [paint("bold", "Available Runs"), table.header(), ...rows.flatMap((r) => table.format(r))];
}

/** `replay list --as-json`: the array `toJson` builds (docs/cli/replay.md). */
export const LIST_DOCS: CommandDocs = {
  exits: { 0: "listed (an empty array when there is no run)" },
  json: [
    jsonDoc({ shape: "array", example: "bernstein replay list" }, [
      ["run_id", "string", "The run's id (its folder under <sdd-dir>/runs)"],
      ["started_at", "number | null", "Start time, seconds since the epoch"],
      ["git_branch", "string | null", "Branch the run started on"],
      ["git_sha", "string | null", "Commit the run started at"],
      ["event_count", "number", "Rows in its journal"],
      ["size_bytes", "number", "Size of its journal"],
      ["journal", "string", "Its journal.jsonl"],
      ["continues", "string | null", "The run this one resumed, if any"],
    ]),
  ],
};
