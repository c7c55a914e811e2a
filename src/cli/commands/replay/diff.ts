import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import type { PyObject } from "../../../pyjson/types.ts";
import { paint } from "../../../render/ansi.ts";
import { renderDocJson, renderValueInline, textHead } from "../../../render/json.ts";
import { Table, sanitizeCell, terminalWidth, type Cell } from "../../../render/table.ts";
import { diffRunInputs, IGNORED_FIELDS, type JournalDiff } from "../../../replay/diff.ts";
import { diffRules } from "../../../replay/diff-rules.ts";
import { repeated } from "../../tlog-flags.ts";
import { assertReadable, type RunRef } from "../../../replay/discovery.ts";
import { resolveNamedRun } from "./target.ts";
import { printLines, writeStdoutSync } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { GATEWAY_LOG, hasGatewayLog } from "../../../gateway/diff.ts";
import { runGatewayDiff } from "./diff-gateway.ts";
import { assertJournalExists } from "../../../replay/discovery.ts";
import { log } from "../../log.ts";
import { expectPositionals, refuseFlags } from "./flags.ts";

const USAGE = "bernstein replay diff RUN_A RUN_B [--ignore FIELD]... [--no-default-ignores] [--sdd-dir DIR] [--as-json]";

/**
 * `bernstein replay diff RUN_A RUN_B`: the first step where two runs' journals
 * diverge, with both rows side by side (changed fields marked `*` and, with
 * colour, highlighted). Exit 1 when they diverge, 0 when they match; a
 * missing run or journal is exit 3.
 */
export async function runDiff(ctx: ReplayContext): Promise<number> {
  const [idA, idB] = expectPositionals(ctx, 2, USAGE);
  refuseFlags(ctx, REPLAY_VERBS.diff!.flags, "replay diff");
  const rules = diffRules({ ignore: repeated(ctx.rawArgs, "ignore"), noDefaultIgnores: ctx.args["default-ignores"] === false });
  const a = resolveNamedRun(ctx, idA!, false);
  const b = resolveNamedRun(ctx, idB!, false);
  // Upstream compares the ReplayGateway logs; runs without them compare their journals.
  if (hasGatewayLog(a.runDir) && hasGatewayLog(b.runDir)) return runGatewayDiff(ctx, a, b);
  for (const [r, other] of [[a, b], [b, a]] as const) {
    if (hasGatewayLog(r.runDir)) log.info(`run ${r.runId} has a gateway log (${GATEWAY_LOG}) but ${other.runId} has none: comparing their journal.jsonl`);
  }
  for (const r of [a, b]) assertJournalExists(r);
  assertReadable(a);
  assertReadable(b);
  const d = await diffRunInputs(a.journal, b.journal, rules, { allowEmpty: Boolean(ctx.args["allow-empty"]) });
  if (ctx.json) {
    // a huge row is written from its bytes in pieces (render/json.ts), never one text
    renderDocJson({
      ok: !d.diverged,
      ...(d.diverged ? { error: "divergence", detail: d.reason } : {}),
      log: "journal.jsonl",
      diverged: d.diverged,
      index: d.index,
      reason: d.reason,
      reason_code: d.reason_code,
      a_event: d.a_event,
      b_event: d.b_event,
      fields_changed: d.fields_changed,
      ignored_fields: d.ignored_fields,
      aligned_fields: d.aligned_fields,
      rules_applied: d.rules_applied,
    }, writeStdoutSync);
    writeStdoutSync("\n");
  } else {
    await printLines(...prose(a, b, d));
  }
  return d.diverged ? 1 : 0;
}

/** What the rules left out, when they left anything out of these rows. */
function rulesLine(d: JournalDiff): string[] {
  if (d.rules_applied.length === 0) return [];
  const ignored = d.rules_applied.filter((f) => d.ignored_fields.includes(f));
  const aligned = d.rules_applied.filter((f) => d.aligned_fields.includes(f));
  const parts = [
    ...(ignored.length ? [`ignored ${ignored.join(", ")}`] : []),
    ...(aligned.length ? [`${aligned.join(", ")} compared by order of first appearance`] : []),
  ];
  return [paint("dim", sanitizeCell(`${parts.join("; ")}${d.aligned_fields.length ? " (--no-default-ignores compares every field)" : ""}`))];
}

