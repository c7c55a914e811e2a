/**
 * The error-code catalogue is the one list of codes: every code the source
 * constructs or prints is in it, with the exit code the construction gives,
 * and the tables in docs/errors.md and README.md are exactly what the catalogue generates.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ERRORS_PAGE, README, renderErrorSection, renderExitSummary, withErrorSection, withExitSummary } from "../../scripts/gen-readme-errors.ts";
import { ERROR_CATALOGUE, ExitCode, isErrorCode } from "../../src/errors/index.ts";
import { EXIT_MEANINGS } from "../../src/errors/catalogue.ts";
import { ROOT } from "../helpers/cli.ts";
import { sources } from "../helpers/sources.ts";

const SRC = join(ROOT, "src");


/**
 * The top-level arguments of the call whose `(` is at `open`, as source text.
 * Strings, template literals (with `${}`), comments and nested brackets are
 * skipped, so a message containing commas or parentheses stays one argument.
 */
function callArgs(src: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  const templates: number[] = []; // brace depth at which each open template's `${` began
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "'") {
      for (i++; src[i] !== c; i++) if (src[i] === "\\") i++;
      continue;
    }
    if (c === "`" || (c === "}" && templates.length > 0 && templates[templates.length - 1] === depth)) {
      if (c === "}") {
        templates.pop();
        depth--;
      }
      // Inside a template: scan to its end or to the next `${`.
      for (i++; i < src.length && src[i] !== "`"; i++) {
        if (src[i] === "\\") i++;
        else if (src[i] === "$" && src[i + 1] === "{") {
          depth++;
          templates.push(depth);
          i++;
          break;
        }
      }
      continue;
    }
    if (c === "/" && src[i + 1] === "/") {
      i = src.indexOf("\n", i);
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      depth--;
      if (depth === 0) {
        args.push(src.slice(start, i).trim());
        return args.filter((a) => a !== "");
      }
    } else if (c === "," && depth === 1) {
      args.push(src.slice(start, i).trim());
      start = i + 1;
    }
  }
  throw new Error(`unterminated call at ${open}`);
}

/** Exit code of each error class, and where the code sits among its arguments. */
const CLASSES: Record<string, { codeArg: number; exit: number | "arg2" }> = {
  UsageError: { codeArg: 1, exit: ExitCode.USAGE },
  RefusalError: { codeArg: 0, exit: ExitCode.USAGE },
  InputError: { codeArg: 0, exit: ExitCode.INPUT },
  NegativeError: { codeArg: 0, exit: ExitCode.NEGATIVE },
  BernsteinError: { codeArg: 0, exit: "arg2" },
};

interface Site {
  where: string;
  code: string;
  exit: number | null;
}

