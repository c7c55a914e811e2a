/**
 * The composite action (action.yml at the repository root), run as a
 * GitHub runner would run it: each step's `run` script with
 * `bash --noprofile --norc -eo pipefail`, its `env` evaluated from the
 * inputs and earlier steps' outputs, a fresh `$GITHUB_OUTPUT` and
 * `$GITHUB_STEP_SUMMARY` per step, stopping at the first failing step.
 * The binary under test comes in through the `binary` input (or PATH), or
 * is installed from a signed release of its own bytes (see "installs from
 * `version` alone" below).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { archiveName, tarGz } from "../../../scripts/package.ts";
import { ROOT, binPath } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";
import { AGENT_VECTORS, RUN_VECTORS, parseGithubOutput, parseJunit, runnerView } from "./fixture.ts";

const dirs = tempDirs("e2e-action");
afterAll(() => dirs.cleanup());

interface Step {
  name: string;
  id: string;
  shell: string;
  run: string;
  env?: Record<string, string>;
}
interface Action {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

const ACTION = Bun.YAML.parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as Action;

interface ActionRun {
  code: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  stepsRun: string[];
}

/** Evaluate the expressions the action uses: inputs.X, github.X, steps.S.outputs.O; anything else fails the test. */
function evaluate(text: string, ctx: { inputs: Record<string, string>; github: Record<string, string>; steps: Record<string, Record<string, string>> }): string {
  return text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_, expr: string) => {
    let m = /^inputs\.([A-Za-z0-9_-]+)$/.exec(expr);
    if (m) {
      if (!(m[1]! in ACTION.inputs)) throw new Error(`undeclared input ${m[1]}`);
      return ctx.inputs[m[1]!] ?? ACTION.inputs[m[1]!]!.default ?? "";
    }
    m = /^github\.([a-z_]+)$/.exec(expr);
    if (m) return ctx.github[m[1]!] ?? "";
    m = /^steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)$/.exec(expr);
    if (m) return ctx.steps[m[1]!]?.[m[2]!] ?? "";
    throw new Error(`expression the test runner does not know: ${expr}`);
  });
}

interface RunnerOptions {
  path?: string;
  actionPath?: string;
  /** github.action_repository: empty, as composite actions see it on some runners. */
  repository?: string;
  /** RUNNER_TOOL_CACHE (default: none set). */
  toolCache?: string;
  /** A file every step reads as its stdin (default: none). */
  stdinFile?: string;
}