/** The prose report (exported for the tests that hold the fast path to the exact one). */
export function prose(a: RunRef, b: RunRef, d: JournalDiff): string[] {
  if (!d.diverged) return [paint("bright_green", "No divergence") + `: ${d.reason}`, ...rulesLine(d), paint("dim", "compared: journal.jsonl of both runs")];
  const lines = [
    paint("dim", "compared: journal.jsonl of both runs"),
    paint("bold bright_red", "Divergence") + ` at event index ${d.index}: ${sanitizeCell(d.reason)}`,
    paint("dim", `reason_code=${d.reason_code}`) +
      (d.fields_changed.length ? `  fields changed: ${sanitizeCell(d.fields_changed.join(", "))}` : ""),
    ...rulesLine(d),
    "",
  ];
  const changed = new Set(d.fields_changed);
  const notCompared = new Set([...IGNORED_FIELDS, ...d.ignored_fields.filter((f) => !f.includes("."))]);
  const table = new Table(
    [
      { header: `run A: ${a.runId}`, width: 20, minWidth: 12, flex: true, overflow: "wrap" },
      { header: `run B: ${b.runId}`, width: 20, minWidth: 12, flex: true, overflow: "wrap" },
    ],
    { width: terminalWidth(), gap: 3 },
  );
  lines.push(table.header());
  const keys: string[] = [];
  for (const row of [d.a_event, d.b_event]) if (row) for (const k of row.keys()) if (!keys.includes(k)) keys.push(k);
  // Compared fields first (in recorded order), then the clock and chain fields that never count.
  const ordered = [...keys.filter((k) => !notCompared.has(k)), ...keys.filter((k) => notCompared.has(k))];
  const ended = (side: string) => ({ text: `(no event: run ${side} ends before index ${d.index})`, style: "bold bright_red" });
  if (!d.a_event || !d.b_event) {
    lines.push(...table.format([d.a_event ? "" : ended("A"), d.b_event ? "" : ended("B")]));
  }
  for (const k of ordered) {
    lines.push(...table.format([field(d.a_event, k, changed, notCompared), field(d.b_event, k, changed, notCompared)]));
  }
  return lines;
}

function field(row: PyObject | null, key: string, changed: ReadonlySet<string>, notCompared: ReadonlySet<string>): Cell {
  if (!row || !row.has(key)) return { text: changed.has(key) ? "* (absent)" : "", style: changed.has(key) ? "bold bright_red" : "" };
  const text = `${key}: ${valueText(row.get(key))}`;
  if (changed.has(key)) return { text: `* ${text}`, style: "bold bright_red" };
  if (notCompared.has(key)) return { text: `  ${text}`, style: "dim" };
  return { text: `  ${text}` };
}

/** The characters of a value the side-by-side shows; `--as-json` prints it whole. */
export const SHOWN_VALUE_CHARS = 65_536;

/**
 * A value as the side-by-side shows it: its one-line JSON, cut after
 * SHOWN_VALUE_CHARS characters with a note of its length. A huge row's
 * value is encoded in pieces of which only the shown ones are kept.
 */
export function valueText(value: unknown): string {
  const { head, length } = textHead((write) => renderValueInline(value, write), SHOWN_VALUE_CHARS + 1);
  if (length <= SHOWN_VALUE_CHARS) return head;
  // a cut between the two halves of a surrogate pair keeps neither
  const end = (head.charCodeAt(SHOWN_VALUE_CHARS - 1) & 0xfc00) === 0xd800 ? SHOWN_VALUE_CHARS - 1 : SHOWN_VALUE_CHARS;
  return `${head.slice(0, end)} … [cut: ${length} characters as recorded; --as-json prints it whole]`;
}

/** `replay diff --as-json` (docs/cli/replay.md). */
export const DIFF_DOCS: CommandDocs = {
  exits: { 0: "the runs' journals do not diverge", 1: "they diverge (the first divergent event is reported)", 3: "no such run, or a journal that cannot be read" },
  json: [
    jsonDoc({ example: "bernstein replay diff $RUN latest" }, [
      ["ok", "boolean", "The runs do not diverge"],
      ["error?", "\"divergence\"", "They do"],
      ["detail?", "string", "The divergence's reason"],
      ["log", "string", "The log compared (journal.jsonl)"],
      ["diverged", "boolean", "Some event differs, or one run has more events"],
      ["index", "number | null", "0-based index of the first divergent event"],
      ["reason", "string | null", "Why it diverges, in words"],
      ["reason_code", "string | null", "The same, as a code"],
      ["a_event", "object | null", "The first run's event at index"],
      ["b_event", "object | null", "The second run's event at index"],
      ["fields_changed", "string[]", "Fields that differ there"],
      ["ignored_fields", "string[]", "Fields left out of the comparison (--ignore, the default ignores)"],
      ["aligned_fields", "string[]", "Fields compared by order of appearance (agent ids)"],
      ["rules_applied", "string[]", "The ignore rules that left something out"],
    ]),
  ],
};
