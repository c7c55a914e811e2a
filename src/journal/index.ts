/** The run journal: paths, hashing, streaming reader, verify, seal, rebuild, repair, writer. */
export * from "./paths.ts";
export * from "./hash.ts";
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
