import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { parseObject, recordLines } from "../../../journal/record-lines.ts";
import { EventJournal, validateRecordInput } from "../../../journal/writer.ts";
import type { PyObject } from "../../../pyjson/types.ts";
import { defineCliCommand } from "../../command.ts";
import { withInterrupts } from "../../interrupt.ts";
import { printJson, printLines } from "../../output.ts";
import { runsDirArgs } from "../../args.ts";
import { parseMaxRowBytes } from "../../fast-verify.ts";

const USAGE = "usage: bernstein journal record <RUN_ID> [EVENT] [--data JSON] [--max-row-bytes SIZE] [--sdd-dir DIR]  (without EVENT: JSON Lines on stdin)";

export default defineCliCommand({
  docs: {
    exits: {
      0: "appended",
      2: "refused: the run is sealed (journal_sealed), or another writer holds the journal (journal_locked); a bad --max-row-bytes (invalid_row_limit)",
      3: "unreadable or malformed input: a bad line (invalid_event_line), a row over the row limit (row_too_large); nothing appended",
    },
    json: [
      jsonDoc({ example: "bernstein journal record my-run note --data '{\"text\": \"hello\"}'" }, [
        ["ok", "true", "The events were appended"],
        ["run_id", "string", "The run"],
        ["path", "string", "Its journal.jsonl"],
        ["recorded", "number", "Events appended now"],
        ["count", "number", "Events the journal holds"],
        ["head", "string", "Its head hash now"],
      ]),
    ],
  },
  meta: {
    name: "record",
    description:
      "Append events to a run journal (resuming its chain): one EVENT with --data, or JSON Lines {\"event\": ..., ...payload} on stdin",
  },
  args: {
    run_id: { type: "positional", required: false, description: "Run id (journal at <sdd-dir>/runs/<RUN_ID>/journal.jsonl)" },
    event: { type: "positional", required: false, description: "Event type; omit to read JSON Lines from stdin" },
    data: { type: "string", description: "Payload of EVENT as a JSON object (default {})" },
    "max-row-bytes": {
      type: "string",
      description:
        "Longest row read or written: bytes, or with a K, M or G suffix (default 256M, as journal verify); a longer one is row_too_large (exit 3), nothing written",
    },
    ...runsDirArgs,
  },
  async run({ args, json }) {
    const words = args._.map(String);
    if (words.length < 1 || words.length > 2) throw new UsageError(USAGE);
    const [runId, event] = words as [string, string | undefined];
    const sddDir = args["sdd-dir"] ?? ".sdd";
    const maxRowBytes = parseMaxRowBytes(args["max-row-bytes"]);
    let payload: PyObject | null = null;
    if (event !== undefined) {
      payload = parseObject(args.data ?? "{}", "--data", "invalid_data");
      validateRecordInput(event, payload);
    } else if (args.data !== undefined) {
      throw new UsageError("--data needs an EVENT (stdin mode takes the payload from each line)");
    }
    // Open first: a held lock or a torn tail is reported before any input is read.
    const journal = EventJournal.open(runId, { sddDir, maxRowBytes });
    let recorded = 0;
    // All or nothing, also when a signal ends it: what this command appended is rolled back.
    const start = journal.mark();
    const guard = {
      json,
      command: "journal record",
      doing: () => `reading events from stdin (the ${recorded} event(s) it had appended were rolled back)`,
      cleanup: () => {
        journal.rollback(start);
        journal.close();
      },
      facts: () => ({ run_id: runId, path: journal.path, recorded: 0, rolled_back: recorded, count: journal.count() }),
    };
    await withInterrupts(guard, async () => {
      try {
        if (event !== undefined) {
          journal.record(event, payload!);
          recorded = 1;
        } else {
          await recordLines(journal, Bun.stdin.stream(), (n) => (recorded = n));
        }
      } finally {
        journal.close();
      }
    });
    const count = journal.count();
    const head = journal.head();
    if (json) {
      await printJson({ ok: true, run_id: runId, path: journal.path, recorded, count, head });
    } else {
      await printLines(`recorded ${recorded} event(s) to run ${runId}: count ${count}, head ${head || "(empty)"}`);
    }
    return 0;
  },
});
