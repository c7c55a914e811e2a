/**
 * What a command's `--as-json` document holds, declared once beside the code
 * that builds it and rendered into docs/cli/ by scripts/gen-cli-docs.ts
 * (test/e2e/docs/json-fields.test.ts runs each example and compares the keys).
 */

/** One top-level member of a JSON document. */
export interface JsonField {
  name: string;
  /** A JSON type as a reader sees it: `string`, `number \| null`, `object`, `string[]` … */
  type: string;
  meaning: string;
  /** Present only in some documents (a failure, a flag, a check that applied). */
  optional?: boolean;
}

export type JsonFields = readonly JsonField[];

/**
 * One row of a field table: `[name, type, meaning]`, the name ending in `?`
 * for an optional member, as a TypeScript interface marks one (`"fix?"` is
 * the member `fix`, present only in some documents).
 */
export type JsonFieldRow = readonly [name: string, type: string, meaning: string];

/** Shorthand for a field table: `[name, type, meaning]` rows (see JsonFieldRow). */
export function jsonFields(rows: readonly JsonFieldRow[]): JsonFields {
  return rows.map(([name, type, meaning]) => (name.endsWith("?") ? { name: name.slice(0, -1), type, meaning, optional: true } : { name, type, meaning }));
}

/** Fields every negative document may carry beside its own (the output contract). */
export const FAILURE_FIELDS: JsonFields = jsonFields([
  ["error?", "string", "The error code (docs/errors.md), when not ok"],
  ["detail?", "string", "One line saying what failed, when not ok"],
]);

/** One `--as-json` document of a command. */
export interface JsonDoc {
  /** When this document is printed (`--verify`, `--from-step N`); omitted for the command's only document. */
  when?: string;
  /** `array`: a JSON array whose elements have these fields (`replay list`); default one object. */
  shape?: "object" | "array";
  fields: JsonFields;
  /**
   * A command line that prints this document (run in the demo workspace with
   * `--as-json` added; `$RUN` a run id, `$AGENT`/`$AGENT2` agent ids). Shown as
   * an example and run by the test.
   */
  example?: string;
  /**
   * The example and a task server: `starts` one that keeps serving (`bernstein server`),
   * `needs` one running, `stops` it. The test runs them in that order, after the others.
   */
  server?: "starts" | "needs" | "stops";
}

/**
 * One `--as-json` document from what says when and how it is printed (its
 * example, and `when`, `shape` or `server` where they apply) and its field
 * table's rows: the form every command's docs write their documents in.
 */
export function jsonDoc(about: Omit<JsonDoc, "fields">, rows: readonly JsonFieldRow[]): JsonDoc {
  return { ...about, fields: jsonFields(rows) };
}

/** What docs/cli/ says about a command beyond its flags, in the order its page shows them (a command's `docs` writes them in that order too). */
export interface CommandDocs {
  /** What each exit code means for this command (the generic meanings otherwise). */
  exits?: Readonly<Partial<Record<0 | 1 | 2 | 3 | 70, string>>>;
  json?: readonly JsonDoc[];
  /**
   * A command that has no JSON form (it refuses `--as-json` with `flag_not_applicable`):
   * what it prints instead, and a command line the test runs with `--as-json` to see it refused.
   */
  noJson?: { prints: string; example: string };
}
