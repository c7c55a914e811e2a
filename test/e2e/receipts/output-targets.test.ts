/**
 * Issue 29 item 1 through the compiled binary: a named output is renamed
 * into place, so an OUT that is a symlink into /proc (`/dev/stdout`, a
 * private link to /proc/self/fd/1) or to anything but a regular file in a
 * writable directory is refused even with --force (`output_forbidden`,
 * exit 2), by every verb that writes a named file; `-` writes the receipt
 * itself to a piped stdout and is refused on a terminal.
 */
import { timelessTar } from "../../helpers/receipt-bytes.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StepJournal } from "../../../src/steps/writer.ts";
import { bernstein, bernsteinJson, binPath } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";

const dirs = tempDirs("e2e-output-targets");
afterAll(() => dirs.cleanup());

let cwd = "";
beforeAll(async () => {
  cwd = dirs.make();
  const j = StepJournal.open(join(cwd, ".sdd"), "ag");
  for (let i = 0; i < 3; i++) j.append({ input_hash: `h${i}`, prompt: "p", tool_call: { name: "t" } as never, tool_result: { i } });
  j.close();
  const events = Array.from({ length: 5 }, (_, i) => JSON.stringify({ event: "task_completed", task_id: `T-${i}` }) + "\n").join("");
  expect((await bernstein(["journal", "record", "r1"], { cwd, stdin: events })).code).toBe(0);
  expect((await bernstein(["keys", "generate", "--name", "log"], { cwd })).code).toBe(0);
  expect((await bernstein(["journal", "checkpoint", "r1", "--sign", "log.key", "--out", "old.cp"], { cwd })).code).toBe(0);
});

/** Run the binary with stdout redirected to a regular file (the case where /proc/self/fd/1 resolves to a writable file). */
async function withStdoutFile(args: string[], file: string): Promise<{ code: number; stderr: string; stdout: Buffer }> {
  const fd = openSync(file, "w");
  try {
    const proc = Bun.spawn([binPath(), ...args], { cwd, env: { ...process.env, NO_COLOR: "1" }, stdin: "ignore", stdout: fd, stderr: "pipe" });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    return { code, stderr, stdout: readFileSync(file) };
  } finally {
    closeSync(fd);
  }
}

