/** The CLI's diagnostics: level from --debug / BERNSTEIN_LOG_LEVEL only, a fixed line format. */
import { describe, expect, test } from "bun:test";
import { formatLine, LOG_LEVELS, resolveLevel } from "../../src/cli/log.ts";

describe("resolveLevel", () => {
  test("--debug wins; a known name is taken (any case, trimmed); unset or empty is info", () => {
    expect(resolveLevel(true, "silent")).toEqual({ level: LOG_LEVELS.debug, note: null });
    expect(resolveLevel(false, " WARN ")).toEqual({ level: LOG_LEVELS.warn, note: null });
    expect(resolveLevel(false, "silent").level).toBe(LOG_LEVELS.silent);
    expect(resolveLevel(false, undefined)).toEqual({ level: LOG_LEVELS.info, note: null });
    expect(resolveLevel(false, "")).toEqual({ level: LOG_LEVELS.info, note: null });
  });

  test("an unknown value falls back to info with a note naming the choices", () => {
    const r = resolveLevel(false, "3");
    expect(r.level).toBe(LOG_LEVELS.info);
    expect(r.note).toBe('BERNSTEIN_LOG_LEVEL="3" is not one of silent, error, warn, info, debug; using info');
  });
});

describe("formatLine", () => {
  test("plain: icons for info/success/debug, badges between blank lines for warn/error", () => {
    expect(formatLine("info", "hello", false)).toBe("ℹ hello\n");
    expect(formatLine("success", "done", false)).toBe("✔ done\n");
    expect(formatLine("debug", "x", false)).toBe("⚙ x\n");
    expect(formatLine("warn", "careful", false)).toBe("\n WARN  careful\n\n");
    expect(formatLine("error", "broken", false)).toBe("\n ERROR  broken\n\n");
  });

  test("coloured only when asked (a terminal), the text unchanged", () => {
    expect(formatLine("info", "hello", true)).toBe("\x1b[36mℹ\x1b[0m hello\n");
    expect(formatLine("error", "broken", true)).toBe("\n\x1b[41m\x1b[30m ERROR \x1b[0m broken\n\n");
  });
});
