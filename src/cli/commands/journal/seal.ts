import { jsonDoc } from "../../../json-fields.ts";
import { readFileSync } from "node:fs";
import { UsageError } from "../../../errors/index.ts";
import { sealRun } from "../../../lineage/seal-run.ts";
import { defineCliCommand } from "../../command.ts";
import { withInterrupts } from "../../interrupt.ts";
import { printJson, printLines } from "../../output.ts";
import { signArgs } from "../../tlog-flags.ts";
import { optionalRunIdArgs, runsDirArgs } from "../../args.ts";
import { applyStorageFlags, storageArgs } from "../../storage-flags.ts";

const USAGE = "usage: bernstein journal seal <RUN_ID> [--sign KEY [--origin O] [--key-name N]] [--no-spine] [--out s3://BUCKET/KEY] [--sdd-dir DIR]";

export default defineCliCommand({
  docs: {
    exits: { 0: "sealed (or already sealed with this head)", 2: "refused (seal_refused): the journal does not verify, or an existing seal commits to another head", 3: "no such run" },
    json: [
      jsonDoc({ example: "bernstein journal seal $RUN" }, [
        ["ok", "true", "The run is sealed"],
        ["run_id", "string", "The run"],
        ["path", "string", "Its seal.json"],
        ["event_count", "number", "Events sealed"],
        ["head", "string", "The head sealed"],
        ["already_sealed", "boolean", "It was sealed before, with this head"],
        ["spine", "object | null", "The lineage spine entry appended: {path, entry_hash, count, appended}"],
        ["spine_skipped?", "string", "Why no spine entry was appended (no_audit_key …)"],
        ["out?", "string", "--out: where a copy of the seal went"],
        ["uploaded?", "boolean", "--out: the copy was uploaded"],
      ]),
      jsonDoc({ when: "with --sign KEY", example: "bernstein journal seal $RUN --sign keys/bernstein-receipt.key" }, [
        ["ok", "true", "The run is sealed and its seal note signed"],
        ["run_id", "string", "The run"],
        ["event_count", "number", "Events sealed"],
        ["head", "string", "The head sealed"],
        ["root", "string", "The Merkle root (base64) of the journal's tree"],
        ["origin", "string", "The log origin line"],
        ["seal", "string", "The seal.json"],
        ["note", "string", "The signed seal.note"],
        ["already_sealed", "boolean", "It was sealed before"],
        ["key_name", "string", "The signer's name"],
        ["verifier_key", "string", "The C2SP verifier key (name+id+base64) that checks the note"],
      ]),
    ],
  },
  meta: {
    name: "seal",
    description:
      "Seal a run journal: verify it, then commit its head and event count to <run_dir>/seal.json (used by 'journal verify') and, with an audit key configured, its head to the run's lineage spine (used by upstream's identity check)",
  },
  args: {
    ...optionalRunIdArgs,
    ...signArgs,
    ...runsDirArgs,
    out: { type: "string", description: "Also put a copy of seal.json at s3://BUCKET/KEY (never replacing a different one)" },
    "no-spine": { type: "boolean", description: "Write seal.json only, not the lineage-spine entry (which needs an audit key: BERNSTEIN_AUDIT_KEY_PATH or the default key file)" },
    ...storageArgs,
  },
  async run({ args, json, rawArgs }) {
    const words = args._.map(String);
    if (words.length !== 1) throw new UsageError(USAGE);
    const runId = words[0]!;
    applyStorageFlags(args);
    if (args.out !== undefined) {
      if (args.sign !== undefined) throw new UsageError("--out copies an unsigned seal.json; a signed seal is published with 'seal publish'", "flag_not_applicable", { flags: ["--out"] });
      // Checked before the journal is read: a bad URL must not cost a verify.
      (await import("../../../storage/upload.ts")).outputRef(args.out);
    }
    if (args.sign !== undefined) {
      // Loaded only for a signed seal: the keys and node:crypto cost start-up a plain seal does not need.
      const [{ signersFrom }, { defaultOrigin, sealJournalSigned }] = await Promise.all([import("../../tlog-args.ts"), import("../../../tlog/flows.ts")]);
      const origin = args.origin ?? defaultOrigin(runId);
      const signers = signersFrom(rawArgs, origin, args["key-name"]);
      if (signers.length !== 1) throw new UsageError("journal seal signs with one --sign key (witnesses cosign checkpoints)");
      const r = await withInterrupts({ json, command: "journal seal", facts: () => ({ run_id: runId, sealed: false }), doing: () => "verifying the journal before sealing" }, () =>
        sealJournalSigned(args["sdd-dir"] ?? ".sdd", runId, signers[0]!, origin),
      );
      if (json) await printJson(r);
      else {
        await printLines(
          `${r.already_sealed ? "already sealed" : "sealed"} run ${runId}: ${r.event_count} events, head ${r.head}, root ${r.root}`,
          `seal: ${r.seal}`,
          `signed seal note: ${r.note} (verifier key ${r.verifier_key})`,
        );
      }
      return 0;
    }
    if (args.origin !== undefined || args["key-name"] !== undefined) throw new UsageError("--origin and --key-name need --sign KEY");
    const sealed = await withInterrupts({ json, command: "journal seal", facts: () => ({ run_id: runId, sealed: false }), doing: () => "verifying the journal before sealing" }, () =>
      // citty reads `--no-spine` as the negation of `spine`
      sealRun(args["sdd-dir"] ?? ".sdd", runId, { spine: !args["no-spine"] && (args as Record<string, unknown>).spine !== false }),
    );
    const out = sealed.seal;
    const spine = sealed.spine;
    const copy = args.out !== undefined ? await (await import("../../../storage/upload.ts")).putOnce(args.out, readFileSync(out.path)) : null;
    if (json) {
      await printJson({
        ok: true,
        run_id: runId,
        path: out.path,
        event_count: out.seal.event_count,
        head: out.seal.head,
        already_sealed: out.alreadySealed,
        spine: spine === null ? null : { path: spine.path, entry_hash: spine.entry_hash, count: spine.count, appended: spine.appended },
        ...(sealed.spine_skipped ? { spine_skipped: sealed.spine_skipped } : {}),
        ...(copy ? { out: args.out, uploaded: copy.uploaded } : {}),
      });
    } else {
      await printLines(
        `${out.alreadySealed ? "already sealed" : "sealed"} run ${runId}: ${out.seal.event_count} events, head ${out.seal.head}`,
        `seal: ${out.path}`,
        spine !== null
          ? `lineage spine: ${spine.path} (${spine.appended ? "entry appended" : "already sealed this head"}, ${spine.entry_hash})`
          : sealed.spine_skipped === "no_audit_key"
            ? "lineage spine: not written (no audit key: set BERNSTEIN_AUDIT_KEY_PATH, or create ~/.local/state/bernstein/audit.key)"
            : "lineage spine: not written (--no-spine)",
        ...(copy ? [`copy: ${args.out}${copy.uploaded ? "" : " (already there, unchanged)"}`] : []),
      );
    }
    return 0;
  },
});
