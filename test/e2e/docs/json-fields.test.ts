/**
 * docs/cli/ lists the top-level fields of every `--as-json` document a command declares
 * (`CommandDocs.json`, src/json-fields.ts). Each declared document's example runs here, as
 * docs/cli/ shows it, with `--as-json` added, in the workspace `npm run demo` leaves (scripts/demo.ts,
 * run with the binary under test, plus the key pair `bernstein keys generate --out-dir keys` writes and the run receipt
 * `bernstein verify run` writes),
 * in the order docs/cli/ lists them (a later example may use an earlier one's file): a key the document prints that the docs do not list fails,
 * and so does a listed field that is not marked optional but is missing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliTree, type DocNode } from "../../../scripts/gen-cli-docs.ts";
import { binPath, ROOT } from "../../helpers/cli.ts";
import { hasOpenssl, startFakeTsa } from "../../helpers/fake-tsa.ts";
import { available } from "../../helpers/require-service.ts";
import type { JsonDoc } from "../../../src/json-fields.ts";

function flatten(node: DocNode): DocNode[] {
  return [node, ...node.children.flatMap(flatten)];
}

const tree = await cliTree();
const nodes = flatten(tree).filter((n) => "as-json" in n.args);
const needsTsa = (doc: JsonDoc): boolean => /token\.tsr|tsa-roots\.pem/.test(doc.example ?? "");
const declared = nodes.flatMap((n) => (n.docs?.json ?? []).map((doc) => ({ name: n.path.join(" "), doc })));
const withTsa = available("openssl", hasOpenssl(), "openssl is not installed (the seal publish/verify examples need an RFC 3161 token)");

describe("--as-json documents in docs/cli/", () => {
  test("every command with --as-json declares its document's fields, or that it has no JSON form", () => {
    // `replay` itself prints nothing of its own: its forms (verbs and targets) carry the documents.
    const missing = nodes.filter((n) => n.children.length === 0 && (n.docs?.json ?? []).length === 0 && !n.docs?.noJson).map((n) => n.path.join(" "));
    expect(missing).toEqual([]);
  });

  test("every declared document has an example, and the field names are unique", () => {
    for (const { name, doc } of declared) {
      expect({ name, when: doc.when, example: doc.example?.startsWith(`bernstein ${name.replace(/ <[A-Z_]+>$/, "")}`) }).toEqual({ name, when: doc.when, example: true });
      const names = doc.fields.map((f) => f.name);
      expect({ name, names: [...new Set(names)] }).toEqual({ name, names });
    }
  });
});

describe("each declared document's example, through the compiled binary", () => {
  let top = "";
  let workspace = "";
  let env: Record<string, string | undefined> = {};

  beforeAll(() => {
    top = mkdtempSync(join(tmpdir(), "bernstein-json-fields-"));
    mkdirSync(join(top, "dist"));
    symlinkSync(binPath(), join(top, "dist", "bernstein"));
    workspace = join(top, "demo-workspace");
    env = { ...process.env, NO_COLOR: "1", BERNSTEIN_BIN: join(top, "dist", "bernstein"), PATH: `${join(top, "dist")}:${process.env.PATH}` };
    for (const k of ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_WORKSPACE"]) delete env[k];
    const demo = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "demo.ts"), "--workspace", workspace], { cwd: top, env, stdout: "pipe", stderr: "pipe" });
    if (demo.exitCode !== 0) throw new Error(`demo failed: ${demo.stdout.toString()}${demo.stderr.toString()}`);
    // The key pair the signing examples name (docs/cli/ says where it comes from).
    const keys = Bun.spawnSync([binPath(), "keys", "generate", "--out-dir", "keys"], { cwd: workspace, env, stdout: "pipe", stderr: "pipe" });
    if (keys.exitCode !== 0) throw new Error(`keys generate failed: ${keys.stderr.toString()}`);
    const agents = readdirSync(join(workspace, ".sdd", "runtime", "journal")).sort();
    const runs = readdirSync(join(workspace, ".sdd", "runs")).sort();
    env.AGENT = agents[0];
    env.AGENT2 = agents[1];
    env.RUN = runs.at(-1);
    // The run receipt `verify receipt`'s example checks (written by `verify run`, whose example follows it on the page).
    const receipt = Bun.spawnSync([binPath(), "verify", "run", env.RUN!, "--signing-key-path", "keys/bernstein-receipt.key"], { cwd: workspace, env, stdout: "pipe", stderr: "pipe" });
    if (receipt.exitCode !== 0) throw new Error(`verify run failed: ${receipt.stderr.toString()}`);
    // The RFC 3161 token of the run's head and the TSA's root the anchor examples use (an openssl TSA, test/helpers/fake-tsa.ts).
    if (withTsa) {
      const verdict = Bun.spawnSync([binPath(), "journal", "verify", env.RUN!, "--as-json"], { cwd: workspace, env, stdout: "pipe", stderr: "pipe" });
      const tsa = startFakeTsa();
      try {
        writeFileSync(join(workspace, "token.tsr"), tsa.stampImprint(JSON.parse(verdict.stdout.toString()).head));
        copyFileSync(tsa.caPem, join(workspace, "tsa-roots.pem"));
      } finally {
        tsa.stop();
      }
    }
  }, 120_000);

  afterAll(() => {
    Bun.spawnSync([binPath(), "stop", "--force"], { cwd: workspace, stdout: "ignore", stderr: "ignore" });
    rmSync(top, { recursive: true, force: true });
  });

  const keysOf = (doc: JsonDoc, parsed: unknown): string[][] =>
    doc.shape === "array" ? (parsed as Record<string, unknown>[]).map((e) => Object.keys(e)) : [Object.keys(parsed as Record<string, unknown>)];

  /** The document's keys against its declared fields: none undeclared, none required missing. */
  const checkKeys = (name: string, doc: JsonDoc, out: string): void => {
    const parsed = JSON.parse(out) as unknown;
    expect(Array.isArray(parsed)).toBe(doc.shape === "array");
    const listed = new Set(doc.fields.map((f) => f.name));
    const required = doc.fields.filter((f) => !f.optional).map((f) => f.name);
    for (const keys of keysOf(doc, parsed)) {
      expect({ name, undocumented: keys.filter((k) => !listed.has(k)) }).toEqual({ name, undocumented: [] });
      expect({ name, missing: required.filter((k) => !keys.includes(k)) }).toEqual({ name, missing: [] });
    }
  };

  const runExample = async (name: string, doc: JsonDoc): Promise<void> => {
    const proc = Bun.spawn(["bash", "-c", `${doc.example} --as-json`], { cwd: workspace, env, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    // The example works: a verdict (0 or 1), not a usage error or an unreadable input.
    expect({ name, code: code <= 1 ? "0 or 1" : code, err: code <= 1 ? "" : err }).toEqual({ name, code: "0 or 1", err: "" });
    checkKeys(name, doc, out);
  };

  const title = (doc: JsonDoc): string => `${doc.example} --as-json${doc.when ? ` (${doc.when})` : ""}`;

  for (const { name, doc } of declared) {
    if (!doc.example || doc.server) continue;
    test.skipIf(!withTsa && needsTsa(doc))(title(doc), () => runExample(name, doc), 60_000);
  }

  for (const n of nodes.filter((n) => n.docs?.noJson)) {
    test(`${n.docs!.noJson!.example} --as-json is refused, as docs/cli/ says`, async () => {
      const proc = Bun.spawn(["bash", "-c", `${n.docs!.noJson!.example} --as-json`], { cwd: workspace, env, stdout: "pipe", stderr: "pipe" });
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      const doc = JSON.parse(out) as Record<string, unknown>;
      expect([code, doc.ok, doc.error]).toEqual([2, false, "flag_not_applicable"]);
    }, 60_000);
  }

  // Then the examples that start, use and stop a task server, in that order.
  const starts = declared.filter(({ doc }) => doc.server === "starts");
  const needs = declared.filter(({ doc }) => doc.server === "needs");
  const stops = declared.filter(({ doc }) => doc.server === "stops");
  let server: ReturnType<typeof Bun.spawn> | null = null;

  test("one example starts a task server, and one stops it", () => {
    expect({ starts: starts.length, stops: stops.length }).toEqual({ starts: 1, stops: 1 });
  });

  for (const { name, doc } of starts) {
    test(title(doc), async () => {
      const proc = Bun.spawn(["bash", "-c", `exec ${doc.example} --as-json`], { cwd: workspace, env, stdout: "pipe", stderr: "pipe" });
      server = proc;
      // Read until the document is whole (the server keeps running after it).
      const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      let parsed = false;
      while (!parsed) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        try {
          JSON.parse(text);
          parsed = true;
        } catch {
          // not whole yet
        }
      }
      reader.releaseLock();
      expect({ name, parsed }).toEqual({ name, parsed: true });
      checkKeys(name, doc, text);
    }, 60_000);
  }
  for (const { name, doc } of [...needs, ...stops]) test(title(doc), () => runExample(name, doc), 60_000);

  test("the server the examples started has exited", async () => {
    expect(server).not.toBeNull();
    expect(await server!.exited).toBe(0);
  }, 60_000);

  afterAll(() => {
    if (server && server.exitCode === null) server.kill("SIGKILL");
  });
});
