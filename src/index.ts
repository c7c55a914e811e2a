/**
 * Public library API of bernstein, for a TypeScript orchestrator that embeds
 * it instead of shelling out to the binary. Grouped by domain (the domains
 * reuse some names, e.g. each journal kind has its own `classifyLine`), with
 * the most used entry points also exported at the top level.
 */
export * as pyjson from "./pyjson/index.ts";
export * as journal from "./journal/index.ts";
export * as steps from "./steps/index.ts";
export * as receipts from "./receipts/index.ts";
export * as session from "./session/state.ts";
export { decideResume, type ResumeDecision } from "./session/resume.ts";

export { EventJournal, verifyJournal, sealJournal, rebuildState, repairJournalTail, type JournalVerifyResult, type JournalSeal } from "./journal/index.ts";
export { StepJournal, verifyStepJournal } from "./steps/index.ts";
export { exportReceipt, publishReceipt, verifyReceipt } from "./receipts/index.ts";
export { saveSession, loadSession, sessionFromTasks, type SessionState } from "./session/state.ts";
export { BernsteinError, UsageError, InputError, RefusalError, NegativeError, ExitCode } from "./errors/index.ts";
export { VERSION } from "./version.ts";
