export { parse, isPyObject, DEFAULT_MAX_DEPTH, type ParseOptions } from "./parse.ts";
export {
  dumps,
  canonical,
  canonicalBytes,
  compareCodePoints,
  encodeString,
  type Canonicalizer,
  type DumpsOptions,
} from "./encode.ts";
export { floatRepr, canonicalNumber } from "./float.ts";
export { pyStr, pyRepr, pyEquals, pyInt as pyIntOf, pyIntFromString, pyStrip, isPyWhitespace, pyRound } from "./python.ts";
export * from "./types.ts";
