/**
 * The error classes. The exit-code contract and the error codes live in the
 * catalogue (catalogue.ts beside this file); they are re-exported here so
 * the library and the CLI import one module.
 */
import { ExitCode, type ErrorCode, type ExitCodeValue } from "./catalogue.ts";
export { ERROR_CATALOGUE, ExitCode, exitCodeOf, isErrorCode, type ErrorCode, type ExitCodeValue } from "./catalogue.ts";

/**
 * An expected failure. `code` is the machine-readable error code printed as
 * `{"ok": false, "error": code, "detail": message}` under `--as-json`;
 * `facts` are merged into that document (partial results that are known).
 */
export class BernsteinError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCodeValue;
  readonly facts: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, exitCode: ExitCodeValue, facts: Record<string, unknown> = {}) {
    super(message);
    this.name = "BernsteinError";
    this.code = code;
    this.exitCode = exitCode;
    this.facts = facts;
  }
}

/** Bad flags, missing arguments, refused confirmation (exit 2). */
export class UsageError extends BernsteinError {
  constructor(message: string, code: ErrorCode = "usage", facts: Record<string, unknown> = {}) {
    super(code, message, ExitCode.USAGE, facts);
    this.name = "UsageError";
  }
}

/** Input that cannot be read as what it claims to be (exit 3). */
export class InputError extends BernsteinError {
  constructor(code: ErrorCode, message: string, facts: Record<string, unknown> = {}) {
    super(code, message, ExitCode.INPUT, facts);
    this.name = "InputError";
  }
}

/** A refusal to act (exit 2): the tool will not do this without changes. */
export class RefusalError extends BernsteinError {
  constructor(code: ErrorCode, message: string, facts: Record<string, unknown> = {}) {
    super(code, message, ExitCode.USAGE, facts);
    this.name = "RefusalError";
  }
}

/** A negative verdict raised as an error (exit 1). */
export class NegativeError extends BernsteinError {
  constructor(code: ErrorCode, message: string, facts: Record<string, unknown> = {}) {
    super(code, message, ExitCode.NEGATIVE, facts);
    this.name = "NegativeError";
  }
}

/** A verdict's `detail`: its first error, and how many more there are, on one line. */
export function firstOfErrors(errors: readonly string[], fallback: string): string {
  const first = (errors[0] ?? fallback).split("\n")[0]!;
  return errors.length > 1 ? `${first} (and ${errors.length - 1} more error(s))` : first;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
