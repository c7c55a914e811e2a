/**
 * Uploads to object storage (src/storage/upload.ts) against Swift's s3api:
 * big outputs go up in parts, and an object appears only complete.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { configureStorage } from "../../src/storage/config.ts";
import { writeRemote } from "../../src/storage/upload.ts";
import { available } from "../helpers/require-service.ts";
import { startSwiftS3, swiftInstalled, type SwiftS3 } from "../helpers/swift-s3.ts";

const enabled = available("swift-s3", swiftInstalled(), "OpenStack Swift and memcached are not installed");
let s3: SwiftS3;
let client: Bun.S3Client;

describe.skipIf(!enabled)("writeRemote (Swift s3api)", () => {
  beforeAll(async () => {
    s3 = await startSwiftS3("uploads");
    for (const [k, v] of Object.entries(s3.env)) process.env[k] = v;
    configureStorage({ endpoint: s3.endpoint, region: s3.region });
    client = new Bun.S3Client({ endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
  }, 120_000);
  afterAll(async () => {
    configureStorage({});
    await s3?.stop();
  });

  test("a 20 MiB output is uploaded in parts and reads back byte for byte", async () => {
    const bytes = new Uint8Array(20 << 20);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i >> 12) & 0xff;
    const r = await writeRemote(`s3://${s3.bucket}/big.bin`, false, async (local) => {
      writeFileSync(local, bytes);
      return "made";
    });
    expect(r).toBe("made");
    const stat = await client.file("big.bin").stat();
    expect(stat.size).toBe(bytes.length);
    // A multipart upload's ETag is "<md5 of the part md5s>-<parts>".
    const parts = /-(\d+)"?$/.exec(stat.etag ?? "");
    expect(parts).not.toBeNull();
    expect(Number(parts![1])).toBeGreaterThanOrEqual(3);
    const back = new Uint8Array(await client.file("big.bin").arrayBuffer());
    expect(Bun.hash(back)).toBe(Bun.hash(bytes));
  });

  test("an output that fails while being made leaves no object; an existing one is refused without force", async () => {
    await expect(
      writeRemote(`s3://${s3.bucket}/never.bin`, false, async (local) => {
        writeFileSync(local, "partial");
        throw new Error("made halfway");
      }),
    ).rejects.toThrow("made halfway");
    expect(await client.file("never.bin").exists()).toBe(false);
    await writeRemote(`s3://${s3.bucket}/once.bin`, false, async (local) => writeFileSync(local, "one"));
    await expect(writeRemote(`s3://${s3.bucket}/once.bin`, false, async (local) => writeFileSync(local, "two"))).rejects.toMatchObject({ code: "output_exists" });
    await writeRemote(`s3://${s3.bucket}/once.bin`, true, async (local) => writeFileSync(local, "two"));
    expect(await client.file("once.bin").text()).toBe("two");
  });
});
