import { parse } from "../../src/pyjson/parse.ts";
import { violation } from "./types.ts";

/**
 * Run the compiled binary and check the CLI contract every command keeps,
 * whatever its input: the exit code is one of the documented ones
 * (70 = internal error is a crash), `--as-json` prints exactly one JSON
 * document on stdout, and stderr never carries a stack trace.
 */
export interface BinaryRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The single JSON document on stdout (with `--as-json`). */
  doc: unknown;
}

export interface BinaryCall {
  bin: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string | undefined>;
  stdin?: Uint8Array | string;
  /** Allowed exit codes (default 0, 1, 2, 3). */
  allowed?: readonly number[];
  timeoutMs?: number;
}

const STACK_TRACE = [/^\s+at\s.+:\d+(?::\d+)?\)?\s*$/m, /\$bunfs\//, /^\s*\d+ \| /m, /^(?:TypeError|RangeError|ReferenceError|SyntaxError): /m];

export function looksLikeStackTrace(text: string): boolean {
  return STACK_TRACE.some((re) => re.test(text));
}

export async function runBinary(call: BinaryCall): Promise<BinaryRun> {
  const proc = Bun.spawn([call.bin, ...call.args], {
    cwd: call.cwd,
    env: { ...process.env, NO_COLOR: "1", ...call.env },
    stdin: call.stdin === undefined ? "ignore" : new Blob([call.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, call.timeoutMs ?? 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  const cmd = `bernstein ${call.args.join(" ")}`.slice(0, 200);
  if (timedOut) throw violation("binary_timeout", `${cmd} did not finish in ${call.timeoutMs ?? 30_000} ms`);
  const allowed = call.allowed ?? [0, 1, 2, 3];
  if (code === 70) throw violation("binary_internal_error", `${cmd} exited 70: ${firstLine(stderr || stdout)}`);
  if (!allowed.includes(code)) throw violation("binary_exit_code", `${cmd} exited ${code} (allowed ${allowed.join(",")}): ${firstLine(stderr)}`);
  if (looksLikeStackTrace(stderr)) throw violation("binary_stack_trace", `${cmd} printed a stack trace: ${firstLine(stderr)}`);
  let doc: unknown = undefined;
  if (call.args.includes("--as-json")) {
    try {
      doc = parse(stdout.trim());
    } catch (err) {
      throw violation("binary_json_document", `${cmd} (exit ${code}) did not print exactly one JSON document: ${(err as Error).message}; stdout starts ${JSON.stringify(stdout.slice(0, 120))}`);
    }
    if (!(doc instanceof Map)) throw violation("binary_json_document", `${cmd} printed JSON that is not an object`);
    if (code !== 0 && doc.get("ok") !== false) {
      throw violation("binary_json_error_shape", `${cmd} exited ${code} without {"ok": false, ...}`);
    }
    if (code >= 2 && typeof doc.get("error") !== "string") {
      throw violation("binary_json_error_shape", `${cmd} exited ${code} without an "error" code`);
    }
  }
  return { code, stdout, stderr, doc };
}

/** A parsed document as plain JS (numbers as their lexeme strings, objects as records). */
export function plainDoc(v: unknown): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plainDoc(x)]));
  if (Array.isArray(v)) return v.map(plainDoc);
  if (v !== null && typeof v === "object" && "raw" in v) return (v as { raw: string }).raw;
  return v;
}

function firstLine(s: string): string {
  return s.trim().split("\n")[0]!.slice(0, 200);
}
