import type { CiOutcome } from "./outcome.ts";

/**
 * A JUnit XML report: one testcase per verified input, a `<failure>` for a
 * negative verdict and an `<error>` for an input that could not be checked,
 * whose text is the verdict line; the problems go to `<system-out>`.
 * GitLab reads `testcase@classname`, `@name`, `@file` and `@time`.
 */

/**
 * Characters XML 1.0 cannot carry at all (C0 controls other than tab/LF/CR,
 * lone surrogates, U+FFFE/U+FFFF) are written as the text `\uXXXX`.
 */
export function xmlSafe(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

export function xmlText(text: string): string {
  return xmlSafe(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** An attribute value: also quotes, and tab/LF/CR as references so a parser keeps them. */
export function xmlAttr(text: string): string {
  return xmlText(text).replace(/"/g, "&quot;").replace(/'/g, "&apos;").replace(/\t/g, "&#9;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;");
}

function attrs(a: Record<string, string | number>): string {
  return Object.entries(a)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join("");
}

export interface JunitOptions {
  /** The suite: "bernstein journal verify", … */
  suite: string;
  /** ISO time the run started (testsuite@timestamp). */
  timestamp: string;
}

export function junitXml(outcomes: readonly CiOutcome[], opts: JunitOptions): string {
  const failures = outcomes.filter((o) => o.status === "failed").length;
  const errors = outcomes.filter((o) => o.status === "error").length;
  const time = outcomes.reduce((t, o) => t + o.seconds, 0).toFixed(3);
  const counts = { tests: outcomes.length, failures, errors, time };
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${attrs({ name: opts.suite, ...counts })}>`,
    `  <testsuite${attrs({ name: opts.suite, ...counts, skipped: 0, timestamp: opts.timestamp })}>`,
  ];
  for (const o of outcomes) {
    const tc = attrs({ classname: `bernstein.${o.kind}`, name: o.input, file: o.file, time: o.seconds.toFixed(3) });
    if (o.status === "verified") {
      lines.push(`    <testcase${tc}/>`);
      continue;
    }
    const tag = o.status === "failed" ? "failure" : "error";
    const type = o.error ?? (o.kind === "journal" ? "journal_verify_failed" : "receipt_verify_failed");
    lines.push(`    <testcase${tc}>`);
    lines.push(`      <${tag}${attrs({ message: o.verdict, type })}>${xmlText(o.verdict)}</${tag}>`);
    if (o.problems.length > 0) {
      const out = o.problems.map((p) => `${p.line === null ? o.file : `${o.file}:${p.line}`}: ${p.title}: ${p.message}`).join("\n");
      lines.push(`      <system-out>${xmlText(out)}</system-out>`);
    }
    lines.push(`    </testcase>`);
  }
  lines.push(`  </testsuite>`, `</testsuites>`, "");
  return lines.join("\n");
}
