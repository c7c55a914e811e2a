import type { BigIntStats } from "node:fs";

/** A run as discovery finds it: its id, directory and journal path (types only: importing this loads nothing). */
export interface RunRef {
  runId: string;
  runDir: string;
  journal: string;
}

export interface FoundRun extends RunRef {
  /** stat of the journal (followed when it is a contained symlink), with ns mtimes. */
  stat: BigIntStats;
}
