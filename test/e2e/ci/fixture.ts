import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runPython } from "../../helpers/python.ts";
import { VECTORS } from "../../helpers/cli.ts";

export const RUN_VECTORS = join(VECTORS, "run-journal");
export const AGENT_VECTORS = join(VECTORS, "agent-journal");

export function vectorLines(name: string): string[] {
  const text = readFileSync(join(RUN_VECTORS, `${name}.jsonl`), "utf8");
  return text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
}

export const joinLines = (lines: readonly string[]): string => lines.map((l) => `${l}\n`).join("");

/**
 * What a GitHub runner does with a step's stdout: the workflow commands it
 * would process (outside `::stop-commands::` blocks) and the lines it would
 * only print inside them.
 */
export function runnerView(stdout: string): { commands: string[]; inert: string[]; blocks: number } {
  const commands: string[] = [];
  const inert: string[] = [];
  let token: string | null = null;
  let blocks = 0;
  for (const line of stdout.split("\n")) {
    if (token !== null) {
      if (line === `::${token}::`) token = null;
      else inert.push(line);
      continue;
    }
    const stop = /^::stop-commands::(.+)$/.exec(line);
    if (stop) {
      token = stop[1]!;
      blocks++;
    } else if (line.startsWith("::")) commands.push(line);
  }
  if (token !== null) throw new Error("stop-commands block never closed");
  return { commands, inert, blocks };
}

/** `$GITHUB_OUTPUT` as the runner reads it: `name=value` and `name<<DELIM` … `DELIM`. */
export function parseGithubOutput(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) value.push(lines[i]!);
      if (i >= lines.length) throw new Error(`unterminated heredoc for ${heredoc[1]}`);
      out[heredoc[1]!] = value.join("\n");
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0) throw new Error(`not an output line: ${JSON.stringify(line)}`);
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

export interface JunitCase {
  classname: string;
  name: string;
  file: string;
  time: string;
  failure: { tag: string; type: string; message: string; text: string } | null;
  out: string | null;
}

/** Parse a JUnit file with Python's xml.etree.ElementTree (an independent, strict XML parser). */
export function parseJunit(path: string): { suites: Record<string, string>; suite: Record<string, string>; cases: JunitCase[] } {
  const script = `
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(json.load(sys.stdin)).getroot()
assert root.tag == "testsuites", root.tag
suite = root.find("testsuite")
cases = []
for tc in suite.findall("testcase"):
    f = tc.find("failure")
    if f is None:
        f = tc.find("error")
    out = tc.find("system-out")
    cases.append({
        "classname": tc.get("classname"), "name": tc.get("name"), "file": tc.get("file"), "time": tc.get("time"),
        "failure": None if f is None else {"tag": f.tag, "type": f.get("type"), "message": f.get("message"), "text": f.text},
        "out": None if out is None else out.text,
    })
print(json.dumps({"suites": dict(root.attrib), "suite": dict(suite.attrib), "cases": cases}))
`;
  return runPython(script, path) as ReturnType<typeof parseJunit>;
}
