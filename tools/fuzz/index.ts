/** Fuzzing, crash-consistency and load harnesses (development tooling; nothing here talks to a terminal). */
export { Rng } from "./rng.ts";
export { mutateBytes, mutateLines, deepNesting } from "./mutate.ts";
export { runFuzz, caseRng, type FuzzOptions, type FuzzReport, type CrashRecord } from "./runner.ts";
export { crashSignature } from "./signature.ts";
export { InvariantViolation, violation, type FuzzTarget } from "./types.ts";
export { makeTarget, TARGET_NAMES, type TargetName, type TargetOptions } from "./targets/index.ts";
