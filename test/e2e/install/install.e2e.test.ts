/**
 * scripts/install.sh against release archives served from 127.0.0.1: the
 * good archive installs a binary that runs; a tampered or unlisted archive is
 * refused and nothing is installed (an existing install stays as it was).
 * Every release's SHA256SUMS is signed (Ed25519, openssl) with a throwaway
 * key given through --public-key; a missing or bad signature, or a
 * SHA256SUMS altered after signing, is refused before any archive is fetched.
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

const KEY = join(work, "release.key");
const PUB = join(work, "release.pub");
const OTHER_KEY = join(work, "other.key");

function openssl(args: string[]): void {
  const r = Bun.spawnSync(["openssl", ...args], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr.toString()}`);
}

/** Detached Ed25519 signature of `data`, as the release workflow makes it. */
function sign(data: Uint8Array, key = KEY): Uint8Array {
  const dir = mkdtempSync(join(work, "sign-"));
  writeFileSync(join(dir, "SHA256SUMS"), data);
  openssl(["pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", join(dir, "SHA256SUMS"), "-out", join(dir, "SHA256SUMS.sig")]);
  const sig = readFileSync(join(dir, "SHA256SUMS.sig"));
  rmSync(dir, { recursive: true, force: true });
  return sig;
}

/**
 * Publish one release under /<tag>/: every Unix platform name gets `archive`,
 * SHA256SUMS lists `listed` and is signed with `signer` (none: no .sig).
 */
function publish(tag: string, archive: Uint8Array, listed: Uint8Array | null, signer: string | null = KEY): void {
  const lines: string[] = [];
  for (const [p] of TARGETS) {
    if (p.startsWith("windows")) continue;
    files.set(`/${tag}/${archiveName(p)}`, archive);
    if (listed) lines.push(`${sha256(listed)}  ${archiveName(p)}`);
  }
  lines.push(`${"0".repeat(64)}  unrelated.txt`);
  const sums = new TextEncoder().encode(lines.join("\n") + "\n");
  files.set(`/${tag}/SHA256SUMS`, sums);
  if (signer) files.set(`/${tag}/SHA256SUMS.sig`, sign(sums, signer));
}

/** install.sh with the throwaway release key, unless `releaseKey` (the key built into the script) is asked for. */
async function install(args: string[], releaseKey = false): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn(["sh", INSTALL, ...args, ...(releaseKey ? [] : ["--public-key", PUB])], { stdout: "pipe", stderr: "pipe", env: { ...process.env, TMPDIR: work } });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  return { code, stderr };
}

beforeAll(async () => {
  openssl(["genpkey", "-algorithm", "ed25519", "-out", KEY]);
  openssl(["pkey", "-in", KEY, "-pubout", "-out", PUB]);
  openssl(["genpkey", "-algorithm", "ed25519", "-out", OTHER_KEY]);
  const good = await tarGz("bernstein", readFileSync(binPath()));
  const tampered = Uint8Array.from(good);
  tampered[Math.floor(tampered.length / 2)] ^= 0x01;
  publish(`v${VERSION}`, good, good);
  publish("v9.9.8", tampered, good); // the archive was altered after SHA256SUMS was written
  publish("v9.9.7", good, null); // SHA256SUMS does not list the archive at all
  const broken = await tarGz("bernstein", new TextEncoder().encode("#!/bin/sh\necho 'libstdc++.so.6: cannot open shared object file' >&2\nexit 127\n"));
  publish("v9.9.6", broken, broken); // checks out, but cannot run on this machine
  publish("v9.9.5", good, good, null); // no SHA256SUMS.sig
  publish("v9.9.4", good, good, OTHER_KEY); // signed, but not by the release key
  // The archive was altered and SHA256SUMS rewritten to match it; the signature is the original's.
  publish("v9.9.3", tampered, tampered);
  files.set("/v9.9.3/SHA256SUMS.sig", files.get(`/v${VERSION}/SHA256SUMS.sig`)!);
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
    expect(requests).toEqual([`/v${VERSION}/SHA256SUMS`, `/v${VERSION}/SHA256SUMS.sig`, `/v${VERSION}/bernstein-${HOST}.tar.gz`]);
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

  test("a release without SHA256SUMS.sig is refused before the archive is fetched", async () => {
    const dir = join(work, "unsigned");
    requests.length = 0;
    const r = await install(["--version", "9.9.5", "--dir", dir, "--base-url", base]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("could not download");
    expect(r.stderr).toContain("SHA256SUMS.sig: refusing an unsigned release; nothing installed");
    expect(requests).toEqual(["/v9.9.5/SHA256SUMS", "/v9.9.5/SHA256SUMS.sig"]);
    expect(existsSync(dir)).toBe(false);
  });

  test("a signature by another key is refused", async () => {
    const dir = join(work, "otherkey");
    requests.length = 0;
    const r = await install(["--version", "9.9.4", "--dir", dir, "--base-url", base]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("bad signature: SHA256SUMS.sig does not verify SHA256SUMS against the release key; nothing installed");
    expect(requests).toEqual(["/v9.9.4/SHA256SUMS", "/v9.9.4/SHA256SUMS.sig"]);
    expect(existsSync(dir)).toBe(false);
  });

  test("a SHA256SUMS rewritten to match a tampered archive fails its signature: refused, existing install untouched", async () => {
    const dir = join(work, "rewritten");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "bernstein"), "previous install\n");
    requests.length = 0;
    const r = await install(["--version", "9.9.3", "--dir", dir, "--base-url", base]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("bad signature");
    expect(requests).not.toContain(`/v9.9.3/bernstein-${HOST}.tar.gz`);
    expect(readdirSync(dir)).toEqual(["bernstein"]);
    expect(readFileSync(join(dir, "bernstein"), "utf8")).toBe("previous install\n");
  });

  test("without --public-key the script trusts only the release key it carries (= release-signing.pub)", async () => {
    const embedded = /RELEASE_PUBLIC_KEY='([^']*)'/.exec(readFileSync(INSTALL, "utf8"))?.[1];
    expect(embedded).toBeDefined();
    expect(embedded + "\n").toBe(readFileSync(join(ROOT, "release-signing.pub"), "utf8"));
    // The test release is signed by a throwaway key, so the carried key refuses it.
    const dir = join(work, "releasekey");
    const r = await install(["--version", VERSION, "--dir", dir, "--base-url", base], true);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("bad signature");
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
