import { InputError, UsageError } from "../../../errors/index.ts";
import { checkInput } from "../../../fsutil/input.ts";
import { resolveJournalTarget } from "../../../journal/target.ts";
import { readSealFile } from "../../../journal/seal.ts";
import type { FastVerifyResult, JournalSeal } from "../../../journal/model.ts";
import { paint } from "../../../render/ansi.ts";
import { defineCliCommand } from "../../command.ts";
import { fastVerifyNotes, parseMaxRowBytes, parseThreads, unauthenticatedLine } from "../../fast-verify.ts";
import { ciArgs, ciModeOf } from "../../ci-flags.ts";
import { finishVerify, MULTI_VERDICT_FIELDS, verifyEach, type InputVerdict } from "../../ci-report.ts";
import { log } from "../../log.ts";
import { journalVerdict } from "../../verdicts.ts";
import { keyArgs, minSignaturesFrom } from "../../tlog-flags.ts";
import { fileIdentity, isNoteFile } from "../../../tlog/sniff.ts";
import type { NoteSealVerdict } from "../../../tlog/flows.ts";
import type { TreeRequest } from "../../../journal/fast/subtrees.ts";
import { spineReportIfAny, spineJson, spineLines } from "../../../lineage/report.ts";
import { JOURNAL_VERIFY_FIELDS, journalVerifyJson } from "../../../journal/verdict.ts";
import type { SignedHeadsCheck } from "../../../journal/verify-run.ts";
import { basename, dirname } from "node:path";
import { allowEmptyArgs, runsDirArgs } from "../../args.ts";
import { isRemotePath } from "../../../storage/ref.ts";
import { MAX_REMOTE_THREADS } from "../../../journal/fast/engine.ts";
import { applyStorageFlags, storageArgs } from "../../storage-flags.ts";

const USAGE =
  "usage: bernstein journal verify <FILE|RUN_ID|-|s3://BUCKET/KEY|https://URL>... [--seal FILE] [--s3-endpoint URL] [--s3-region REGION] [--s3-deadline S] [--s3-min-rate RATE/WINDOW] [--sdd-dir DIR] [--threads N] [--links-only] [--max-row-bytes SIZE] [--allow-empty] [--format text|github] [--junit FILE]";

function verdictLines(r: FastVerifyResult, sealSource: string | null, reportPath: string | null): string[] {
  const identity =
    r.identity === "unverifiable" ? "identity=unverifiable (no seal)" : `identity=${r.identity} (seal ${sealSource ?? "in the lineage spine"})`;
  const tail = `coverage=${r.coverage}; ${identity}`;
  const lines: string[] = [];
  if (r.chain_consistent) {
    const style = r.ok ? "green" : "yellow";
    const what = r.payloads_checked ? "chain intact" : "links intact (payloads NOT checked)";
    lines.push(paint(style, `${what}: ${r.count} events, head ${r.head || "(empty)"}; ${tail}`));
  } else {
    lines.push(
      paint("bold red", `DIVERGENCE at step ${r.divergent_index}: expected ${r.expected_hash ?? "(not computable)"} actual ${r.actual_hash || "(empty)"}`),
      `${r.count} events, head of the verified prefix ${r.head || "(empty)"}; ${tail}`,
    );
  }
  for (const e of r.errors) lines.push(`  ${paint("red", "error:")} ${e}`);
  lines.push(paint("dim", unauthenticatedLine(r)));
  if (reportPath) lines.push(`Divergence report written to: ${reportPath}`);
  for (const note of fastVerifyNotes(r)) lines.push(paint("dim", note));
  return lines;
}

