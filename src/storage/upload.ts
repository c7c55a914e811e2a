import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RefusalError, UsageError } from "../errors/index.ts";
import { RemoteObject, StorageFailureError } from "./client.ts";
import { storageFlags } from "./config.ts";
import { toError } from "./errors.ts";
import { parseRemote, type S3Ref } from "./ref.ts";

/** An output URL: s3:// only (an http URL cannot be written to); exit 2 otherwise. */
export function outputRef(url: string): S3Ref {
  const ref = parseRemote(url);
  if (ref.kind !== "s3") throw new UsageError(`cannot write to ${ref.url}: outputs go to s3://BUCKET/KEY`, "storage_url_invalid", { url: ref.url });
  return ref;
}

/**
 * Put a small document (a seal) at `url`: an object already holding the
 * same bytes is left as it is (`uploaded: false`), one holding other bytes
 * is refused (`output_exists`): a seal in storage is never replaced.
 */
export async function putOnce(url: string, bytes: Uint8Array): Promise<{ uploaded: boolean }> {
  const obj = new RemoteObject(outputRef(url), storageFlags());
  try {
    if (await obj.exists()) {
      const size = await obj.size();
      const same = size === bytes.length && (size === 0 || Buffer.from(await new Response(await obj.range(0, size)).arrayBuffer()).equals(bytes));
      if (same) return { uploaded: false };
      throw new RefusalError("output_exists", `refusing to overwrite ${url}: it holds another document`, { output: url });
    }
    await obj.put(bytes);
    return { uploaded: true };
  } catch (err) {
    if (err instanceof StorageFailureError) throw toError(err.failure);
    throw err;
  }
}

/**
 * Write an output to `s3://bucket/key`: `write` makes it in a private
 * temporary file (0600 in a 0700 directory, removed afterwards), which is
 * then uploaded in parts (multipart: a 20 MiB receipt goes up as 4 parts). S3 shows an object only once its upload
 * is complete, so a reader sees the old object or the new one, never part
 * of one; a failed or interrupted upload leaves nothing visible. Without
 * `force` an existing object is refused (`output_exists`), as a file is.
 */
export async function writeRemote<T>(url: string, force: boolean, write: (localPath: string) => Promise<T>): Promise<T> {
  const obj = new RemoteObject(outputRef(url), storageFlags());
  try {
    if (!force && (await obj.exists())) {
      throw new RefusalError("output_exists", `refusing to overwrite ${url}: it exists (pass --force to replace it)`, { output: url });
    }
    const dir = mkdtempSync(join(tmpdir(), "bernstein-upload-"));
    try {
      const local = join(dir, "out");
      const result = await write(local);
      await obj.upload(local);
      return result;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } catch (err) {
    if (err instanceof StorageFailureError) throw toError(err.failure);
    throw err;
  }
}
