import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { treeHeadOf } from "./checkpoint.ts";
import { parseNote } from "./note.ts";

/**
 * The last verified tree head per origin (`--remember`), as rekor-cli keeps
 * the last-seen tree head: `$XDG_CONFIG_HOME/bernstein/checkpoints/` (default
 * `~/.config/...`), one signed note per origin, file name = SHA-256(origin).
 * BERNSTEIN_CHECKPOINT_STORE overrides the folder (tests, CI caches).
 */
export function storeDir(): string {
  if (process.env.BERNSTEIN_CHECKPOINT_STORE) return process.env.BERNSTEIN_CHECKPOINT_STORE;
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "bernstein", "checkpoints");
}

function fileFor(origin: string): string {
  return join(storeDir(), `${new Bun.CryptoHasher("sha256").update(origin).digest("hex")}.note`);
}

export function rememberedHead(origin: string): { size: number; root: Uint8Array } | null {
  const f = fileFor(origin);
  if (!existsSync(f)) return null;
  const head = treeHeadOf(parseNote(readFileSync(f, "utf8")).text);
  return head.origin === origin ? { size: head.size, root: head.root } : null;
}

/** Keep `note` as the origin's head unless a larger one is already kept. */
export function remember(origin: string, note: string, size: number): void {
  const known = rememberedHead(origin);
  if (known && known.size > size) return;
  mkdirSync(storeDir(), { recursive: true, mode: 0o700 });
  writeFileAtomic(fileFor(origin), note, { mode: 0o600 });
}
