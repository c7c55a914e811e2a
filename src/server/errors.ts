/**
 * Failures of the task store and the task server. Each carries the HTTP
 * status the server answers with, so the store's refusals reach HTTP clients
 * and in-process callers with the same code and message.
 */
import { BernsteinError, ExitCode, exitCodeOf, isErrorCode, type ErrorCode, type ExitCodeValue } from "../errors/index.ts";

export class TaskServerError extends BernsteinError {
  readonly httpStatus: number;
  constructor(code: ErrorCode, message: string, httpStatus: number, exitCode: ExitCodeValue, facts: Record<string, unknown> = {}) {
    super(code, message, exitCode, facts);
    this.name = "TaskServerError";
    this.httpStatus = httpStatus;
  }
}

export class TaskNotFoundError extends TaskServerError {
  constructor(id: string) {
    super("task_not_found", `Task '${id}' not found`, 404, ExitCode.NEGATIVE, { task_id: id });
    this.name = "TaskNotFoundError";
  }
}

export class IllegalTransitionError extends TaskServerError {
  constructor(id: string, from: string, to: string, allowed: readonly string[]) {
    super(
      "illegal_transition",
      `Task '${id}' cannot go from '${from}' to '${to}'; allowed from '${from}': ${allowed.length ? allowed.join(", ") : "none (terminal status)"}`,
      409,
      ExitCode.USAGE,
      { task_id: id, from, to, allowed: [...allowed] },
    );
    this.name = "IllegalTransitionError";
  }
}

/** A held task changed by someone who does not hold its claim (or no claim id given). */
export class ClaimMismatchError extends TaskServerError {
  constructor(id: string, why: string) {
    super("claim_mismatch", `Task '${id}': ${why}`, 409, ExitCode.USAGE, { task_id: id });
    this.name = "ClaimMismatchError";
  }
}

/** The claim ran out of lease (not heartbeated in time) and the task went back to open. */
export class LeaseExpiredError extends TaskServerError {
  constructor(id: string, claimId: string, expiredAt: number | null) {
    super("lease_expired", `Task '${id}': claim ${claimId} expired (its lease was not renewed) and the task went back to the queue`, 409, ExitCode.NEGATIVE, {
      task_id: id,
      claim_id: claimId,
      expired_at: expiredAt,
    });
    this.name = "LeaseExpiredError";
  }
}

/** Bad request bodies: unknown fields, wrong types, unknown dependencies, cycles. */
export class InvalidTaskRequestError extends TaskServerError {
  constructor(message: string, httpStatus = 422, facts: Record<string, unknown> = {}) {
    super("invalid_request", message, httpStatus, ExitCode.USAGE, facts);
    this.name = "InvalidTaskRequestError";
  }
}

export class TaskExistsError extends TaskServerError {
  constructor(id: string) {
    super("task_exists", `Task '${id}' already exists`, 409, ExitCode.USAGE, { task_id: id });
    this.name = "TaskExistsError";
  }
}

/** The CLI could not reach a task server (none running, or wrong URL). */
export class ServerUnreachableError extends BernsteinError {
  constructor(message: string, facts: Record<string, unknown> = {}) {
    super("server_unreachable", message, ExitCode.NEGATIVE, facts);
    this.name = "ServerUnreachableError";
  }
}

/** The server answered a client request with an error status. */
export class ServerRequestError extends BernsteinError {
  readonly httpStatus: number;
  constructor(code: string, message: string, httpStatus: number, facts: Record<string, unknown> = {}) {
    // The code comes off the wire: a code the catalogue does not know is kept as a fact, never printed as ours.
    const known = isErrorCode(code) ? code : "server_error";
    const wire = known === code ? {} : { server_error: code };
    super(known, message, exitCodeOf(known), { status: httpStatus, ...wire, ...facts });
    this.name = "ServerRequestError";
    this.httpStatus = httpStatus;
  }
}
