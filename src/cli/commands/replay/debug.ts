import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { debugSingleRun, debugTwoRuns } from "../../../debug/debug.ts";
import { pyRepr } from "../../../pyjson/python.ts";
import type { PyValue } from "../../../pyjson/types.ts";
import { printJson, printLines } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { parseCount, pyBool, refuseInapplicableFlags } from "./flags.ts";

const USAGE = "Usage: bernstein replay debug <RUN> [--fork-from N] [--sign KEY] OR bernstein replay debug <LEFT> <RIGHT>";

/** `bernstein replay debug <RUN> | <LEFT> <RIGHT>` (spec §6.1). */
export async function runDebug(ctx: ReplayContext): Promise<number> {
  refuseInapplicableFlags(ctx, "debug", REPLAY_VERBS.debug!.flags);
  const ids = ctx.positionals;
  if (ids.length !== 1 && ids.length !== 2) throw new UsageError(USAGE);
  const base = {
    sddDir: ctx.sddDir,
    limit: ctx.args.limit === undefined ? undefined : parseCount(ctx.args.limit, "limit"),
    full: ctx.args.full === true,
    jumpToFailure: ctx.args["jump-to-failure"] === true,
    allowEmpty: ctx.args["allow-empty"] === true,
  };
  if (ids.length === 2) {
    if (ctx.args["fork-from"] !== undefined) throw new UsageError("--fork-from applies to single-run debug only.", "flag_not_applicable");
    if (ctx.args.sign !== undefined) throw new UsageError("--sign applies to single-run debug only.", "flag_not_applicable");
    const d = await debugTwoRuns(ids[0]!, ids[1]!, base);
    if (ctx.json) await printJson({ ok: !d.diverged, ...(d.diverged ? { error: "divergence", detail: d.divergence!.get("reason") } : {}), ...d });
    else if (!d.diverged) await printLines("No divergence; chains match end-to-end.", `diff artifact: ${d.artifact_path} (${d.diff_hash.slice(0, 16)}...)`);
    else {
      const div = d.divergence!;
      const lines = [`Divergence at step ${pyRepr(div.get("seq"))}: ${div.get("reason")}`];
      const lv = div.get("left_values") as Map<string, PyValue>;
      const rv = div.get("right_values") as Map<string, PyValue>;
      for (const f of div.get("fields_changed") as string[]) {
        const key = f === "length" ? "steps" : f;
        lines.push(`  ${f}:`, `    left:  ${pyRepr(lv.get(key))}`, `    right: ${pyRepr(rv.get(key))}`);
      }
      lines.push(`diff artifact: ${d.artifact_path} (${d.diff_hash})`);
      await printLines(...lines);
    }
    return d.diverged ? 1 : 0;
  }
  const forkFrom = ctx.args["fork-from"] === undefined ? undefined : parseCount(ctx.args["fork-from"], "fork-from");
  const r = await debugSingleRun(ids[0]!, { ...base, forkFrom, signingKeyPath: ctx.args.sign });
  if (ctx.json) {
    await printJson({ ok: r.verified, ...(r.verified ? {} : { error: "chain_broken", detail: r.errors[0] ?? "the step journal does not verify" }), ...r });
    return r.verified ? 0 : 1;
  }
  if (!r.verified) {
    await printLines(
      `Chain refused for ${r.run}: tampered / does not verify.`,
      ...(r.seq !== null ? [`Divergence at step ${r.seq} (field: ${r.first_divergent_field})`, `expected: ${r.expected_hash}`, `actual:   ${r.actual_hash}`] : []),
      ...r.errors.map((e) => `  - ${e}`),
    );
    return 1;
  }
  if (r.steps === 0) {
    await printLines(`Journal for ${r.run} is empty.`);
    return 0;
  }
  await printLines(
    `Replay debug for ${r.run}`,
    `head_hash: ${r.head_hash}`,
    `steps: ${r.steps}`,
    `Debug receipt -> ${r.receipt!.path} (signed=${pyBool(r.receipt!.signed)})`,
    `Verify offline with: bernstein replay verify ${r.receipt!.path}`,
    ...(r.fork ? [`Forked at step ${r.fork.from_step} -> ${r.fork.fork_journal} (anchor ${r.fork.parent_step_hash.slice(0, 16)}...)`] : []),
  );
  return 0;
}

/** `replay debug --as-json`: one agent, or two compared (docs/cli/replay.md). */
export const DEBUG_DOCS: CommandDocs = {
  json: [
    jsonDoc({ when: "for one agent", example: "bernstein replay debug $AGENT" }, [
      ["ok", "boolean", "The step journal verifies"],
      ["error?", "\"chain_broken\"", "It does not"],
      ["detail?", "string", "The first finding"],
      ["mode", "\"single-run\"", "One agent"],
      ["run", "string", "The agent id"],
      ["verified", "boolean", "The same as ok (upstream's key)"],
      ["head_hash?", "string", "Verified: the step journal's head"],
      ["steps?", "number", "Verified: its steps"],
      ["receipt?", "object | null", "Verified: the debug receipt written {path, head_hash, steps, signed}"],
      ["projection?", "object[]", "Verified: the steps, projected"],
      ["fork?", "object", "--fork-from N: the forked journal"],
      ["errors?", "string[]", "Not verified: every finding"],
      ["seq?", "number | null", "Not verified: the first step that does not check out"],
      ["first_divergent_field?", "string | null", "Not verified: the field that breaks there"],
      ["expected_hash?", "string | null", "Not verified: the hash it should carry"],
      ["actual_hash?", "string | null", "Not verified: the hash it carries"],
      ["jump_to_seq?", "number | null", "--jump-to-failure: the step to jump to"],
    ]),
    jsonDoc({ when: "for two agents", example: "bernstein replay debug $AGENT $AGENT2" }, [
      ["ok", "boolean", "The step journals do not diverge"],
      ["error?", "\"divergence\"", "They do"],
      ["detail?", "string", "The divergence's reason"],
      ["mode", "\"two-run\"", "Two agents compared"],
      ["left", "string", "The first agent id"],
      ["right", "string", "The second"],
      ["artifact_path", "string", "The diff artifact written"],
      ["diff_hash", "string", "Its hash"],
      ["diverged", "boolean", "Some step differs"],
      ["divergence", "object | null", "The first divergent step: seq, reason, fields_changed, left_values, right_values"],
      ["steps", "object[]", "The steps side by side"],
      ["jump_to_seq?", "number | null", "--jump-to-failure: the step to jump to"],
    ]),
  ],
};
