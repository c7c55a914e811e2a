import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { BernsteinError, InputError } from "../errors/index.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { openInput } from "../fsutil/input.ts";
import { treeHeadOf } from "./checkpoint.ts";
import { parseNote } from "./note.ts";

/**
 * The last verified tree head per origin (`--remember`), as rekor-cli keeps
 * the last-seen tree head: `$XDG_CONFIG_HOME/bernstein/checkpoints/` (default
 * `~/.config/...`), one signed note per origin, file name = SHA-256(origin).
 * BERNSTEIN_CHECKPOINT_STORE overrides the folder (tests, CI caches).
 *
 * An entry is opened like every other input (fsutil/input.ts: regular file
 * only, never blocking) and read up to MAX_ENTRY_BYTES. One that is not a
 * regular file, is too large, or is not a signed note of its origin is
 * `trust_store_corrupt` (exit 3): never "nothing remembered", which would
 * let any view of the log be accepted as the first.
 */
export function storeDir(): string {
  if (process.env.BERNSTEIN_CHECKPOINT_STORE) return process.env.BERNSTEIN_CHECKPOINT_STORE;
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "bernstein", "checkpoints");
}

/** A checkpoint or seal note is a few hundred bytes; room for many cosignatures. */
export const MAX_ENTRY_BYTES = 64 * 1024;

function fileFor(origin: string): string {
  return join(storeDir(), `${new Bun.CryptoHasher("sha256").update(origin).digest("hex")}.note`);
}

function corrupt(path: string, origin: string, why: string): InputError {
  return new InputError("trust_store_corrupt", `the remembered checkpoint of ${origin} at ${path} ${why}; remove it to trust the next verified checkpoint anew`, { path, origin });
}

/** The entry's text, or null when the origin has none. */
function readEntry(path: string, origin: string): string | null {
  let input;
  try {
    input = openInput(path, { what: "remembered checkpoint", unreadableCode: "trust_store_corrupt" });
  } catch (err) {
    if (err instanceof BernsteinError && err.code === "input_not_regular_file") throw corrupt(path, origin, `is ${String(err.facts.kind)}, not a regular file`);
    if (err instanceof BernsteinError) throw corrupt(path, origin, `cannot be read: ${err.message}`);
    throw err;
  }
  if (input === null) return null;
  try {
    // One byte past the cap tells an over-long entry from one that fits exactly.
    const buf = new Uint8Array(MAX_ENTRY_BYTES + 1);
    let len = 0;
    for (;;) {
      const n = input.read(buf, len, buf.length - len, len);
      if (n === 0) break;
      len += n;
      if (len > MAX_ENTRY_BYTES) throw corrupt(path, origin, `is larger than ${MAX_ENTRY_BYTES} bytes`);
    }
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(0, len));
    } catch {
      throw corrupt(path, origin, "is not UTF-8 text");
    }
  } catch (err) {
    if (err instanceof BernsteinError && err.facts.origin === undefined) throw corrupt(path, origin, `cannot be read: ${err.message}`);
    throw err;
  } finally {
    input.close();
  }
}

export function rememberedHead(origin: string): { size: number; root: Uint8Array } | null {
  const f = fileFor(origin);
  const text = readEntry(f, origin);
  if (text === null) return null;
  let head;
  try {
    head = treeHeadOf(parseNote(text).text);
  } catch (err) {
    throw corrupt(f, origin, `is not a signed checkpoint note: ${(err as Error).message}`);
  }
  if (head.origin !== origin) throw corrupt(f, origin, `holds a checkpoint of another origin (${head.origin})`);
  return { size: head.size, root: head.root };
}

/** Keep `note` as the origin's head unless a larger one is already kept. */
export function remember(origin: string, note: string, size: number): void {
  const known = rememberedHead(origin);
  if (known && known.size > size) return;
  mkdirSync(storeDir(), { recursive: true, mode: 0o700 });
  writeFileAtomic(fileFor(origin), note, { mode: 0o600 });
}
