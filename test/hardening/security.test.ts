/**
 * Security review items of issue 9, each through the compiled binary where
 * a user would meet it:
 *  - run, agent and task ids never address a path outside .sdd (traversal,
 *    absolute paths, symlinked directories and files);
 *  - the task server binds loopback by default, refuses requests without
 *    the token (constant-time comparison) and never prints the token;
 *  - a published receipt holds no redacted content (canary scan of the
 *    whole tar);
 *  - a receipt signature covers the canonical manifest: an edit after
 *    signing fails verification;
 *  - files holding secrets are created 0600.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { bernstein, bernsteinJson, binPath, VECTORS } from "../helpers/cli.ts";
import { buildTar, readTar } from "../../tools/fuzz/tar.ts";
import { encodeString } from "../../src/pyjson/encode.ts";
import { parse } from "../../src/pyjson/parse.ts";
import { tokenMatches } from "../../src/server/auth.ts";
import { StepJournal } from "../../src/steps/writer.ts";

const dirs: string[] = [];
function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `bernstein-sec-${prefix}-`));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every file under `dir` (recursively), for "nothing was created outside" checks. */
function listing(dir: string): string[] {
  return existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).sort() : [];
}

const BAD_IDS = ["../x", "../../etc", "/abs/path", "a/../../b", "..", ".", "a\\b", "", "x\n", "a".repeat(65)];