/** Every `new XError(...)` with a literal code, and every literal `error: "..."` printed in a document. */
function sites(): Site[] {
  const found: Site[] = [];
  for (const file of sources(SRC)) {
    if (file.startsWith(join(SRC, "fuzz"))) continue; // development tooling: its "codes" name fuzz findings
    const src = readFileSync(file, "utf8");
    const rel = relative(ROOT, file);
    for (const m of src.matchAll(/new (UsageError|RefusalError|InputError|NegativeError|BernsteinError)\(/g)) {
      const cls = CLASSES[m[1]!]!;
      const args = callArgs(src, m.index! + m[0].length - 1);
      const where = `${rel}:${src.slice(0, m.index).split("\n").length}`;
      const literal = (a: string | undefined) => (a && /^"[a-z][a-z0-9_]*"$/.test(a) ? a.slice(1, -1) : null);
      // UsageError's code is optional (default "usage").
      const code = m[1] === "UsageError" && args.length < 2 ? "usage" : literal(args[cls.codeArg]);
      if (code === null) continue; // a variable: the type checker holds it to ErrorCode
      let exit: number | null = typeof cls.exit === "number" ? cls.exit : null;
      if (cls.exit === "arg2") {
        const name = /^ExitCode\.([A-Z]+)$/.exec(args[2] ?? "")?.[1];
        exit = name ? ExitCode[name as keyof typeof ExitCode] : null;
      }
      found.push({ where, code, exit });
    }
    // Subclasses pass a literal code and an ExitCode to super().
    for (const m of src.matchAll(/\bsuper\(\s*"([a-z][a-z0-9_]*)"/g)) {
      const args = callArgs(src, m.index! + "super".length);
      const name = args.map((a) => /^ExitCode\.([A-Z0-9]+)$/.exec(a)?.[1]).find(Boolean);
      const exit = name ? ExitCode[name as keyof typeof ExitCode] : null;
      found.push({ where: `${rel}:${src.slice(0, m.index).split("\n").length}`, code: m[1]!, exit });
    }
    for (const m of src.matchAll(/\berror: "([a-z][a-z0-9_]*)"/g)) {
      found.push({ where: `${rel}:${src.slice(0, m.index).split("\n").length}`, code: m[1]!, exit: null });
    }
  }
  return found;
}

describe("error-code catalogue", () => {
  test("every entry is a snake_case code with a documented exit code and a one-line meaning", () => {
    const exits = new Set<number>(Object.values(ExitCode));
    for (const [code, [exit, meaning]] of Object.entries(ERROR_CATALOGUE)) {
      expect([code, /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(code)]).toEqual([code, true]);
      expect([code, exits.has(exit)]).toEqual([code, true]);
      expect([code, (exit as number) === ExitCode.OK]).toEqual([code, false]);
      expect([code, meaning.length > 10 && !meaning.includes("\n")]).toEqual([code, true]);
    }
  });

  test("the scanner finds the construction sites (it would pass vacuously otherwise)", () => {
    const all = sites();
    expect(all.length).toBeGreaterThan(100);
    const codes = new Set(all.map((s) => s.code));
    for (const c of ["usage", "journal_missing", "receipt_malformed", "repair_refused", "chain_verification_failed", "internal_error", "server_unreachable"]) {
      expect([c, codes.has(c)]).toEqual([c, true]);
    }
    // Messages with commas, parentheses and templates stay one argument.
    expect(callArgs('f(`a, ${g(1, "x)")} b`, "c", { d: [1, 2] })', 1)).toEqual(['`a, ${g(1, "x)")} b`', '"c"', "{ d: [1, 2] }"]);
  });

  test("every code constructed or printed in src/ is catalogued, with the exit code the construction gives", () => {
    const problems: string[] = [];
    for (const s of sites()) {
      if (!isErrorCode(s.code)) {
        problems.push(`${s.where}: "${s.code}" is not in src/errors/catalogue.ts`);
        continue;
      }
      const want = ERROR_CATALOGUE[s.code][0];
      // `interrupted` is one code for two signals: 130 (SIGINT) and 143 (SIGTERM).
      const ok = s.exit === null || s.exit === want || (s.code === "interrupted" && s.exit === ExitCode.SIGTERM);
      if (!ok) problems.push(`${s.where}: "${s.code}" exits ${s.exit} here but the catalogue says ${want}`);
    }
    expect(problems).toEqual([]);
  });

  test("docs/errors.md's exit-code and error-code tables are the ones the catalogue generates", () => {
    const page = readFileSync(ERRORS_PAGE, "utf8");
    // Stale tables: run `bun scripts/gen-readme-errors.ts`.
    expect(withErrorSection(page)).toBe(page);
    const section = renderErrorSection();
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(section).toContain(`| \`${code}\` |`);
    expect(section.split("\n").filter((l) => l.startsWith("| `")).length).toBe(Object.keys(ERROR_CATALOGUE).length);
  });

  test("the generator notices a stale error page", () => {
    const page = readFileSync(ERRORS_PAGE, "utf8");
    const stale = page.replace("| `usage` | 2 |", "| `usage` | 3 |");
    expect(stale).not.toBe(page);
    expect(withErrorSection(stale)).toBe(page);
    expect(() => withErrorSection("no markers here")).toThrow();
  });

  test("README.md's exit-code summary is the one the catalogue generates, one row per exit code", () => {
    const readme = readFileSync(README, "utf8");
    // Stale summary: run `bun scripts/gen-readme-errors.ts`.
    expect(withExitSummary(readme)).toBe(readme);
    const summary = renderExitSummary();
    for (const [code] of EXIT_MEANINGS) expect(summary).toContain(`| ${code} | `);
    const stale = readme.replace("| 2 | usage error or refusal |", "| 2 | something else |");
    expect(stale).not.toBe(readme);
    expect(withExitSummary(stale)).toBe(readme);
    expect(() => withExitSummary("no markers here")).toThrow();
  });
});
