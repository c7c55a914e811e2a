/** The run journal: paths, hashing, streaming reader, verify, seal, rebuild, repair, writer. */
export * from "./paths.ts";
export * from "./hash.ts";
export { DEFAULT_PROFILE, HASH_PROFILES, JCS_V2, PY_JSON_V1, hashProfile, journalProfile, profileNames } from "./hash-profiles.ts";
export { physicalLines, MAX_LINE_BYTES, DEFAULT_CHUNK_SIZE, type PhysicalLine, type LineReadOptions } from "../fsutil/lines.ts";
export * from "./reader.ts";
export * from "./verify.ts";
export * from "./seal.ts";
export * from "./rebuild.ts";
export * from "./repair.ts";
export * from "./retention.ts";
export * from "./metadata.ts";
export * from "./writer.ts";
export * from "./target.ts";