export default defineCliCommand({
  docs: {
    exits: { 0: "every journal verified: chain intact, coverage complete, seal (if any) matches", 1: "a chain break, partial coverage, a seal mismatch, or a fork since --since", 3: "no such run or journal file, or it holds no journal row" },
    json: [
      { fields: JOURNAL_VERIFY_FIELDS, example: "bernstein journal verify $RUN" },
      { when: "for more than one TARGET", fields: MULTI_VERDICT_FIELDS, example: "bernstein journal verify $RUN .sdd/runs/$RUN/journal.jsonl" },
    ],
  },
  meta: {
    name: "verify",
    description:
      "Verify a run journal's Merkle chain, coverage and seal identity (exit 0 ok, 1 negative verdict, 2 usage, 3 unreadable)",
  },
  args: {
    target: { type: "positional", required: false, description: "Journal file path(s), run id(s) under <sdd-dir>/runs, or - (standard input); one verdict each" },
    seal: {
      type: "string",
      description: "Seal file {\"head\", \"event_count\"} to check identity against (default: the seal.json beside journal.jsonl)",
    },
    ...runsDirArgs,
    threads: { type: "string", description: "Worker threads (default: available cores; 1 = no workers)" },
    "links-only": {
      type: "boolean",
      description: "Check only prev_hash links and hash format, without re-hashing payloads (a quick pass)",
    },
    "max-row-bytes": {
      type: "string",
      description: "Longest row verified: bytes, or with a K, M or G suffix (default 256M; a row costs about twice its size in memory); a longer line is row_too_large (exit 3)",
    },
    since: { type: "string", description: "An older seal.note or checkpoint: prove the journal only grew from it (consistency: extends | forked | truncated)" },
    remember: { type: "boolean", description: "Keep the signed tree head as the last verified one of its origin; refuse one not consistent with it" },
    ...allowEmptyArgs,
    ...keyArgs,
    ...ciArgs,
    ...storageArgs,
  },
  async run({ args, json, rawArgs }) {
    const words = args._.map(String);
    if (words.length === 0) throw new UsageError(USAGE);
    if (args.seal !== undefined && words.length > 1) {
      throw new UsageError(`--seal names one journal's seal, but ${words.length} journals were given`, "flag_not_applicable", { flags: ["--seal"] });
    }
    const mode = ciModeOf(args, json);
    const threads = parseThreads(args.threads);
    const maxRowBytes = parseMaxRowBytes(args["max-row-bytes"]);
    applyStorageFlags(args);
    const notes: NoteArgs = {
      since: args.since,
      remember: Boolean(args.remember),
      rawArgs,
      keysGiven: args["public-key"] !== undefined || args.vkey !== undefined || args["trusted-key"] !== undefined,
      minSignatures: minSignaturesFrom(args["min-signatures"]),
    };
    if ((notes.since || notes.remember) && words.length > 1) {
      throw new UsageError("--since and --remember name one journal's tree heads", "flag_not_applicable", { flags: ["--since", "--remember"] });
    }
    const reports = await verifyEach("journal", words, (word) => verifyOne(word, { ...args, maxRowBytes }, threads, json, notes), mode.stdinName);
    return finishVerify(reports, { command: "journal verify", json, mode });
  },
});

interface NoteArgs {
  since?: string;
  remember: boolean;
  /** The keys are loaded (node:crypto) only when a signed tree head is to be checked. */
  rawArgs: string[];
  keysGiven: boolean;
  minSignatures: number;
}

interface VerifyArgs {
  seal?: string;
  "sdd-dir"?: string;
  "links-only"?: boolean;
  "allow-empty"?: boolean;
  maxRowBytes?: number;
}

