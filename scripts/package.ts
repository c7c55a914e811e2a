/**
 * Release archives: `bun scripts/package.ts` builds the six binaries (unless
 * --no-build; a binary already built from the same inputs is reused, never
 * compiled again, so the archives hold the bytes that were tested) and writes
 * dist/bernstein-<platform>.tar.gz (.zip for Windows) plus dist/SHA256SUMS over
 * the archives and the bare binaries.
 * Archives are reproducible: one member `bernstein` (`bernstein.exe`), fixed
 * mtime (SOURCE_DATE_EPOCH, else 0), uid/gid 0, no user names, fixed gzip header.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateRawSync, gzipSync } from "node:zlib";
import tar from "tar-stream";
import { TARGETS, binaryName, buildAll, sha256File, type Platform } from "./build.ts";

const root = join(import.meta.dir, "..");

/** Member timestamp, seconds since the epoch. */
function epoch(): number {
  const s = Number(process.env.SOURCE_DATE_EPOCH ?? 0);
  return Number.isInteger(s) && s >= 0 ? s : 0;
}

export function archiveName(platform: Platform): string {
  return `bernstein-${platform}${platform.startsWith("windows") ? ".zip" : ".tar.gz"}`;
}

/** A gzip'd ustar archive holding one executable `name`. */
export async function tarGz(name: string, data: Uint8Array, mtime = epoch()): Promise<Uint8Array> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  pack.entry({ name, size: data.length, mode: 0o755, mtime: new Date(mtime * 1000), uid: 0, gid: 0, uname: "", gname: "", type: "file" }, Buffer.from(data));
  pack.finalize();
  await done;
  const gz = gzipSync(Buffer.concat(chunks));
  gz[9] = 3; // OS byte: zlib writes the builder's OS; pin "Unix" so every builder agrees
  return gz;
}

/** MS-DOS date/time words for a Unix time (zip's only mandatory timestamp; 1980 is its floor). */
function dosDateTime(unix: number): [number, number] {
  const d = new Date(Math.max(unix, 315532800) * 1000);
  const time = (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | (d.getUTCSeconds() >> 1);
  const date = ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate();
  return [time, date];
}

/** A zip holding one deflated executable `name` (Unix mode 0755 in the external attributes). */
export function zip(name: string, data: Uint8Array, mtime = epoch()): Uint8Array {
  const nameBytes = Buffer.from(name, "utf8");
  const body = deflateRawSync(data);
  const crc = Bun.hash.crc32(data) >>> 0;
  const [time, date] = dosDateTime(mtime);
  // Fields shared by the local header (from "version needed") and the central one.
  const common = Buffer.alloc(26);
  common.writeUInt16LE(20, 0); // version needed: 2.0 (deflate)
  common.writeUInt16LE(0, 2); // flags
  common.writeUInt16LE(8, 4); // method: deflate
  common.writeUInt16LE(time, 6);
  common.writeUInt16LE(date, 8);
  common.writeUInt32LE(crc, 10);
  common.writeUInt32LE(body.length, 14);
  common.writeUInt32LE(data.length, 18);
  common.writeUInt16LE(nameBytes.length, 22);
  common.writeUInt16LE(0, 24); // extra length
  const local = Buffer.concat([u32(0x04034b50), common, nameBytes]);
  const tail = Buffer.alloc(16);
  tail.writeUInt16LE(0, 0); // comment length
  tail.writeUInt16LE(0, 2); // disk number
  tail.writeUInt16LE(0, 4); // internal attributes
  tail.writeUInt32LE((0o100755 << 16) >>> 0, 6); // external: regular file, rwxr-xr-x
  tail.writeUInt32LE(0, 10); // local header offset
  const central = Buffer.concat([u32(0x02014b50), u16((3 << 8) | 20), common, tail.subarray(0, 14), nameBytes]);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8); // entries on this disk
  end.writeUInt16LE(1, 10); // entries in total
  end.writeUInt32LE(central.length, 12);
  end.writeUInt32LE(local.length + body.length, 16);
  return Buffer.concat([local, body, central, end]);
}

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
}

function u16(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return b;
}

/** The archive of one platform's binary, as bytes. */
export async function archiveOf(platform: Platform, binary: Uint8Array): Promise<Uint8Array> {
  return platform.startsWith("windows") ? zip("bernstein.exe", binary) : tarGz("bernstein", binary);
}

export async function packageAll(dist = join(root, "dist")): Promise<void> {
  const files: string[] = [];
  for (const [platform] of TARGETS) {
    const archive = archiveName(platform);
    writeFileSync(join(dist, archive), await archiveOf(platform, readFileSync(join(dist, binaryName(platform)))));
    console.error(`packed ${archive}`);
    files.push(archive, binaryName(platform));
  }
  const sums = files.sort().map((f) => `${sha256File(join(dist, f))}  ${f}`);
  writeFileSync(join(dist, "SHA256SUMS"), sums.join("\n") + "\n");
  console.error(`wrote dist/SHA256SUMS (${files.length} files)`);
}

if (import.meta.main) {
  try {
    if (!process.argv.includes("--no-build")) await buildAll();
    await packageAll();
  } catch (err) {
    console.error(`package: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
