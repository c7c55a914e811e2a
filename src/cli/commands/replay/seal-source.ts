import { existsSync } from "node:fs";
import { readSealFile, sealPathFor } from "../../../journal/seal.ts";
import type { JournalSeal } from "../../../journal/verify.ts";
import type { RunRef } from "../../../replay/discovery.ts";
import type { ReplayContext } from "./context.ts";

/**
 * Which seal a run-journal operation compares against: `--seal F` when
 * given (it must be readable: a check the user asked for never silently
 * degrades to "no seal"), else `<run_dir>/seal.json` when it exists.
 */
export interface SealSource {
  seal: JournalSeal | null;
  /** Path the seal came from, or null when there is none. */
  path: string | null;
  /** True when the seal was named with `--seal`. */
  explicit: boolean;
}

export function sealFor(ctx: ReplayContext, run: RunRef): SealSource {
  const explicit = ctx.args.seal;
  if (explicit !== undefined) return { seal: readSealFile(explicit), path: explicit, explicit: true };
  const path = sealPathFor(ctx.sddDir, run.runId);
  if (!existsSync(path)) return { seal: null, path: null, explicit: false };
  return { seal: readSealFile(path), path, explicit: false };
}
