import type { ConsolaInstance } from "consola";

/**
 * Human diagnostics go to stderr, always; stdout is reserved for the
 * command's result (a table, prose or exactly one JSON document).
 *
 * consola (and the stderr stream it writes to) is loaded on the first
 * diagnostic, not at start-up: creating it costs ~20 ms, and most runs
 * print none.
 */
let instance: ConsolaInstance | null = null;

function consola(): ConsolaInstance {
  if (instance === null) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createConsola } = require("consola") as typeof import("consola");
    instance = createConsola({ stdout: process.stderr, stderr: process.stderr, formatOptions: { date: false } });
  }
  return instance;
}

type LogFn = (message: unknown, ...args: unknown[]) => void;

export const log: { info: LogFn; warn: LogFn; error: LogFn; success: LogFn; debug: LogFn } = {
  info: (m, ...a) => consola().info(m, ...a),
  warn: (m, ...a) => consola().warn(m, ...a),
  error: (m, ...a) => consola().error(m, ...a),
  success: (m, ...a) => consola().success(m, ...a),
  debug: (m, ...a) => consola().debug(m, ...a),
};
