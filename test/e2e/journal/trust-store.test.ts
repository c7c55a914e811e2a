/**
 * Issue 29 item 2 through the compiled binary: the trust-on-first-use store
 * of `--remember` (one signed note per origin) is opened like every other
 * input. An entry that is garbage, a FIFO or /dev/zero is
 * `trust_store_corrupt` (exit 3, its path in the document) at once: never
 * exit 70, never a hang, never "nothing remembered".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";

function events(from: number, to: number): string {
  let s = "";
  for (let i = from; i <= to; i++) s += JSON.stringify({ event: "task_completed", task_id: `T-${i}` }) + "\n";
  return s;
}

let cwd = "";
let entry = "";
let goodEntry = Buffer.alloc(0);
const env = () => ({ BERNSTEIN_CHECKPOINT_STORE: join(cwd, "store") });
const VERIFY = ["journal", "verify-consistency", "old.cp", ".sdd/runs/r1/checkpoint", "proof.txt", "--public-key", "log.pub", "--remember"];
// A hang is killed well before the test's own timeout, so it fails on its exit code.
const run = (args: string[]) => bernsteinJson(args, { cwd, env: env(), timeoutMs: 20_000 });

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), "bernstein-trust-store-"));
  const w = (args: string[], stdin?: string) => bernstein(args, { cwd, env: env(), stdin });
  expect((await w(["keys", "generate", "--name", "log"])).code).toBe(0);
  expect((await w(["journal", "record", "r1"], events(1, 10))).code).toBe(0);
  expect((await w(["journal", "checkpoint", "r1", "--sign", "log.key"])).code).toBe(0);
  copyFileSync(join(cwd, ".sdd/runs/r1/checkpoint"), join(cwd, "old.cp"));
  expect((await w(["journal", "record", "r1"], events(11, 20))).code).toBe(0);
  expect((await w(["journal", "checkpoint", "r1", "--sign", "log.key"])).code).toBe(0);
  expect((await w(["journal", "prove-consistency", "r1", "--from", "old.cp", "--out", "proof.txt"])).code).toBe(0);
  const first = await run(VERIFY);
  expect([first.code, first.json.remembered]).toEqual([0, true]);
  const names = readdirSync(join(cwd, "store"));
  expect(names).toHaveLength(1);
  entry = join(cwd, "store", names[0]!);
  goodEntry = readFileSync(entry);
}, 60_000);

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function replaceEntry(make: (path: string) => void): void {
  rmSync(entry, { force: true });
  make(entry);
}

describe("the --remember store (trust on first use)", () => {
  test("a remembered entry is read and kept (baseline)", async () => {
    replaceEntry((p) => writeFileSync(p, goodEntry));
    const r = await run(VERIFY);
    expect([r.code, r.json.ok, r.json.remembered]).toEqual([0, true, true]);
  });

  const cases: [string, (p: string) => void, RegExp][] = [
    ["garbage text", (p) => writeFileSync(p, "this is not a signed note\n"), /not a signed checkpoint note/],
    ["random bytes", (p) => writeFileSync(p, Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x0a])), /not UTF-8|not a signed checkpoint note/],
    ["more than 64 KiB", (p) => writeFileSync(p, goodEntry.toString() + "x".repeat(70_000) + "\n"), /larger than 65536 bytes/],
    ["a note of another origin", (p) => writeFileSync(p, goodEntry.toString().replace("bernstein/r1\n", "someone/else\n")), /another origin/],
    ["a FIFO", (p) => expect(Bun.spawnSync(["mkfifo", p]).exitCode).toBe(0), /FIFO/],
    ["a symlink to /dev/zero", (p) => symlinkSync("/dev/zero", p), /character device/],
    ["a directory", (p) => Bun.spawnSync(["mkdir", p]), /directory/],
  ];
  for (const [name, make, why] of cases) {
    test(`${name} in its place: trust_store_corrupt, exit 3, the path named, nothing written`, async () => {
      replaceEntry(make);
      const before = lstatSync(entry);
      const r = await run(VERIFY);
      expect({ code: r.code, error: r.json.error, ok: r.json.ok }).toEqual({ code: 3, error: "trust_store_corrupt", ok: false });
      expect(r.json.path).toBe(entry);
      expect(r.json.detail).toContain(entry);
      expect(r.json.detail).toMatch(why);
      expect(r.stderr).not.toContain("    at ");
      // The corrupt entry is left as it was: not replaced by the newly verified head.
      const after = lstatSync(entry);
      expect([after.ino, after.mode, after.size]).toEqual([before.ino, before.mode, before.size]);
      // The human form names the entry on stderr, exit 3.
      const prose = await bernstein(VERIFY, { cwd, env: env(), timeoutMs: 20_000 });
      expect(prose.code).toBe(3);
      expect(prose.stderr).toContain(`the remembered checkpoint of bernstein/r1 at ${entry}`);
    }, 60_000);
  }
});
