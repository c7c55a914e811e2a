/** The src/ci report builders, in-process: escaping, caps, budgets, XML safety, exit-code ranking. */
import { describe, expect, test } from "bun:test";
import { annotations, escapeData, escapeProperty, stopCommandsBlock, workflowCommand } from "../../src/ci/annotations.ts";
import { junitXml, xmlAttr, xmlSafe } from "../../src/ci/junit.ts";
import { untrusted, worstExitCode, type CiOutcome } from "../../src/ci/outcome.ts";
import { githubOutputText, outputLine } from "../../src/ci/outputs.ts";
import { markdownCell, summaryMarkdown } from "../../src/ci/summary.ts";

function outcome(over: Partial<CiOutcome> = {}): CiOutcome {
  return {
    kind: "journal", input: "a.jsonl", file: "a.jsonl", status: "failed", exitCode: 1, verdict: "DIVERGENCE", head: null,
    count: 3, problems: [{ title: "T", message: "M", line: 2 }], seconds: 0.5, error: null, ...over,
  };
}

describe("workflow commands", () => {
  test("escaping of data and properties", () => {
    expect(escapeData("a%b\r\nc:d,e")).toBe("a%25b%0D%0Ac:d,e");
    expect(escapeProperty("a%b\r\nc:d,e")).toBe("a%25b%0D%0Ac%3Ad%2Ce");
    // %-first: an already-escaped-looking input stays distinguishable.
    expect(escapeData("%0A")).toBe("%250A");
    expect(workflowCommand("error", { file: "x,y", line: 3, title: null }, "m::n")).toBe("::error file=x%2Cy,line=3::m::n");
    expect(workflowCommand("warning", {}, "w")).toBe("::warning::w");
  });

  test("the cap: at most N errors, then one warning with the rest", () => {
    const many = outcome({ problems: Array.from({ length: 4 }, (_, i) => ({ title: "T", message: `m${i}`, line: i + 1 })) });
    const a = annotations([many, many], 5);
    expect(a.total).toBe(8);
    expect(a.annotated).toBe(5);
    expect(a.lines).toHaveLength(6);
    expect(a.lines[5]).toBe("::warning title=More problems::3 more problem(s) not annotated (limit 5); the step summary lists them");
    expect(annotations([outcome()]).lines).toEqual(["::error file=a.jsonl,line=2,title=T::M"]);
  });

  test("stop-commands: a token the text contains is never used", () => {
    expect(stopCommandsBlock("x\n::error::y", "tok")).toBe("::stop-commands::tok\nx\n::error::y\n::tok::\n");
    const block = stopCommandsBlock("contains tok", "tok");
    const token = /^::stop-commands::(.+)$/m.exec(block)![1]!;
    expect(token).not.toBe("tok");
    expect(token).toMatch(/^[0-9a-f]{32}$/);
  });

  test("untrusted text is bounded and shows control characters", () => {
    expect(untrusted("a\nb\u001b[31m")).toBe("a\\u000ab\\u001b[31m");
    expect(untrusted("x".repeat(400), 10)).toBe(`${"x".repeat(10)}… (390 more characters)`);
  });
});

describe("outputs, summary, JUnit", () => {
  test("$GITHUB_OUTPUT: one-line values plain, multi-line values in a heredoc", () => {
    expect(outputLine("a", "1")).toBe("a=1\n");
    expect(outputLine("b", "1\n2")).toMatch(/^b<<(ghadelimiter_[0-9a-f]{32})\n1\n2\n\1\n$/);
    expect(githubOutputText([outcome({ head: "h", count: 3 })])).toBe("verdict=failed\nhead=h\ncount=3\n");
  });

  test("summary cells carry no Markdown or HTML; the summary keeps within its budget", () => {
    expect(markdownCell("a|b <i>*x*</i> `c` \n")).toBe("a\\|b &lt;i&gt;\\*x\\*&lt;/i&gt; \\`c\\` \\\\u000a");
    const o = outcome({ problems: Array.from({ length: 500 }, (_, i) => ({ title: "T", message: `problem ${i}`, line: i })) });
    const full = summaryMarkdown([o], { command: "journal verify", annotated: 10 });
    expect(full).toContain("| a.jsonl | 499 | T: problem 499 |");
    const small = summaryMarkdown([o], { command: "journal verify", annotated: 10, budgetBytes: 2000 });
    expect(Buffer.byteLength(small)).toBeLessThanOrEqual(2000);
    expect(small).toMatch(/_… \d+ more lines not shown/);
    expect(summaryMarkdown([o], { command: "journal verify", annotated: 10, budgetBytes: 50 })).toBe("");
  });

  test("JUnit: characters XML cannot carry become visible text; attributes keep line breaks", () => {
    expect(xmlSafe("a\u0000b\u0008\t\n\r\ufffe\ud800x\ud83d\ude00")).toBe("a\\u0000b\\u0008\t\n\r\\ufffe\\ud800x\ud83d\ude00");
    expect(xmlAttr(`<"&'>\n`)).toBe("&lt;&quot;&amp;&apos;&gt;&#10;");
    const xml = junitXml([outcome(), outcome({ status: "verified", exitCode: 0, input: "b" }), outcome({ status: "error", exitCode: 3, error: "journal_missing" })], {
      suite: "s",
      timestamp: "2026-01-01T00:00:00",
    });
    expect(xml).toContain('<testsuites name="s" tests="3" failures="1" errors="1" time="1.500">');
    expect(xml).toContain('<testcase classname="bernstein.journal" name="b" file="a.jsonl" time="0.500"/>');
    expect(xml).toContain('<error message="DIVERGENCE" type="journal_missing">DIVERGENCE</error>');
  });
});

test("worst exit code: 70 > 3 > 2 > 1 > 0", () => {
  expect(worstExitCode([])).toBe(0);
  expect(worstExitCode([0, 1, 0])).toBe(1);
  expect(worstExitCode([1, 2])).toBe(2);
  expect(worstExitCode([3, 2, 1])).toBe(3);
  expect(worstExitCode([3, 70])).toBe(70);
});
