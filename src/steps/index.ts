export { GENESIS_HASH, stepHash, stepPreimage, sha256Hex, type StepHashFields } from "./hash.ts";
export { validateAgentId, agentJournalDir, agentBucketPath, journalRoot, BUCKET_NAME, AGENT_ID_PATTERN } from "./paths.ts";
export { StepJournal, StepJournalCorruptError, type StepInput, type AppendedStep } from "./writer.ts";
export { verifyStepJournal, type StepJournalVerdict } from "./verify.ts";
export { forEachEntry, classifyLine } from "./reader.ts";
