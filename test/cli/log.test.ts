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

describe("log (consola/core with our reporter)", () => {
  // A child process: the logger is configured once per process, from argv and the environment.
  const run = (body: string, env: Record<string, string> = {}) => {
    const script = `import { log } from ${JSON.stringify(`${import.meta.dir}/../../src/cli/log.ts`)};\n${body}`;
    const r = Bun.spawnSync([process.execPath, "-e", script], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    return { stdout: r.stdout.toString(), stderr: r.stderr.toString(), exitCode: r.exitCode };
  };

  test("every line is written at once, a repeated one too (no throttling), to stderr only", () => {
    const r = run(`for (let i = 0; i < 8; i++) log.info("same line");\nlog.success("done");`);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("ℹ same line\n".repeat(8) + "✔ done\n");
  });

  test("the level is ours: debug hidden at info, shown with BERNSTEIN_LOG_LEVEL=debug; NODE_ENV, TEST and CI change nothing", () => {
    const body = `log.debug("dbg"); log.info("inf"); log.warn("wrn");`;
    expect(run(body, { NODE_ENV: "test", TEST: "1", CI: "true" }).stderr).toBe("ℹ inf\n\n WARN  wrn\n\n");
    expect(run(body, { BERNSTEIN_LOG_LEVEL: "debug" }).stderr).toBe("⚙ dbg\nℹ inf\n\n WARN  wrn\n\n");
    expect(run(body, { BERNSTEIN_LOG_LEVEL: "silent" }).stderr).toBe("");
  });

  test("an Error is shown by its message, never a stack", () => {
    const r = run(`log.error(new Error("boom"));`);
    expect(r.stderr).toBe("\n ERROR  boom\n\n");
  });
});

test("src/ loads consola only through consola/core (the full package probes the environment and creates process.stdout)", () => {
  const { readdirSync, readFileSync } = require("node:fs") as typeof import("node:fs");
  const { join } = require("node:path") as typeof import("node:path");
  const root = join(import.meta.dir, "../../src");
  const offenders: string[] = [];
  for (const f of readdirSync(root, { recursive: true }) as string[]) {
    if (!f.endsWith(".ts")) continue;
    const text = readFileSync(join(root, f), "utf8");
    if (/from\s+["']consola(\/(?!core["'])[^"']*)?["']/.test(text) || /import\(\s*["']consola["']/.test(text)) offenders.push(f);
  }
  expect(offenders).toEqual([]);
});