/** One journal's verdict (a run id picks up its seal.json); missing or unreadable input throws. */
async function verifyOne(word: string, args: VerifyArgs, threads: number | undefined, json: boolean, noteArgs: NoteArgs): Promise<InputVerdict> {
    const target = resolveJournalTarget(word, args["sdd-dir"] ?? ".sdd");
    // A signed seal note or checkpoint given as --seal is checked after the chain (signature, count, head, root).
    const noteSeal = args.seal !== undefined && isNoteFile(args.seal) ? args.seal : null;
    const sealPath = noteSeal ? null : (args.seal ?? target.defaultSealPath);
    if (noteArgs.keysGiven && !noteSeal && !noteArgs.since) {
      // A key given means a signature required: seal.json carries none, so the key could check nothing.
      throw new UsageError("--public-key/--vkey check a signed seal note or checkpoint (--seal NOTE or --since OLD); a seal.json is unsigned", "flag_not_applicable", {
        flags: ["--public-key", "--vkey", "--trusted-key"],
      });
    }
    const seal: JournalSeal | null = sealPath ? readSealFile(sealPath) : null;
    const remote = isRemotePath(target.path);
    // Checked before any read: a FIFO, device or directory is refused (input_not_regular_file), never waited on.
    // A remote object is stat'ed by the verify itself, inside its signal guard and without blocking this
    // thread (a missing one is s3_not_found there): a slow endpoint must not hold off SIGINT/SIGTERM.
    const present = remote || checkInput(target.path, { what: "journal" }) !== "missing";
    if (!seal && !present) {
      if (target.byRunId) {
        throw new InputError("journal_missing", `no journal for run ${target.runId}: ${target.path}`, {
          run_id: target.runId,
          path: target.path,
        });
      }
      throw new InputError("journal_unreadable", `journal not found: ${target.path}`, { path: target.path });
    }
    if (target.stdin && threads !== undefined && threads > 1) log.info("--threads ignored: standard input is verified as one stream, in one thread");
    if (remote && threads !== undefined && threads > MAX_REMOTE_THREADS) log.info(`--threads ${threads} capped at ${MAX_REMOTE_THREADS}: a remote object is read by at most ${MAX_REMOTE_THREADS} ranged GETs at once`);
    if (remote && (noteSeal || noteArgs.since)) throw new UsageError("a signed seal or --since needs the journal as a local file", "flag_not_applicable");
    // The signed tree heads reuse this verify: the file's identity before it brackets both passes.
    const identityBefore = (noteSeal || noteArgs.since) && !target.stdin && present ? fileIdentity(target.path) : null;
    // ... and the verify builds the subtrees they need, so the chain is read once.
    const tree = identityBefore && !args["links-only"] ? await noteTree(noteSeal, noteArgs.since) : undefined;
    const implicit = !args.seal && sealPath ? [paint("dim", `seal: ${sealPath} (the run's seal.json, beside the journal; --seal FILE names another)`)] : [];
    // A journal under <sdd>/runs/<run>/ may have a lineage spine under <sdd>/lineage/<run>/.
    const spineSdd = target.byRunId ? (args["sdd-dir"] ?? ".sdd") : basename(dirname(target.runDirPath)) === "runs" && !target.stdin && !remote ? dirname(dirname(target.runDirPath)) : null;
    return journalVerdict({
      command: "journal verify",
      json,
      path: target.path,
      runId: target.runId,
      seal,
      threads,
      linksOnly: Boolean(args["links-only"]),
      maxRowBytes: args.maxRowBytes,
      allowEmpty: Boolean(args["allow-empty"]),
      tree,
      // Best effort, as in Python: a read-only location must not turn a verdict into an error.
      reportDir: target.stdin || remote ? null : target.runDirPath,
      signedHeads: noteSeal || noteArgs.since ? signedHeads(target.path, target.stdin, noteSeal, noteArgs, identityBefore, tree) : undefined,
      spine: spineSdd === null ? undefined : (result) => spineReportIfAny(result, spineSdd, target.runId),
      render: ({ result, checks, reportPath }) => ({
        lines: () => [...verdictLines(result, sealPath ?? noteSeal, reportPath), ...spineLines(checks.spine), ...implicit, ...(checks.signedHeads ? noteLines(checks.signedHeads) : [])],
        doc: journalVerifyJson({ result, checks, runId: target.stdin ? null : target.runId, seal: sealPath ?? noteSeal, spine: spineJson(checks.spine) }),
      }),
    });
}

/** The Merkle subtrees the notes' tree sizes need, requested from the verify pass (undefined: they get a pass of their own). */
async function noteTree(noteSeal: string | null, since: string | undefined): Promise<TreeRequest | undefined> {
  const [{ noteCuts }, { treeRequest }] = await Promise.all([import("../../../tlog/flows.ts"), import("../../../tlog/leaves.ts")]);
  const cuts = noteCuts(noteSeal ?? undefined, since);
  return cuts === null ? undefined : treeRequest({ cuts });
}

/**
 * `--seal NOTE` / `--since OLD`: once the chain verified, the signed tree
 * heads are checked against it (the verdict folds them in: identity from
 * the signed seal; a fork or truncation since OLD makes it negative).
 */
function signedHeads(
  path: string,
  stdin: boolean,
  noteSeal: string | null,
  a: NoteArgs,
  identityBefore: string | null,
  tree: TreeRequest | undefined,
): SignedHeadsCheck<NoteSealVerdict> {
  return {
    sealNote: noteSeal !== null,
    admit: (result) => {
      if (stdin) throw new UsageError("a signed seal or --since needs the journal as a file, not standard input", "flag_not_applicable");
      if (!result.payloads_checked) throw new UsageError("--links-only does not recompute the event hashes a Merkle root is built from", "flag_not_applicable");
    },
    check: async (result) => {
      const verified = identityBefore ? { verdict: result, identityBefore, tree } : undefined;
      const [{ trustedKeysFrom }, { verifyJournalAgainstNotes }] = await Promise.all([import("../../tlog-args.ts"), import("../../../tlog/flows.ts")]);
      const trusted = trustedKeysFrom(a.rawArgs);
      return verifyJournalAgainstNotes(path, { sealNote: noteSeal ?? undefined, since: a.since, trusted, minSignatures: a.minSignatures, remember: a.remember, verified });
    },
  };
}

function noteLines(n: NoteSealVerdict): string[] {
  const lines: string[] = [`Merkle root ${n.root}`];
  if (n.seal_note) {
    const sig = n.signature?.signature === "valid" ? `signed by ${n.signature.signed_by.join(", ")}` : "signature NOT checked (no --public-key/--vkey given)";
    lines.push(`signed seal ${n.seal_note}: identity=${n.identity}; ${sig}`);
  }
  if (n.since) lines.push(`consistency with ${n.since} (${n.since_size} events): ${n.consistency}`);
  return lines;
}
