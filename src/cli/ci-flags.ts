import type { ArgsDef } from "citty";
import { UsageError } from "../errors/index.ts";

/**
 * `--format text|github` and `--junit FILE`, declared once for every verify
 * command (`journal verify`, `replay verify`, `replay <RUN_ID> --verify`).
 * Kept apart from ci-report.ts so that declaring them loads nothing else.
 */

export const ciArgs = {
  format: {
    type: "string",
    description: "text | github (annotations, step summary, outputs; default on GitHub Actions)",
  },
  junit: { type: "string", description: "Write a JUnit XML report (one testcase per input)" },
  "stdin-name": { type: "string", description: "Name the `-` (stdin) input has in annotations, summary and JUnit (default stdin)" },
} as const satisfies ArgsDef;

export interface CiMode {
  github: boolean;
  junit: string | null;
  /** What the reports call the `-` input (the CLI's stdin). */
  stdinName: string;
}

export function ciModeOf(args: { format?: string; junit?: string; "stdin-name"?: string }, json: boolean): CiMode {
  let github: boolean;
  if (args.format === undefined) github = !json && process.env.GITHUB_ACTIONS === "true";
  else if (args.format === "github" || args.format === "text") github = args.format === "github";
  else throw new UsageError(`--format must be text or github, got ${JSON.stringify(args.format)}`, "invalid_format", { format: args.format });
  if (github && json) {
    throw new UsageError("--format github and --as-json both choose what stdout holds; give one of them", "invalid_format", { format: "github" });
  }
  const junit = args.junit ?? null;
  if (junit !== null && (junit === "" || junit === "-")) throw new UsageError("--junit needs a file path (the report is written to a file, never stdout)");
  const stdinName = args["stdin-name"] ?? "stdin";
  if (stdinName.trim() === "" || /[\r\n]/.test(stdinName)) throw new UsageError("--stdin-name needs a non-empty one-line name");
  return { github, junit, stdinName };
}