describe("symlinks into /proc and other non-files as OUT (item 1)", () => {
  test("replay export A /dev/stdout --force, stdout a regular file: refused, /dev/stdout untouched", async () => {
    const before = lstatSync("/dev/stdout");
    const link = readlinkSync("/dev/stdout");
    try {
      for (const verb of ["export", "publish"]) {
        const r = await withStdoutFile(["replay", verb, "ag", "/dev/stdout", "--force", "--yes-i-want-to-publish", "--as-json"].filter((a) => verb === "publish" || a !== "--yes-i-want-to-publish"), join(cwd, `stdout-${verb}.txt`));
        expect({ verb, code: r.code }).toEqual({ verb, code: 2 });
        const doc = JSON.parse(r.stdout.toString());
        expect([doc.ok, doc.error]).toEqual([false, "output_forbidden"]);
        expect(doc.detail).toContain("/proc");
        const after = lstatSync("/dev/stdout");
        expect([after.isSymbolicLink(), after.ino, readlinkSync("/dev/stdout")]).toEqual([true, before.ino, link]);
      }
      expect(readdirSync("/dev").filter((n) => n.startsWith("stdout.tmp."))).toEqual([]);
    } finally {
      // A regression must not leave this machine without its /dev/stdout.
      if (!lstatSync("/dev/stdout").isSymbolicLink()) {
        rmSync("/dev/stdout", { force: true });
        symlinkSync(link, "/dev/stdout");
      }
    }
  });

  test("a private link to /proc/self/fd/1 is refused with --force, for stdout a file or a pipe; the link and the file stay as they were", async () => {
    const link = join(cwd, "x");
    symlinkSync("/proc/self/fd/1", link);
    const toFile = await withStdoutFile(["replay", "export", "ag", "x", "--force"], join(cwd, "stdout.txt"));
    expect(toFile.code).toBe(2);
    expect(toFile.stdout.length).toBe(0);
    expect(toFile.stderr).toContain("refusing to write the receipt to x");
    const piped = await bernsteinJson(["replay", "export", "ag", "x", "--force"], { cwd });
    expect([piped.code, piped.json.error]).toEqual([2, "output_forbidden"]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe("/proc/self/fd/1");
    expect(readdirSync(cwd).filter((n) => n.startsWith("x.tmp."))).toEqual([]);
  });

  test("every other verb that writes a named file refuses the same link, before anything is written", async () => {
    const link = join(cwd, "y");
    symlinkSync("/proc/self/fd/1", link);
    const runs: string[][] = [
      ["journal", "prove", "r1", "--index", "0", "--out", "y"],
      ["journal", "prove", "r1", "--index", "0", "--out", "proof.txt", "--row-out", "y"],
      ["journal", "prove-consistency", "r1", "--from", "old.cp", "--out", "y"],
      ["journal", "checkpoint", "r1", "--sign", "log.key", "--out", "y"],
      ["verify", "run", "r1", "--signing-key-path", "log.key", "--output", "y"],
      ["replay", "r1", "--html", "y", "--force"],
    ];
    for (const args of runs) {
      const r = await withStdoutFile([...args, "--as-json"], join(cwd, "stdout.txt"));
      const doc = JSON.parse(r.stdout.toString());
      expect({ args, code: r.code, error: doc.error }).toEqual({ args, code: 2, error: "output_forbidden" });
      expect(readlinkSync(link)).toBe("/proc/self/fd/1");
    }
    // The proof was not written either: both outputs are checked first.
    expect(existsSync(join(cwd, "proof.txt"))).toBe(false);
  });

  test("a symlink to a regular file in a writable directory still works as before (the link is replaced by the receipt)", async () => {
    const sub = join(cwd, "real");
    mkdirSync(sub);
    writeFileSync(join(sub, "target.tar"), "old\n");
    symlinkSync(join(sub, "target.tar"), join(cwd, "z.tar"));
    const refused = await bernsteinJson(["replay", "export", "ag", "z.tar"], { cwd });
    expect([refused.code, refused.json.error]).toEqual([2, "output_exists"]);
    const r = await bernsteinJson(["replay", "export", "ag", "z.tar", "--force"], { cwd });
    expect(r.code).toBe(0);
    expect(lstatSync(join(cwd, "z.tar")).isFile()).toBe(true);
    expect(readFileSync(join(sub, "target.tar"), "utf8")).toBe("old\n");
    expect((await bernsteinJson(["replay", "verify", join(cwd, "z.tar")], { cwd })).code).toBe(0);
  });

  test("a symlink to nothing, or to a FIFO, is refused with --force and stays", async () => {
    symlinkSync(join(cwd, "nowhere", "f.tar"), join(cwd, "dangling.tar"));
    expect(Bun.spawnSync(["mkfifo", join(cwd, "fifo")]).exitCode).toBe(0);
    symlinkSync(join(cwd, "fifo"), join(cwd, "to-fifo.tar"));
    for (const out of ["dangling.tar", "to-fifo.tar"]) {
      const r = await bernsteinJson(["replay", "export", "ag", out, "--force"], { cwd, timeoutMs: 20_000 });
      expect({ out, code: r.code, error: r.json.error }).toEqual({ out, code: 2, error: "output_forbidden" });
      expect(lstatSync(join(cwd, out)).isSymbolicLink()).toBe(true);
    }
    expect(lstatSync(join(cwd, "fifo")).isFIFO()).toBe(true);
  });
});

describe("- as OUT: the receipt on stdout", () => {
  test("export and publish write exactly the receipt's bytes to a piped stdout, and nothing else there", async () => {
    // A temp directory of its own: the private copy made before sending must be gone afterwards.
    const tmp = join(cwd, "tmp");
    mkdirSync(tmp);
    for (const verb of ["export", "publish"]) {
      const extra = verb === "publish" ? ["--yes-i-want-to-publish"] : [];
      const file = join(cwd, `${verb}-file.tar`);
      expect((await bernstein(["replay", verb, "ag", file, ...extra], { cwd })).code).toBe(0);
      const proc = Bun.spawn([binPath(), "replay", verb, "ag", "-", ...extra], { cwd, env: { ...process.env, NO_COLOR: "1", TMPDIR: tmp }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [out, code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), proc.exited]);
      expect({ verb, code }).toEqual({ verb, code: 0 });
      const bytes = new Uint8Array(out);
      // What arrived is the receipt a file export writes (the two may be a second apart: created_at and mtimes blanked) and it verifies.
      const saved = join(cwd, `${verb}-stdout.tar`);
      writeFileSync(saved, bytes);
      expect(bytes.length).toBe(readFileSync(file).length);
      expect(timelessTar(saved).equals(timelessTar(file))).toBe(true);
      expect((await bernsteinJson(["replay", "verify", saved], { cwd })).code).toBe(0);
    }
    expect(existsSync(join(cwd, "-"))).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
  });

  test("- with --as-json is a usage error (the document and the archive would share stdout)", async () => {
    const r = await bernsteinJson(["replay", "export", "ag", "-"], { cwd });
    expect([r.code, r.json.error]).toEqual([2, "usage"]);
    expect(existsSync(join(cwd, "-"))).toBe(false);
  });

  test("- on a terminal is refused (exit 2); nothing is written", async () => {
    const relay = [
      "import os, pty, sys",
      "pid, fd = pty.fork()",
      "if pid == 0:",
      "    os.execv(sys.argv[1], sys.argv[1:])",
      "out = b''",
      "while True:",
      "    try: data = os.read(fd, 65536)",
      "    except OSError: break",
      "    if not data: break",
      "    out += data",
      "sys.stdout.buffer.write(out)",
      "sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) & 255)",
    ].join("\n");
    for (const verb of ["export", "publish"]) {
      const extra = verb === "publish" ? ["--yes-i-want-to-publish"] : [];
      const proc = Bun.spawn(["python3", "-c", relay, binPath(), "replay", verb, "ag", "-", ...extra], { cwd, env: { ...process.env, NO_COLOR: "1" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      expect({ verb, code }).toEqual({ verb, code: 2 });
      expect(out).toContain("refusing to write a receipt (a tar archive) to a terminal");
      expect(out).not.toContain("ustar");
    }
    expect(existsSync(join(cwd, "-"))).toBe(false);
  }, 30_000);
});
