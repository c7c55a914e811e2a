/**
 * scripts/install.sh against release archives served from 127.0.0.1: the
 * good archive installs a binary that runs; a tampered or unlisted archive is
 * refused and nothing is installed (an existing install stays as it was).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import { TARGETS } from "../../../scripts/build.ts";
import { archiveName, tarGz } from "../../../scripts/package.ts";
import { ROOT, binPath } from "../../helpers/cli.ts";

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const INSTALL = join(ROOT, "scripts", "install.sh");
const HOST = `${process.platform === "darwin" ? "darwin" : "linux"}-${process.arch === "arm64" ? "arm64" : "x64"}`;
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

/** Release folders by URL path: `/v<V>/<file>` -> bytes. */
const files = new Map<string, Uint8Array>();
const requests: string[] = [];
let server: Server<undefined>;
let base: string;
const work = mkdtempSync(join(tmpdir(), "bernstein-install-e2e-"));

/** Publish one release under /<tag>/: every Unix platform name gets `archive`, SHA256SUMS lists `listed`. */
function publish(tag: string, archive: Uint8Array, listed: Uint8Array | null): void {
  const lines: string[] = [];
  for (const [p] of TARGETS) {
    if (p.startsWith("windows")) continue;
    files.set(`/${tag}/${archiveName(p)}`, archive);
    if (listed) lines.push(`${sha256(listed)}  ${archiveName(p)}`);
  }
  lines.push(`${"0".repeat(64)}  unrelated.txt`);
  files.set(`/${tag}/SHA256SUMS`, new TextEncoder().encode(lines.join("\n") + "\n"));
}

async function install(args: string[]): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn(["sh", INSTALL, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, TMPDIR: work } });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  return { code, stderr };
}

beforeAll(async () => {
  const good = await tarGz("bernstein", readFileSync(binPath()));
  const tampered = Uint8Array.from(good);
  tampered[Math.floor(tampered.length / 2)] ^= 0x01;
  publish(`v${VERSION}`, good, good);
  publish("v9.9.8", tampered, good); // the archive was altered after SHA256SUMS was written
  publish("v9.9.7", good, null); // SHA256SUMS does not list the archive at all
  const broken = await tarGz("bernstein", new TextEncoder().encode("#!/bin/sh\necho 'libstdc++.so.6: cannot open shared object file' >&2\nexit 127\n"));
  publish("v9.9.6", broken, broken); // checks out, but cannot run on this machine
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(path);
      const body = files.get(path);
      return body ? new Response(body) : new Response("not found", { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
}, 60_000);

afterAll(() => {
  server?.stop(true);
  rmSync(work, { recursive: true, force: true });
});

describe("scripts/install.sh", () => {
  test("installs the checked archive for this platform; the binary runs", async () => {
    const dir = join(work, "good", "bin");
    requests.length = 0;
    const r = await install(["--version", VERSION, "--dir", dir, "--base-url", base]);
    expect(r.stderr).toContain(`installed bernstein ${VERSION} (${HOST}) to ${dir}/bernstein`);
    expect(r.code).toBe(0);
    expect(requests).toEqual([`/v${VERSION}/SHA256SUMS`, `/v${VERSION}/bernstein-${HOST}.tar.gz`]);
    expect(readdirSync(dir)).toEqual(["bernstein"]);
    const v = Bun.spawnSync([join(dir, "bernstein"), "--version"]);
    expect(v.exitCode).toBe(0);
    expect(v.stdout.toString().trim()).toBe(VERSION);
    expect(Buffer.compare(readFileSync(join(dir, "bernstein")), readFileSync(binPath()))).toBe(0);
  }, 60_000);

  test("a tampered archive is refused: exit 1, the existing install untouched, no temp files left", async () => {
    const dir = join(work, "tampered");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "bernstein"), "previous install\n");
    const r = await install(["--version", "9.9.8", "--dir", dir, "--base-url", `${base}/`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`checksum mismatch for bernstein-${HOST}.tar.gz`);
    expect(r.stderr).toContain("nothing installed");
    expect(readdirSync(dir)).toEqual(["bernstein"]);
    expect(readFileSync(join(dir, "bernstein"), "utf8")).toBe("previous install\n");
    expect(readdirSync(work).filter((f) => f.startsWith("bernstein-install."))).toEqual([]);
  }, 60_000);

  test("an archive SHA256SUMS does not list is refused", async () => {
    const dir = join(work, "unlisted");
    const r = await install(["--version", "v9.9.7", "--dir", dir, "--base-url", base]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`SHA256SUMS does not list bernstein-${HOST}.tar.gz`);
    expect(existsSync(dir)).toBe(false);
  });

  test("a binary that does not run here is not installed", async () => {
    const dir = join(work, "broken");
    const r = await install(["--version", "9.9.6", "--dir", dir, "--base-url", base]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the downloaded bernstein does not run here");
    expect(r.stderr).toContain("libstdc++.so.6");
    expect(existsSync(dir)).toBe(false);
  });

  test("a release that does not exist fails naming the URL", async () => {
    const dir = join(work, "missing");
    const r = await install(["--version", "0.0.0", "--dir", dir, "--base-url", base]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`could not download ${base}/v0.0.0/SHA256SUMS`);
    expect(existsSync(dir)).toBe(false);
  });

  test("usage errors exit 2", async () => {
    for (const args of [["--dir", "x", "--base-url", base], ["--version", VERSION, "--base-url", base], ["--version", VERSION, "--dir", "x", "--bogus"]]) {
      const r = await install(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith("install.sh: error: ");
    }
  });
});