describe("ids never address a path outside .sdd", () => {
  test("run ids: traversal and absolute paths are refused by every run-addressed command", async () => {
    const root = tmp("runids");
    const sdd = join(root, "sdd");
    mkdirSync(join(sdd, "runs"), { recursive: true });
    const commands = (id: string): string[][] => [
      ["journal", "record", id, "ev", "--sdd-dir", sdd],
      ["journal", "seal", id, "--sdd-dir", sdd],
      ["replay", "repair", id, "--sdd-dir", sdd],
      ["replay", id, "--verify", "--sdd-dir", sdd],
      ["replay", id, "--from-step", "1", "--sdd-dir", sdd],
    ];
    for (const id of BAD_IDS) {
      for (const args of commands(id)) {
        const r = await bernsteinJson(args, { cwd: root });
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
        expect(r.json.error).toMatch(/invalid_run_id|usage/);
      }
    }
    expect(listing(root)).toEqual(["sdd", join("sdd", "runs")]);
  });

  test("a run directory or journal file that is a symlink out of the tree is refused, and the target is untouched", async () => {
    const root = tmp("runlink");
    const sdd = join(root, "sdd");
    const outside = join(root, "outside");
    mkdirSync(join(sdd, "runs", "real"), { recursive: true });
    mkdirSync(outside);
    const victim = join(outside, "journal.jsonl");
    writeFileSync(victim, "");
    symlinkSync(outside, join(sdd, "runs", "evil"));
    symlinkSync(victim, join(sdd, "runs", "real", "journal.jsonl"));
    for (const id of ["evil", "real"]) {
      for (const args of [["journal", "record", id, "ev", "--sdd-dir", sdd], ["replay", "repair", id, "--sdd-dir", sdd], ["journal", "seal", id, "--sdd-dir", sdd]]) {
        const r = await bernsteinJson(args, { cwd: root });
        expect({ args, code: r.code, error: r.json.error }).toEqual({ args, code: 2, error: "invalid_run_id" });
      }
    }
    expect(readFileSync(victim, "utf8")).toBe("");
    expect(listing(outside)).toEqual(["journal.jsonl"]);
  });

  test("agent ids: traversal is refused; a symlinked agent directory or bucket file is refused by export, view and the writer", async () => {
    const root = tmp("agents");
    const sdd = join(root, "sdd");
    const outside = join(root, "outside");
    mkdirSync(join(sdd, "runtime", "journal", "agent-f"), { recursive: true });
    mkdirSync(outside);
    const victim = join(outside, "000000.jsonl");
    const original = readFileSync(join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl"));
    writeFileSync(victim, original);
    symlinkSync(outside, join(sdd, "runtime", "journal", "agent-d"));
    symlinkSync(victim, join(sdd, "runtime", "journal", "agent-f", "000000.jsonl"));
    // A dangling link would create the file outside on first append.
    mkdirSync(join(sdd, "runtime", "journal", "agent-g"));
    symlinkSync(join(outside, "created-by-append.jsonl"), join(sdd, "runtime", "journal", "agent-g", "000000.jsonl"));
    for (const id of [...BAD_IDS.filter((x) => x !== "" && !x.includes("\n")), "agent-d", "agent-f", "agent-g"]) {
      for (const args of [["replay", "export", id, join(root, "out.tar"), "--sdd-dir", sdd], ["replay", "publish", id, join(root, "pub.tar"), "--yes-i-want-to-publish", "--sdd-dir", sdd]]) {
        const r = await bernsteinJson(args, { cwd: root });
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
      }
      if (!id.includes("/") && !id.includes("\\") && id !== "." && id !== "..") {
        expect(() => StepJournal.open(sdd, id)).toThrow(/invalid agent id|resolves outside/);
      }
    }
    const view = await bernsteinJson(["replay", "agent-f", "--sdd-dir", sdd], { cwd: root });
    expect(view.code).toBe(2);
    expect(readFileSync(victim)).toEqual(original);
    expect(listing(outside)).toEqual(["000000.jsonl"]);
    expect(existsSync(join(root, "out.tar")) || existsSync(join(root, "pub.tar"))).toBe(false);
  });

  test("task ids: the server refuses unsafe ids and the task replay never reads outside", async () => {
    const root = tmp("tasks");
    const sdd = join(root, "sdd");
    const { startTaskServer } = await import("../../src/server/server.ts");
    const s = await startTaskServer({ sddDir: sdd, port: 0, token: "tok" });
    try {
      const auth = { authorization: "Bearer tok", "content-type": "application/json" };
      for (const id of BAD_IDS) {
        const res = await fetch(`${s.url}/tasks`, { method: "POST", headers: auth, body: JSON.stringify({ title: "t", id }) });
        expect({ id, status: res.status }).toEqual({ id, status: 422 });
      }
      for (const p of ["..%2F..%2Fetc", "%2e%2e", "a%2Fb", "%2Fetc%2Fpasswd"]) {
        const res = await fetch(`${s.url}/tasks/${p}`, { headers: auth });
        expect(res.status).toBe(404);
      }
    } finally {
      await s.close();
    }
    for (const id of ["../../etc/passwd", "/etc/passwd", "..", "a/../../b"]) {
      const r = await bernsteinJson(["replay", id, "--sdd-dir", sdd], { cwd: root });
      expect(r.code).toBe(2);
      expect(r.json.error).toBe("invalid_run_id");
    }
  });
});

describe("task server exposure", () => {
  test("binds loopback by default, refuses missing or wrong tokens, never prints the token", async () => {
    const sdd = join(tmp("srv"), "sdd");
    const proc = Bun.spawn([binPath(), "server", "--port", "0", "--sdd-dir", sdd, "--debug"], { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    const output = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    const infoPath = join(sdd, "runtime", "server.json");
    for (let i = 0; i < 400 && !existsSync(infoPath); i++) await Bun.sleep(25);
    const info = JSON.parse(readFileSync(infoPath, "utf8")) as { url: string; host: string; port: number; token: string };
    try {
      expect(info.host).toBe("127.0.0.1");
      expect(statSync(infoPath).mode & 0o777).toBe(0o600);
      const t = info.token;
      const variants: (string | null)[] = [null, "", "Bearer", "Bearer ", `Bearer ${t.slice(0, -1)}`, `Bearer ${t}x`, `Bearer ${t.toUpperCase() === t ? t.toLowerCase() : t.toUpperCase()}`, `Basic ${t}`, t, `Bearer ${t.slice(0, 8)}`];
      for (const h of variants) {
        for (const [method, path] of [["GET", "/status"], ["POST", "/tasks"], ["POST", "/shutdown"], ["GET", "/tasks"]] as const) {
          const res = await fetch(info.url + path, { method, headers: h === null ? {} : { authorization: h }, body: method === "POST" ? '{"title":"x"}' : undefined });
          const text = await res.text();
          expect({ h, path, status: res.status }).toEqual({ h, path, status: 401 });
          expect(text).not.toContain(t);
        }
      }
      const ok = await fetch(`${info.url}/health`, { headers: { authorization: `Bearer ${t}` } });
      expect(ok.status).toBe(200);
      // Not reachable on a non-loopback address of this machine.
      const external = Object.values(networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal);
      if (external) {
        const reached = await fetch(`http://${external.address}:${info.port}/health`, { headers: { authorization: `Bearer ${t}` }, signal: AbortSignal.timeout(2000) }).then(
          () => true,
          () => false,
        );
        expect(reached).toBe(false);
      }
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    const [stdout, stderr] = await output;
    expect(stdout + stderr).not.toContain(info.token);
  });

  test("the token comparison is constant-time: digests of both sides compared with timingSafeEqual", () => {
    expect(tokenMatches("abc", "abc")).toBe(true);
    expect(tokenMatches("abc", "abd")).toBe(false);
    expect(tokenMatches("", "abc")).toBe(false);
    expect(tokenMatches("a".repeat(10_000), "abc")).toBe(false);
    const auth = readFileSync(join(import.meta.dir, "..", "..", "src", "server", "auth.ts"), "utf8");
    expect(auth).toContain("timingSafeEqual(");
    const server = readFileSync(join(import.meta.dir, "..", "..", "src", "server", "server.ts"), "utf8");
    expect(server).toContain("tokenMatches(presented.token, token)");
    // No plain string comparison of the token anywhere in the server.
    expect(server).not.toMatch(/===\s*token\b|\btoken\s*===|!==\s*token\b|\btoken\s*!==/);
  });
});

describe("receipts", () => {
  const CANARY = "SECRET_TOKEN_DO_NOT_LEAK";

  function vectorSdd(): { root: string; sdd: string } {
    const root = tmp("receipts");
    const sdd = join(root, "sdd");
    cpSync(join(VECTORS, "agent-journal", "sdd"), sdd, { recursive: true });
    return { root, sdd };
  }

  /** Every byte of the archive, and of every member (gunzipped if needed). */
  function allBytes(path: string): string {
    let raw = readFileSync(path);
    if (raw[0] === 0x1f && raw[1] === 0x8b) raw = gunzipSync(raw);
    return raw.toString("latin1");
  }

  test("a published receipt carries no redacted content (canary scan of the whole tar)", async () => {
    const { root, sdd } = vectorSdd();
    const src = readFileSync(join(sdd, "runtime", "journal", "agent-a", "000000.jsonl"), "utf8");
    expect(src).toContain(CANARY);
    const out = join(root, "published.tar");
    const r = await bernsteinJson(["replay", "publish", "agent-a", out, "--yes-i-want-to-publish", "--sdd-dir", sdd], { cwd: root });
    expect(r.code).toBe(0);
    const bytes = allBytes(out);
    expect(bytes).not.toContain(CANARY);
    // No prompt or tool_result text of the source survives either.
    for (const line of src.split("\n").filter(Boolean)) {
      const row = parse(line) as Map<string, unknown>;
      const prompt = row.get("prompt");
      if (typeof prompt === "string" && prompt.length > 8) expect(bytes).not.toContain(encodeString(prompt).slice(1, -1));
    }
    const v = await bernsteinJson(["replay", "verify", out], { cwd: root });
    expect(v.code).toBe(0);
    // The shared published vector is clean too.
    expect(allBytes(join(VECTORS, "agent-journal", "agent-a.published.tar"))).not.toContain(CANARY);
  });

  test("a signature covers the canonical manifest: editing the manifest after signing fails verification", async () => {
    const { root, sdd } = vectorSdd();
    const keys = join(root, "keys");
    expect((await bernstein(["keys", "generate", "--out-dir", keys, "--name", "k"], { cwd: root })).code).toBe(0);
    expect(statSync(join(keys, "k.key")).mode & 0o777).toBe(0o600);
    const out = join(root, "signed.tar");
    const e = await bernsteinJson(["replay", "export", "agent-a", out, "--sign", join(keys, "k.key"), "--sdd-dir", sdd], { cwd: root });
    expect(e.code).toBe(0);
    expect(e.json.signed).toBe(true);
    const good = await bernsteinJson(["replay", "verify", out, "--public-key", join(keys, "k.pub")], { cwd: root });
    expect(good.code).toBe(0);
    expect(good.json.ok).toBe(true);

    const members = readTar(new Uint8Array(readFileSync(out)));
    const edits: ((m: Record<string, unknown>) => void)[] = [
      (m) => (m.created_at = "2000-01-01T00:00:00Z"),
      (m) => (m.agent_id = "someone-else"),
      (m) => (m.bernstein_version = "9.9.9"),
      (m) => (m.blob_digests = ["deadbeef"]),
    ];
    for (const edit of edits) {
      const copy = members.map((m) => ({ ...m }));
      const man = copy.find((m) => m.name === "manifest.json")!;
      const obj = JSON.parse(new TextDecoder().decode(man.data)) as Record<string, unknown>;
      edit(obj);
      man.data = new TextEncoder().encode(JSON.stringify(obj));
      const edited = join(root, "edited.tar");
      writeFileSync(edited, buildTar(copy));
      const bad = await bernsteinJson(["replay", "verify", edited, "--public-key", join(keys, "k.pub")], { cwd: root });
      expect(bad.code).toBe(1);
      expect(bad.json.ok).toBe(false);
      expect(bad.json.errors.join(" ")).toContain("signature");
    }
    // A different key does not verify the original either.
    const other = join(root, "other");
    await bernstein(["keys", "generate", "--out-dir", other, "--name", "k"], { cwd: root });
    const wrong = await bernsteinJson(["replay", "verify", out, "--public-key", join(other, "k.pub")], { cwd: root });
    expect(wrong.code).toBe(1);
  });
});

describe("files with secrets are created 0600", () => {
  test("session.json, run metadata, step buckets, locks and server.json after a real run", async () => {
    const root = tmp("modes");
    writeFileSync(join(root, "agent.sh"), '#!/bin/sh\ncat > /dev/null\necho \'{"result_summary": "ok", "cost_usd": 0.01}\'\n', { mode: 0o755 });
    writeFileSync(join(root, "bernstein.yaml"), "agent:\n  adapter: script\n  script: agent.sh\n  timeout_s: 30\n");
    writeFileSync(join(root, "plan.yaml"), '- id: T1\n  title: "one"\n- id: T2\n  title: "two"\n');
    const r = await bernstein(["run", "plan.yaml", "--port", "0"], { cwd: root });
    expect(r.code).toBe(0);
    const sdd = join(root, ".sdd");
    const mode = (p: string) => statSync(p).mode & 0o777;
    expect(mode(join(sdd, "runtime", "session.json"))).toBe(0o600);
    const run = readdirSync(join(sdd, "runs"))[0]!;
    expect(mode(join(sdd, "runs", run, "metadata.json"))).toBe(0o600);
    const agents = readdirSync(join(sdd, "runtime", "journal"));
    expect(agents.length).toBeGreaterThan(0);
    for (const a of agents) {
      expect(mode(join(sdd, "runtime", "journal", a, "000000.jsonl"))).toBe(0o600);
      expect(mode(join(sdd, "runtime", "journal", a)) & 0o077).toBe(0);
    }
  });
});
