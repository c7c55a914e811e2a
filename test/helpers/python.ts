/**
 * Python's json module is the reference implementation of py-json-v1. Tests
 * ask it in ONE batched process: send a list of jobs, get a list of answers.
 */
export function runPython(script: string, input: unknown): unknown {
  const r = Bun.spawnSync(["python3", "-c", script], {
    stdin: new TextEncoder().encode(JSON.stringify(input)),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`python3 failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

/**
 * Each line re-spelled by Python's `json.dumps(json.loads(line), separators=(",", ":"))`:
 * the same values (floats stay floats) and so the same hashes, in a spacing
 * Python's journal writer never writes (the verify kernel declines it as
 * written, and takes it re-spaced: codec/writer-spacing.ts).
 */
export function compactLines(lines: readonly string[]): string[] {
  return runPython(`import json, sys\nprint(json.dumps([json.dumps(json.loads(l), separators=(",", ":")) for l in json.load(sys.stdin)]))`, lines) as string[];
}

/**
 * Each row line with its event type's first character written as a `\u`
 * escape (`"event": "\u0072un_started"`), by Python: the same values and
 * hashes in a spelling Python's writer never writes and re-spacing does
 * not change (the exact path's rows).
 */
export function foreignLines(lines: readonly string[]): string[] {
  const script = `import json, sys
def foreign(l):
    s = json.dumps(json.loads(l))
    i = s.index('"event": "') + 10
    return s[:i] + "\\\\u%04x" % ord(s[i]) + s[i + 1:]
print(json.dumps([foreign(l) for l in json.load(sys.stdin)]))`;
  return runPython(script, lines) as string[];
}
