/** Release archives: reproducible bytes, readable by Python's tarfile/zipfile, SHA256SUMS over all of them. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TARGETS, binaryName } from "../../scripts/build.ts";
import { archiveName, packageAll, tarGz, zip } from "../../scripts/package.ts";

/** Compressible but not trivial: text runs mixed with pseudo-random bytes. */
function payload(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = i % 3 === 0 ? x >>> 24 : 97 + (i % 26);
  }
  return out;
}

/** Python's own reader as the oracle: members, modes, owners, mtimes, bytes. */
function pyInspect(kind: "tar" | "zip", file: string, extractTo: string): any {
  const script = kind === "tar"
    ? `import tarfile,json,sys\nt=tarfile.open(sys.argv[1],'r:gz')\nm=t.getmembers()\nt.extractall(sys.argv[2])\nprint(json.dumps([[x.name,x.mode,x.uid,x.gid,x.uname,x.gname,x.mtime,x.isfile()] for x in m]))`
    : `import zipfile,json,sys\nz=zipfile.ZipFile(sys.argv[1])\nbad=z.testzip()\nz.extractall(sys.argv[2])\nprint(json.dumps({'bad':bad,'members':[[i.filename,i.external_attr>>16,i.date_time,i.compress_type] for i in z.infolist()]}))`;
  const r = Bun.spawnSync(["python3", "-c", script, file, extractTo], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return JSON.parse(r.stdout.toString());
}

describe("scripts/package.ts", () => {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-package-"));
  const data = payload(300_000, 7);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("tar.gz: one 0755 member owned by 0/0 at a fixed mtime, same bytes every time", async () => {
    const a = await tarGz("bernstein", data);
    expect(Buffer.compare(Buffer.from(a), Buffer.from(await tarGz("bernstein", data)))).toBe(0);
    expect(a[9]).toBe(3);
    writeFileSync(join(dir, "a.tar.gz"), a);
    expect(pyInspect("tar", join(dir, "a.tar.gz"), join(dir, "tx"))).toEqual([["bernstein", 0o755, 0, 0, "", "", 0, true]]);
    expect(Buffer.compare(readFileSync(join(dir, "tx", "bernstein")), Buffer.from(data))).toBe(0);
  });

  test("zip: one deflated 0755 member, CRC checked by zipfile, same bytes every time", () => {
    const a = zip("bernstein.exe", data);
    expect(Buffer.compare(Buffer.from(a), Buffer.from(zip("bernstein.exe", data)))).toBe(0);
    expect(a.length).toBeLessThan(data.length);
    writeFileSync(join(dir, "a.zip"), a);
    const seen = pyInspect("zip", join(dir, "a.zip"), join(dir, "zx"));
    expect(seen).toEqual({ bad: null, members: [["bernstein.exe", 0o100755, [1980, 1, 1, 0, 0, 0], 8]] });
    expect(Buffer.compare(readFileSync(join(dir, "zx", "bernstein.exe")), Buffer.from(data))).toBe(0);
  });

  test("a corrupted zip member is detected by a standard reader", () => {
    const a = Buffer.from(zip("bernstein.exe", payload(5000, 3), 0));
    a[40 + 13] ^= 0xff; // a byte inside the deflated body (local header is 30 + 13 bytes)
    writeFileSync(join(dir, "bad.zip"), a);
    const r = Bun.spawnSync(["python3", "-c", "import zipfile,sys\nprint(zipfile.ZipFile(sys.argv[1]).testzip())", join(dir, "bad.zip")], { stderr: "pipe" });
    expect(r.exitCode !== 0 || r.stdout.toString().trim() === "bernstein.exe").toBe(true);
  });

  test("packageAll: an archive per platform and SHA256SUMS that sha256sum -c accepts", async () => {
    const dist = join(dir, "dist");
    Bun.spawnSync(["mkdir", "-p", dist]);
    TARGETS.forEach(([p], i) => writeFileSync(join(dist, binaryName(p)), payload(20_000 + i, i)));
    await packageAll(dist);
    const sums = readFileSync(join(dist, "SHA256SUMS"), "utf8").trim().split("\n");
    const names = sums.map((l) => l.split("  ")[1]);
    expect(names).toEqual(TARGETS.flatMap(([p]) => [archiveName(p), binaryName(p)]).sort());
    expect(names).toContain("bernstein-windows-x64.zip");
    expect(names).toContain("bernstein-linux-arm64.tar.gz");
    const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: dist, stderr: "pipe" });
    expect(check.exitCode).toBe(0);
    // Reproducible end to end: packing again gives the same SHA256SUMS.
    await packageAll(dist);
    expect(readFileSync(join(dist, "SHA256SUMS"), "utf8").trim().split("\n")).toEqual(sums);
  });
});
