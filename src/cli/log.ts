import { createConsola } from "consola";

/**
 * Human diagnostics go to stderr, always; stdout is reserved for the
 * command's result (a table, prose or exactly one JSON document).
 */
export const log = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  formatOptions: { date: false },
});