function runAction(workspace: string, inputs: Record<string, string>, opts: RunnerOptions = {}): ActionRun {
  const github = {
    action_path: opts.actionPath ?? ROOT,
    action_repository: opts.repository ?? "",
    repository: "someone/their-project",
    workspace,
  };
  const ctx = { inputs, github, steps: {} as Record<string, Record<string, string>> };
  const tmp = dirs.make();
  let stdout = "";
  let stderr = "";
  let summary = "";
  let code = 0;
  const stepsRun: string[] = [];
  for (const [i, step] of ACTION.runs.steps.entries()) {
    const script = join(tmp, `step-${i}.sh`);
    writeFileSync(script, step.run);
    const output = join(tmp, `output-${i}`);
    const stepSummary = join(tmp, `summary-${i}`);
    writeFileSync(output, "");
    writeFileSync(stepSummary, "");
    const env: Record<string, string> = {
      PATH: opts.path ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: tmp,
      NO_COLOR: "1",
      GITHUB_ACTIONS: "true",
      GITHUB_WORKSPACE: workspace,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: stepSummary,
      RUNNER_TEMP: tmp,
      RUNNER_OS: "Linux",
      RUNNER_ARCH: "X64",
      ...(opts.toolCache ? { RUNNER_TOOL_CACHE: opts.toolCache } : {}),
    };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = evaluate(String(v), ctx);
    const r = Bun.spawnSync(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], {
      cwd: workspace,
      env,
      stdin: opts.stdinFile ? Bun.file(opts.stdinFile) : "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    stepsRun.push(step.id);
    stdout += r.stdout.toString();
    stderr += r.stderr.toString();
    summary += readFileSync(stepSummary, "utf8");
    ctx.steps[step.id] = parseGithubOutput(readFileSync(output, "utf8"));
    code = r.exitCode ?? -1;
    if (code !== 0) break;
  }
  const outputs: Record<string, string> = {};
  for (const [name, o] of Object.entries(ACTION.outputs)) outputs[name] = evaluate(o.value, ctx);
  return { code, stdout, stderr, outputs, summary, stepsRun };
}

function workspace(): string {
  const ws = dirs.make();
  mkdirSync(join(ws, "journals"));
  copyFileSync(join(RUN_VECTORS, "chain-4.jsonl"), join(ws, "journals", "a.jsonl"));
  copyFileSync(join(RUN_VECTORS, "hazards.jsonl"), join(ws, "journals", "b.jsonl"));
  copyFileSync(join(RUN_VECTORS, "hazards-payload-edit.jsonl"), join(ws, "tampered.jsonl"));
  copyFileSync(join(AGENT_VECTORS, "agent-a.tar"), join(ws, "agent-a.tar"));
  return ws;
}

describe("action.yml", () => {
  test("is a composite action whose every step is a bash run step taking inputs only through env", () => {
    expect(ACTION.runs.using).toBe("composite");
    for (const k of ["journal", "receipt", "public-key", "seal", "version", "binary"]) expect(ACTION.inputs).toHaveProperty(k);
    for (const step of ACTION.runs.steps) {
      expect([step.id, step.shell]).toEqual([step.id, "bash"]);
      // An expression inside the script text would be spliced in unescaped (script injection).
      expect(step.run).not.toContain("${{");
    }
  });

  test("verifies journals (a glob) and a receipt with annotations, summary, JUnit and outputs; a tampered journal fails the step", () => {
    const ws = workspace();
    const r = runAction(ws, { journal: "journals/*.jsonl\ntampered.jsonl\n", receipt: "agent-a.tar", binary: binPath() });
    expect(r.stepsRun).toEqual(["install", "verify"]);
    expect(r.code).toBe(1);
    expect(r.outputs).toMatchObject({
      verdict: "failed",
      "journal-verdict": "failed",
      "journal-count": "4\n300\n300",
      "receipt-verdict": "verified",
      "receipt-count": "60",
      junit: "bernstein-junit",
    });
    expect(r.outputs["journal-head"]!.split("\n")).toHaveLength(3);
    expect(r.outputs["receipt-head"]).toMatch(/^[0-9a-f]{64}$/);
    expect(runnerView(r.stdout).commands).toEqual([
      expect.stringMatching(/^::error file=tampered\.jsonl,line=237,title=Chain divergence at step 236::/),
    ]);
    expect(r.summary).toContain("### ❌ bernstein journal verify: 1 failed of 3 inputs");
    expect(r.summary).toContain("### ✅ bernstein replay verify: 1 input verified");
    const journal = parseJunit(join(ws, "bernstein-junit", "journal.xml"));
    expect(journal.cases.map((c) => [c.name, c.failure?.tag ?? null])).toEqual([
      ["journals/a.jsonl", null],
      ["journals/b.jsonl", null],
      ["tampered.jsonl", "failure"],
    ]);
    expect(parseJunit(join(ws, "bernstein-junit", "receipt.xml")).cases.map((c) => c.name)).toEqual(["agent-a.tar"]);
  });

  test("all verified: exit 0; a bernstein on PATH is used when no binary or version is given", () => {
    const ws = workspace();
    const bin = dirs.make();
    symlinkSync(binPath(), join(bin, "bernstein"));
    const r = runAction(ws, { journal: "journals/a.jsonl", receipt: "agent-a.tar" }, { path: `${bin}:/usr/local/bin:/usr/bin:/bin` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`at ${join(bin, "bernstein")}`);
    expect(r.outputs).toMatchObject({ verdict: "verified", "journal-verdict": "verified", "journal-count": "4", "receipt-verdict": "verified" });
  });

  test("a seal and a public key reach the binary; a missing input is an error verdict (exit 3)", () => {
    const ws = workspace();
    writeFileSync(join(ws, "seal.json"), JSON.stringify({ event_count: 5, head: "00" }));
    const r = runAction(ws, { journal: "journals/a.jsonl", seal: "seal.json", binary: binPath() });
    expect(r.code).toBe(1);
    expect(runnerView(r.stdout).commands).toEqual([
      expect.stringMatching(/^::error file=journals\/a\.jsonl,title=Seal mismatch::identity=mismatched: the journal holds 4 events/),
    ]);
    const k = runAction(ws, { receipt: "agent-a.tar\nnope.tar", "public-key": "missing.pub", binary: binPath() });
    expect(k.outputs["receipt-verdict"]).toBe("error");
    expect(k.code).not.toBe(0);
    const gone = runAction(ws, { journal: "gone.jsonl", binary: binPath() });
    expect([gone.code, gone.outputs.verdict]).toEqual([3, "error"]);
  });

  test("refusals: nothing to verify (exit 2); a binary that is not executable (exit 2)", () => {
    const ws = workspace();
    const none = runAction(ws, { binary: binPath() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("nothing to verify");
    const notExec = join(ws, "journals", "a.jsonl");
    const bad = runAction(ws, { journal: "journals/a.jsonl", binary: notExec });
    expect([bad.code, bad.stepsRun]).toEqual([2, ["install"]]);
    expect(bad.stderr).toContain("is not an executable file");
    // No binary, no bernstein on PATH, an action path that names no repository and no `repository`: a clear refusal, not a download attempt.
    const nowhere = runAction(ws, { journal: "journals/a.jsonl" }, { path: dirname(Bun.which("bash")!) + ":/usr/bin:/bin" });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain("cannot tell which repository's releases to install");
  });

  test("a `-` journal (the step's stdin) is annotated as `stdin`, or by the `stdin-name` input", () => {
    const ws = workspace();
    const stdinFile = join(ws, "tampered.jsonl");
    const plain = runAction(ws, { journal: "-", binary: binPath() }, { stdinFile });
    expect(plain.code).toBe(1);
    expect(runnerView(plain.stdout).commands).toEqual([expect.stringMatching(/^::error file=stdin,line=237,title=Chain divergence at step 236::/)]);
    const named = runAction(ws, { journal: "-", "stdin-name": "logs/piped.jsonl", binary: binPath() }, { stdinFile });
    expect(named.code).toBe(1);
    expect(runnerView(named.stdout).commands).toEqual([expect.stringMatching(/^::error file=logs\/piped\.jsonl,line=237,title=Chain divergence at step 236::/)]);
    expect(parseJunit(join(ws, "bernstein-junit", "journal.xml")).cases.map((c) => c.name)).toEqual(["logs/piped.jsonl"]);
  });

  test("installs through scripts/install.sh --version V --dir DIR --base-url URL when no binary is at hand", () => {
    const ws = workspace();
    // A stand-in install.sh (the real one is tested on its own): it records its arguments and installs the test binary.
    // Where a runner checks out `uses: acme/bernstein@v1`; github.action_repository stays empty.
    const actionDir = join(dirs.make(), "_actions", "acme", "bernstein", "v1");
    mkdirSync(join(actionDir, "scripts"), { recursive: true });
    copyFileSync(join(ROOT, "package.json"), join(actionDir, "package.json"));
    const log = join(actionDir, "install-args");
    writeFileSync(
      join(actionDir, "scripts", "install.sh"),
      `#!/bin/bash\nset -eu\nprintf '%s\\n' "$@" > '${log}'\ndir=""\nwhile [ $# -gt 0 ]; do [ "$1" = --dir ] && dir="$2"; shift; done\nmkdir -p "$dir"\nln -s '${binPath()}' "$dir/bernstein"\n`,
    );
    chmodSync(join(actionDir, "scripts", "install.sh"), 0o755);
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
    const r = runAction(ws, { journal: "journals/a.jsonl" }, { actionPath: actionDir });
    expect(r.code).toBe(0);
    const args = readFileSync(log, "utf8").trim().split("\n");
    expect(args).toEqual(["--version", version, "--dir", expect.stringMatching(new RegExp(`/bernstein/${version.replace(/\./g, "\\.")}/Linux-X64$`)), "--base-url", "https://github.com/acme/bernstein/releases/download"]);
    const pinned = runAction(ws, { journal: "journals/a.jsonl", version: "v9.9.9", "base-url": "http://127.0.0.1:9/rel" }, { actionPath: actionDir });
    expect(pinned.code).toBe(0);
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["--version", "9.9.9", "--dir", expect.stringMatching(/\/bernstein\/9\.9\.9\/Linux-X64$/), "--base-url", "http://127.0.0.1:9/rel"]);
    // An explicit `repository` wins over the checkout path.
    const other = runAction(ws, { journal: "journals/a.jsonl", version: "9.9.7", repository: "fork/bernstein" }, { actionPath: actionDir });
    expect(other.code).toBe(0);
    expect(readFileSync(log, "utf8").trim().split("\n").at(-1)).toBe("https://github.com/fork/bernstein/releases/download");
    expect(pinned.outputs.verdict).toBe("verified");
  });
});

/**
 * The whole install path under a simulated runner: the action checked out at
 * …/_actions/acme/bernstein/v1 with an empty github.action_repository, the
 * real scripts/install.sh, and releases of the binary under test (its exact
 * bytes, packaged as `npm run package` does, SHA256SUMS signed with a
 * throwaway Ed25519 key whose public half is the checkout's
 * release-signing.pub). No network: a `curl` first on PATH serves
 * https://github.com/<repo>/releases/download/… from a local folder (file://)
 * and logs every URL asked for.
 */
describe("installs from `version` alone (simulated runner, signed local releases)", () => {
  const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  const HOST = `linux-${process.arch === "arm64" ? "arm64" : "x64"}` as const;
  const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
  const root = dirs.make();
  const actionDir = join(root, "_actions", "acme", "bernstein", "v1");
  const releases = join(root, "github.com", "acme", "bernstein", "releases", "download");
  const shim = join(root, "shim");
  const urlLog = join(root, "urls");
  const key = join(root, "release.key");
  const otherKey = join(root, "other.key");
  const openssl = (args: string[]) => {
    const r = Bun.spawnSync(["openssl", ...args], { stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr.toString()}`);
  };
  const sign = (dir: string, signer: string) =>
    openssl(["pkeyutl", "-sign", "-inkey", signer, "-rawin", "-in", join(dir, "SHA256SUMS"), "-out", join(dir, "SHA256SUMS.sig")]);
  /** One release folder: the archive, SHA256SUMS listing `listed`'s digest, signed by `signer` (null: unsigned). */
  const publish = (tag: string, archive: Uint8Array, listed: Uint8Array, signer: string | null) => {
    const dir = join(releases, tag);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, archiveName(HOST)), archive);
    writeFileSync(join(dir, "SHA256SUMS"), `${sha256(listed)}  ${archiveName(HOST)}\n`);
    if (signer) sign(dir, signer);
  };
  const urls = (): string[] => (existsSync(urlLog) ? readFileSync(urlLog, "utf8").trim().split("\n").filter(Boolean) : []);
  const path = `${shim}:${dirname(Bun.which("bash")!)}:/usr/bin:/bin`;
  const ready = (async () => {
    mkdirSync(join(actionDir, "scripts"), { recursive: true });
    copyFileSync(join(ROOT, "scripts", "install.sh"), join(actionDir, "scripts", "install.sh"));
    copyFileSync(join(ROOT, "package.json"), join(actionDir, "package.json"));
    openssl(["genpkey", "-algorithm", "ed25519", "-out", key]);
    openssl(["pkey", "-in", key, "-pubout", "-out", join(actionDir, "release-signing.pub")]);
    openssl(["genpkey", "-algorithm", "ed25519", "-out", otherKey]);
    mkdirSync(shim);
    writeFileSync(
      join(shim, "curl"),
      `#!/bin/bash\nargs=()\nfor a in "$@"; do\n  case "$a" in https://github.com/*) echo "$a" >> '${urlLog}'; a="file://${root}/github.com/\${a#https://github.com/}" ;; http*://*) echo "network refused: $a" >&2; exit 7 ;; esac\n  args+=("$a")\ndone\nexec '${Bun.which("curl")}' "\${args[@]}"\n`,
    );
    chmodSync(join(shim, "curl"), 0o755);
    const good = await tarGz("bernstein", readFileSync(binPath()));
    const tampered = Uint8Array.from(good);
    tampered[Math.floor(tampered.length / 2)] ^= 0x01;
    publish(`v${VERSION}`, good, good, key);
    publish("v9.9.8", tampered, good, key); // archive altered after signing
    publish("v9.9.7", tampered, tampered, null); // SHA256SUMS rewritten for the tampered archive …
    copyFileSync(join(releases, `v${VERSION}`, "SHA256SUMS.sig"), join(releases, "v9.9.7", "SHA256SUMS.sig")); // … under the genuine signature
    publish("v9.9.6", good, good, otherKey); // signed by someone else
    publish("v9.9.5", good, good, null); // no signature at all
  })();

  test("a fresh tool cache: downloads from the checkout's repository, checks signature and checksum, caches, outputs the path; then a cache hit", async () => {
    await ready;
    const ws = workspace();
    const cache = dirs.make();
    rmSync(urlLog, { force: true });
    const r = runAction(ws, { journal: "journals/a.jsonl", version: `v${VERSION}` }, { actionPath: actionDir, toolCache: cache, path });
    expect(r.stderr).not.toContain("network refused");
    expect([r.code, r.stepsRun]).toEqual([0, ["install", "verify"]]);
    const bin = join(cache, "bernstein", VERSION, "Linux-X64", "bernstein");
    expect(r.outputs).toMatchObject({ path: bin, "cache-hit": "false", verdict: "verified" });
    const base = `https://github.com/acme/bernstein/releases/download/v${VERSION}`;
    expect(urls()).toEqual([`${base}/SHA256SUMS`, `${base}/SHA256SUMS.sig`, `${base}/${archiveName(HOST)}`]);
    expect(sha256(readFileSync(bin))).toBe(sha256(readFileSync(binPath())));
    expect(existsSync(`${join(cache, "bernstein", VERSION, "Linux-X64")}.complete`)).toBe(true);

    rmSync(urlLog, { force: true });
    const again = runAction(ws, { journal: "journals/a.jsonl", version: VERSION }, { actionPath: actionDir, toolCache: cache, path });
    expect(again.code).toBe(0);
    expect(again.outputs).toMatchObject({ path: bin, "cache-hit": "true", verdict: "verified" });
    expect(urls()).toEqual([]);
  });

  test("an interrupted install (no .complete marker) is not a cache hit: installed again", async () => {
    await ready;
    const ws = workspace();
    const cache = dirs.make();
    const dir = join(cache, "bernstein", VERSION, "Linux-X64");
    mkdirSync(dir, { recursive: true });
    copyFileSync(binPath(), join(dir, "bernstein"));
    chmodSync(join(dir, "bernstein"), 0o755);
    rmSync(urlLog, { force: true });
    const r = runAction(ws, { journal: "journals/a.jsonl", version: VERSION }, { actionPath: actionDir, toolCache: cache, path });
    expect(r.code).toBe(0);
    expect(r.outputs["cache-hit"]).toBe("false");
    expect(urls()).toHaveLength(3);
  });

  for (const [tag, what, message] of [
    ["9.9.8", "a tampered archive", "checksum mismatch"],
    ["9.9.7", "a tampered SHA256SUMS (genuine signature)", "bad signature"],
    ["9.9.6", "a signature by another key", "bad signature"],
    ["9.9.5", "a missing signature", "refusing an unsigned release"],
  ] as const) {
    test(`${what} is refused: the step fails, nothing verified, nothing cached`, async () => {
      await ready;
      const ws = workspace();
      const cache = dirs.make();
      const r = runAction(ws, { journal: "journals/a.jsonl", version: tag }, { actionPath: actionDir, toolCache: cache, path });
      expect(r.code).toBe(1);
      expect(r.stepsRun).toEqual(["install"]);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain("nothing installed");
      expect(r.outputs.path).toBe("");
      const left = existsSync(join(cache, "bernstein")) ? readdirSync(join(cache, "bernstein", tag)) : [];
      expect(left.filter((f) => f.endsWith(".complete"))).toEqual([]);
      expect(existsSync(join(cache, "bernstein", tag, "Linux-X64", "bernstein"))).toBe(false);
    });
  }
});
