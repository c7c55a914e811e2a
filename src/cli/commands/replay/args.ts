import type { ArgsDef } from "citty";
import { ciArgs } from "../../ci-flags.ts";
import { allowEmptyArgs, sddDirArgs } from "../../args.ts";
import { storageArgs } from "../../storage-flags.ts";

/** `--html`'s flags that shape the timeline page (RUN_ID --html). */
const timelinePageArgs = {
  lanes: { type: "string", description: "--html: group the attempts' lanes by role (default), agent or model" },
  from: { type: "string", description: "--html: the first event shown in full: an event index or an ISO time (default the run's start)" },
  to: { type: "string", description: "--html: the last event shown in full: an event index or an ISO time, included (default the run's end)" },
  "max-events": { type: "string", description: "--html: list at most N events in full in the page (default 100000; the page's byte bound applies too)" },
  "max-bars": { type: "string", description: "--html: draw attempts one bar each up to N of them (default 5000); beyond it, curves per lane and bars for the window" },
} as const satisfies ArgsDef;

/** `replay debug`'s own flags. */
const debugArgs = {
  "fork-from": { type: "string", description: "debug: seed a fork journal <RUN>.fork-<N> with steps 0..N" },
  "jump-to-failure": { type: "boolean", description: "debug: name the failing (or first divergent) step as jump_to_seq" },
  full: { type: "boolean", description: "debug: show every step, not the first 200" },
} as const satisfies ArgsDef;

/** The task replay's flags (`replay <TASK_ID>`). */
const taskReplayArgs = {
  model: { type: "string", description: "task replay: model for the replayed task" },
  "extra-context": { type: "string", description: "task replay: hint appended to the description" },
  timeout: { type: "string", description: "task replay: seconds to wait for completion" },
} as const satisfies ArgsDef;

/**
 * `replay` is one command whose first positional selects the verb (as in the
 * Python CLI), so it declares the union of the verbs' flags; each handler
 * refuses the flags that do not apply to it. The flags that serve one verb
 * alone are declared above by verb and spread in here at their place in the
 * help's order.
 */
export const replayArgs = {
  ...sddDirArgs,
  limit: { type: "string", description: "Show at most N events (RUN_ID: reads only those) / runs (list) / entries" },
  verify: { type: "boolean", description: "RUN_ID: verify the journal's chain, coverage and seal (exit 1 on divergence)" },
  "from-step": { type: "string", description: "RUN_ID: project the state through step N (events, head_hash, step_count)" },
  seal: { type: "string", description: "RUN_ID --verify / repair: seal file {head, event_count} (default <run_dir>/seal.json)" },
  follow: { type: "boolean", description: "RUN_ID: print the run's events as they are appended, verifying the chain as it grows; ends with the run (or Ctrl-C) and the verdict" },
  html: { type: "boolean", description: "RUN_ID: write the run's timeline as one self-contained HTML page to OUT (default <run_dir>/timeline.html; - for stdout) after verifying the journal" },
  ...timelinePageArgs,
  "with-previous": { type: "boolean", description: "RUN_ID: also show the runs this resumed run continues, oldest first" },
  threads: { type: "string", description: "Threads to verify with (default: cores; --html: 1, more is faster and takes more memory)" },
  "links-only": { type: "boolean", description: "--verify checks prev_hash linkage only" },
  head: { type: "string", description: "verify: expected head hash of the receipt" },
  "public-key": { type: "string", description: "verify: require a valid Ed25519 signature by this key over the stored manifest (PEM SPKI or raw 32 bytes)" },
  sign: { type: "string", description: "export/publish: Ed25519 private key (PEM PKCS#8 or raw 32 bytes)" },
  redact: { type: "string", description: "publish: extra field to redact (model, tool_call); repeatable or comma-separated" },
  force: { type: "boolean", description: "export/publish/--html: replace an existing OUT file" },
  "yes-i-want-to-publish": { type: "boolean", description: "publish: confirm writing a redacted receipt" },
  ...debugArgs,
  ...taskReplayArgs,
  ignore: { type: "string", description: "diff: leave this field out of the comparison (dotted path into nested objects; repeatable)" },
  // Only its negation means something: --no-default-ignores.
  "default-ignores": { type: "boolean", description: "diff: --no-default-ignores compares every field as recorded (run_id, git_sha, agent ids, …)" },
  // <RUN_ID> --verify, diff, diff-journal: accept an empty journal as 0 events
  ...allowEmptyArgs,
  // verify and <RUN_ID> --verify: --format text|github, --junit FILE
  ...ciArgs,
  // verify, diff-journal, export, publish: s3:// inputs and outputs
  ...storageArgs,
} as const satisfies ArgsDef;
