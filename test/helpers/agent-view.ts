import { renderJson } from "../../src/render/json.ts";
import { writeAgentEntriesJson } from "../../src/replay/agent-json.ts";
import { GENESIS_HASH } from "../../src/steps/hash.ts";
import { setStepKernelEnabled } from "../../src/steps/kernel.ts";
import { verifyAgentJournal } from "../../src/steps/verify.ts";

/**
 * What `replay <AGENT_ID> --as-json` prints, by the exact path (this
 * process, the step kernel off): the document for an empty or verified
 * journal, or the verdict a broken one is refused with (exit 1).
 */
export async function exactAgentView(
  sdd: string,
  agentId: string,
  limit: number | null = null,
): Promise<{ document: string } | { refused: { head_hash: string; steps: number; errors: string[] } }> {
  setStepKernelEnabled(false);
  try {
    const v = await verifyAgentJournal(sdd, agentId);
    if (v.entries === 0) return { document: renderJson({ ok: true, agent_id: agentId, head_hash: GENESIS_HASH, steps: 0, entries: [] }) + "\n" };
    if (!v.ok) return { refused: { head_hash: v.head_hash, steps: v.steps, errors: v.errors } };
    const chunks: Uint8Array[] = [];
    const n = await writeAgentEntriesJson(v.bucket, limit, { write: async (b) => void chunks.push(b.slice()), writeSync: (b) => void chunks.push(b.slice()) });
    const head = renderJson({ ok: true, agent_id: agentId, head_hash: v.head_hash, steps: v.steps });
    return { document: head.slice(0, -2) + ',\n  "entries": [' + Buffer.concat(chunks).toString("utf8") + (n === 0 ? "]\n}\n" : "\n  ]\n}\n") };
  } finally {
    setStepKernelEnabled(true);
  }
}
