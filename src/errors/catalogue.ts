/**
 * Every error code the tool can print, named once with its exit code and a
 * one-line meaning. `BernsteinError` only accepts a code from this table
 * (the type checker refuses any other string), a test checks that each
 * construction site's exit class agrees with the entry, and docs/errors.md's
 * error table is generated from it (`bun scripts/gen-readme-errors.ts`).
 * Adding a code is adding one line here.
 */
export const ExitCode = {
  /** success / verified */
  OK: 0,
  /** the verdict is negative: chain broken, divergence, mismatch */
  NEGATIVE: 1,
  /** usage error or refusal: bad flags, confirmation missing, a second writer */
  USAGE: 2,
  /** input that is missing, unreadable, or not what it claims to be */
  INPUT: 3,
  /** an internal error (a bug) or output that could not be written */
  INTERNAL: 70,
  /** interrupted by SIGINT (128 + 2) */
  SIGINT: 130,
  /** interrupted by SIGTERM (128 + 15) */
  SIGTERM: 143,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** What each exit code means (docs/errors.md's exit-code table and the README's summary are generated from this). */
export const EXIT_MEANINGS: readonly [code: string, meaning: string][] = [
  ["0", "success: the whole input was read and every requested check passed"],
  ["1", "a negative verdict: chain broken, coverage partial, seal mismatch, divergence, a receipt or signature that does not verify, a run with failed or open tasks; also a task server that cannot be reached"],
  ["2", "usage error or refusal: bad flags, confirmation missing, a second writer, a repair that would destroy data"],
  ["3", "missing input of any kind, or input that cannot be read as what it claims to be: no such run, agent journal, receipt, key, seal, plan or config; a malformed receipt, seal, config or plan; a FIFO or device given as a file; an empty input (without --allow-empty) or one with no journal row in it"],
  ["70", "an internal error (a bug: rerun with --debug and report it), or standard output that could not be written"],
  ["130 / 143", "interrupted by SIGINT / SIGTERM (a `run` saves its session first)"],
];

type Entry = readonly [exit: ExitCodeValue, meaning: string];

// One line per code, grouped by exit code; keep each group sorted by name.
export const ERROR_CATALOGUE = {
  // 1: a negative verdict
  anchor_invalid: [1, "`seal verify`: the RFC 3161 token does not verify (imprint, CMS signature, certificate chain, key usage)"],
  anchor_mismatched: [1, "`seal verify`: the anchor witnesses another head than the journal recomputes to"],
  anchor_unverifiable: [1, "`seal verify` without --rfc3161-trusted-tsa-bundle: the head matches but the timestamp chain was not checked"],
  body_too_large: [1, "task server: the request body is over its size limit"],
  budget_exhausted: [1, "`bernstein run` reached its budget before all tasks were done"],
  chain_broken: [1, "a hash or a link of the chain does not check out (journal: first divergent step; receipt: a journal line)"],
  chain_verification_failed: [1, "an agent step journal does not verify, so it is not exported or published"],
  consistency_forked: [1, "the journal or checkpoint is not an extension of the older tree head: the log was rewritten (a fork)"],
  consistency_truncated: [1, "the journal or checkpoint holds fewer events than the older tree head it is checked against"],
  consistency_unproven: [1, "--remember: the remembered checkpoint of this origin is not part of what was proven"],
  coverage_partial: [1, "the chain is consistent but some physical lines could not be read (discarded)"],
  divergence: [1, "two journals differ: `replay diff` / `diff-journal` report the first differing step"],
  export_failed: [1, "a receipt could not be exported"],
  head_mismatch: [1, "a receipt whose walked head differs from --head"],
  inclusion_failed: [1, "an inclusion proof that does not place the row under the checkpoint's root"],
  invalid_json: [1, "task server: the request body is not JSON"],
  lease_expired: [1, "task server: the claim's lease ran out and its task went back to the queue (409)"],
  manifest_mismatch: [1, "a receipt whose manifest head or step count differs from its journal"],
  method_not_allowed: [1, "task server: the HTTP method is not allowed on this endpoint"],
  no_session: [1, "there is no saved session to show"],
  not_found: [1, "task server: no such endpoint"],
  origin_mismatch: [1, "two checkpoints or notes of different origins (different logs)"],
  proof_mismatch: [1, "a proof for other tree sizes than the checkpoints it is checked with"],
  provider_state_mutation: [1, "`replay <RUN> --verify`: a provider_state_mutation row is flagged or its content address does not recompute"],
  publish_failed: [1, "a redacted receipt could not be published"],
  receipt_ambiguous: [1, "a receipt tar that `tar -x` or Python's tarfile would extract differently from what is verified: a member named twice (after normalising `./`, `//`, long names) or spelled otherwise than the format names it, a link, device or directory where a file belongs, or a member the format does not define; the detail names it"],
  replay_cancelled: [1, "`replay <TASK_ID>`: the replay task was cancelled on the server before it finished"],
  replay_failed: [1, "`replay <TASK_ID>`: the replay task ended failed"],
  replay_task_lost: [1, "a replayed task vanished from the task server before it finished"],
  replay_timeout: [1, "`replay <TASK_ID>`: the replay task did not finish within --timeout (cancelled on the server when it could be)"],
  row_mismatch: [1, "a row whose content does not hash to its stored event_hash at the proven index"],
  run_incomplete: [1, "`bernstein run` stopped with tasks still open"],
  run_receipt_check_failed: [1, "a run receipt Python's rules accept but a check of the full list fails (audit prev_hmac linkage, a count that is not a JSON integer)"],
  run_receipt_tampered: [1, "a run receipt whose embedded journal, spine, audit range, subject binding or signature does not verify (status `tampered`)"],
  seal_mismatch: [1, "the journal disagrees with its seal (head or event count), or the sealed journal is gone"],
  server_error: [1, "the task server answered with an error status and no error document"],
  server_unreachable: [1, "the task server cannot be reached"],
  signature_invalid: [1, "a signature does not verify or is not canonical Base64 of its exact length, or a run receipt's alg / key_id / kid does not belong to its key"],
  signature_missing: [1, "--public-key given: the receipt carries no manifest.sig"],
  stop_refused: [1, "the server refused or failed the stop request"],
  stop_timeout: [1, "agents did not finish within the stop timeout"],
  task_not_found: [1, "no task with this id on the task server"],
  tasks_failed: [1, "`bernstein run` ended with tasks that failed for good"],
  torn_tail: [1, "the chain is consistent but the journal ends in a torn write (an interrupted append): `replay repair` removes it"],
  tsa_failed: [1, "`seal publish --tsa-url`: the time-stamping authority did not answer, refused, or answered without the request's nonce"],
  verify_failed: [1, "several inputs were verified and at least one did not pass (exit: the worst of them)"],
  // 2: usage error or refusal
  agent_api_key_missing: [2, "agent.api_key_env names an environment variable that is not set"],
  anchor_refused: [2, "`seal publish` refused: the journal does not verify, disagrees with its seal, or the token witnesses another head"],
  agent_cli_missing: [2, "the configured agent CLI is not on PATH"],
  agent_journal_closed: [2, "an append to an agent step journal after it was closed"],
  agent_journal_locked: [2, "another process holds the agent step journal's writer lock"],
  agent_script_not_executable: [2, "the script agent's file is not executable"],
  audit_key_insecure: [2, "the audit key file (BERNSTEIN_AUDIT_KEY_PATH) is readable by group or others: refused, as upstream does"],
  claim_mismatch: [2, "task server: a claimed task changed without its claim id (409)"],
  invalid_utf8: [2, "task server: a request body that is not valid UTF-8 (400)"],
  confirmation_required: [2, "`replay publish` without --yes-i-want-to-publish"],
  flag_not_applicable: [2, "a flag given to a command or verb that does not take it"],
  fork_failed: [2, "`replay debug --fork-from N`: N names no step of the journal, or the fork journal exists already"],
  illegal_transition: [2, "a task status change the task lifecycle does not allow"],
  invalid_agent_id: [2, "an agent id outside ^[A-Za-z0-9_.-]{1,64}$ or outside .sdd"],
  invalid_cost: [2, "a cost that is not a finite, non-negative number"],
  invalid_event: [2, "an event name or --data payload that cannot be recorded"],
  invalid_format: [2, "a --format that is not text or github, or github together with --as-json"],
  invalid_output_path: [2, "an output path that is empty, '.', '..' or ends in '/'"],
  invalid_payload: [2, "a `journal record` payload key that collides with the event or a chain field"],
  invalid_request: [2, "a task-server request body with unknown fields, wrong types or bad dependencies"],
  invalid_store: [2, "a --store / BERNSTEIN_STORE that is not a postgres:// URL"],
  invalid_run_id: [2, "a run id outside ^[A-Za-z0-9_.-]{1,64}$ or outside .sdd"],
  invalid_task_id: [2, "a task id outside ^[A-Za-z0-9_.-]{1,64}$"],
  invalid_threads: [2, "--threads outside 1..the maximum"],
  invalid_row_limit: [2, "a --max-row-bytes that is not a size from 1K to 4G"],
  isolation_unavailable: [2, "`isolation: worktree` in bernstein.yaml, but the project folder is not in a git work tree with a commit"],
  journal_closed: [2, "an append to a run journal after it was closed"],
  journal_corrupt: [2, "a journal with unreadable lines in the middle: refused for resuming"],
  journal_exists: [2, "a new journal would replace an existing one"],
  journal_locked: [2, "another process holds the run journal's writer lock"],
  spine_locked: [2, "another process is appending to the run's lineage spine"],
  journal_sealed: [2, "an append to a sealed run journal"],
  journal_torn_tail: [2, "a journal whose last line is a torn write: repair it first (`replay repair`)"],
  key_exists: [2, "`keys generate` would overwrite an existing key file"],
  listen_failed: [2, "the task server could not listen on the address"],
  nothing_to_do: [2, "the command was given nothing to act on"],
  output_exists: [2, "the output file exists and --force was not given"],
  output_forbidden: [2, "the output would replace a journal, something under .sdd/runs or .sdd/runtime/journal, a non-regular file, or a symlink to anything but a regular file (/dev/stdout, a link into /proc)"],
  port_in_use: [2, "the task server's port is taken"],
  repair_refused: [2, "`replay repair` refused: middle corruption or a seal that disagrees (nothing touched)"],
  run_receipt_refused: [2, "`verify run` refused to sign: a journal, spine or audit line that is not a usable object, or a chain that does not verify"],
  seal_refused: [2, "`journal seal` refused: the journal does not verify, or an existing seal commits to another head"],
  signing_key_missing: [2, "`verify run` was given no signing key (--signing-key-path, --signing-env-var or their environment variables), or both"],
  server_running: [2, "a task server is already running for this state directory"],
  storage_url_invalid: [2, "an s3:// or http(s):// URL, --s3-endpoint or --s3-region that cannot be used"],
  state_path_escapes: [2, "a write that would leave the state directory through a symlink inside it"],
  task_exists: [2, "a task with this id already exists"],
  unauthorized: [2, "task server: a missing or wrong bearer token"],
  unknown_target: [2, "a replay word that is no verb, run, agent journal or traced task"],
  usage: [2, "bad flags, a missing or extra argument, an unknown command"],
  // 3: missing, unreadable or malformed input
  anchor_malformed: [3, "a seal_anchor.json or --token file that cannot be read as an anchor record or RFC 3161 token"],
  anchor_not_found: [3, "`seal verify`: the run has no seal_anchor.json"],
  agent_journal_append_failed: [3, "a step could not be appended to an agent step journal"],
  agent_journal_corrupt: [3, "an agent step journal with unreadable lines"],
  agent_journal_missing: [3, "no step journal for this agent id"],
  agent_journal_unwritable: [3, "an agent step journal cannot be created or written"],
  agent_script_missing: [3, "the script agent's file does not exist"],
  audit_key_unreadable: [3, "an audit key file (BERNSTEIN_AUDIT_KEY_PATH, or the one `verify run` uses) that is missing, empty, or cannot be read or created"],
  config_invalid: [3, "bernstein.yaml has a value of the wrong type"],
  config_not_found: [3, "the --config file does not exist"],
  config_unreadable: [3, "bernstein.yaml cannot be read or parsed"],
  input_empty: [3, "an empty input (0 bytes or blank lines only): refused unless --allow-empty, never verified as ok (Python: an intact chain of 0 events)"],
  input_missing: [3, "an input file (note, checkpoint, proof, row) that does not exist"],
  input_not_regular_file: [3, "a path that is a FIFO, device, socket or directory (use - for standard input)"],
  input_unreadable: [3, "an input file that exists but cannot be read"],
  invalid_data: [3, "`journal record --data` is not a JSON object"],
  invalid_event_line: [3, "a `journal record` stdin line that is not a JSON object with an event"],
  journal_changed: [3, "the journal changed between the passes of a seal, checkpoint, proof or run receipt; retry with no writer active"],
  journal_missing: [3, "no journal for this run id"],
  journal_unreadable: [3, "a journal file that does not exist or cannot be read"],
  journal_write_failed: [3, "a row could not be written to the run journal"],
  no_runs: [3, "no run journals under .sdd/runs (for `latest`)"],
  not_a_journal: [3, "an input in which no line is a journal row (run journal: an object with event and event_hash; agent journal: a step with step_hash): refused, never ok or a match (Python: a match, or coverage partial)"],
  note_malformed: [3, "a file that is not a C2SP signed note, checkpoint or bernstein seal note"],
  plan_invalid: [3, "a plan file with missing or wrong-typed fields"],
  plan_not_found: [3, "the plan file does not exist"],
  plan_unreadable: [3, "the plan file cannot be read"],
  proof_malformed: [3, "a proof file that is not a bernstein consistency or inclusion proof"],
  public_key_unreadable: [3, "the --public-key file is missing, unreadable or not an Ed25519 public key"],
  receipt_malformed: [3, "a file that is not a receipt: not a tar, hostile members, no manifest or journal"],
  receipt_not_found: [3, "the receipt path does not exist"],
  receipt_unreadable: [3, "a receipt that exists but cannot be opened or read"],
  row_malformed: [3, "a row file that is not one JSON object"],
  row_too_deep: [3, "a step an agent journal's writer would write nested deeper than its readers take (1000 levels)"],
  row_too_large: [3, "a line, or the row journal record would write, longer than the row-size bound"],
  run_not_found: [3, "no run with this id"],
  run_receipt_malformed: [3, "a run receipt that cannot be checked (status `malformed`): not JSON, wrong type or schema, a missing block, an unusable key"],
  runs_unreadable: [3, "runs exist but none of them could be read"],
  s3_access_denied: [3, "object storage refused the credentials or the request (403, a bad signature, an unknown access key)"],
  s3_not_found: [3, "no such object or bucket in object storage (404)"],
  s3_request_failed: [3, "object storage answered with an error other than 403/404, or a body shorter than asked for"],
  s3_timeout: [3, "a remote object came too slowly: its whole-object deadline (--s3-deadline) or minimum transfer rate (--s3-min-rate) was missed"],
  s3_unreachable: [3, "the object-storage endpoint did not answer (connection refused, DNS, reset, timeout)"],
  seal_malformed: [3, "a seal file that is not {\"head\", \"event_count\"}"],
  seal_unreadable: [3, "a seal file that does not exist or cannot be read"],
  session_corrupt: [3, "session.json cannot be parsed"],
  store_unreachable: [3, "the --store database cannot be reached, or refused the login or the schema migration"],
  signing_key_unreadable: [3, "the --sign key is missing, unreadable or not an Ed25519 private key"],
  trace_not_found: [3, "no trace for this task id"],
  trace_without_snapshot: [3, "a trace that does not carry the task snapshot needed to replay it"],
  trust_store_corrupt: [3, "--remember: the remembered checkpoint of an origin (the trust-on-first-use store) is not a readable regular file holding that origin's signed note"],
  tsa_bundle_unreadable: [3, "the --rfc3161-trusted-tsa-bundle file cannot be read or holds no PEM certificate"],
  unknown_hash_profile: [3, "a journal row names a hash_profile this tool does not know"],
  // 70: internal or output failure
  internal_error: [70, "an unexpected internal error (a bug: rerun with --debug and report it)"],
  output_failed: [70, "standard output could not be written (ENOSPC, EIO, EBADF, or its reader took nothing in the second after a signal; EPIPE stays quiet)"],
  receipt_write_failed: [70, "a run receipt could not be written to its output path"],
  report_write_failed: [70, "a requested report (--junit, $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY) could not be written"],
  // 130 / 143: interrupted
  interrupted: [130, "ended by SIGINT (130) or SIGTERM (143); under --as-json the document names the signal"],
} as const satisfies Record<string, Entry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, code);
}

/** Exit code of a catalogued code. */
export function exitCodeOf(code: ErrorCode): ExitCodeValue {
  return ERROR_CATALOGUE[code][0];
}
