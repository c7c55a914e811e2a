import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { RefusalError } from "../errors/index.ts";
import { fsyncDir } from "./atomic.ts";
import { checkOutputTarget } from "./output-target.ts";
import { trackTemp, untrackTemp } from "./temp-files.ts";

/**
 * Put a finished temp file under its final name. Without `replace`,
 * link() creates the name only if it does not exist (atomic: a file that
 * appeared since the caller's checks is never overwritten); filesystems
 * without hard links fall back to check-then-rename. The target is checked
 * again here (output-target.ts), right before it would be replaced.
 */
export function publishTemp(tmp: string, out: string, replace: boolean): void {
  checkOutputTarget(out);
  if (replace) return renameSync(tmp, out);
  try {
    linkSync(tmp, out);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      throw new RefusalError("output_exists", `refusing to overwrite ${out}: it exists (pass --force to replace it)`, { output: out });
    }
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EXDEV") throw err;
    if (existsSync(out)) throw new RefusalError("output_exists", `refusing to overwrite ${out}: it exists (pass --force to replace it)`, { output: out });
    return renameSync(tmp, out);
  }
  unlinkSync(tmp);
}

export interface AtomicStreamOptions {
  /** Rename over an existing file (default); false: create only, refused atomically when the name exists. */
  replace?: boolean;
  fileMode?: number;
  /** Mode of parent directories this call creates. */
  dirMode?: number;
}

/**
 * A file written in pieces that appears under its name only when complete:
 * the pieces go to a temp file beside it (`<name>.tmp.<pid>.<8 hex>`,
 * removed on SIGINT/SIGTERM by the temp-file registry), `commit` fsyncs and
 * renames (or links) it into place, `abort` removes it.
 */
export class AtomicFileStream {
  private readonly tmp: string;
  private fd: number | null;
  bytes = 0;

  constructor(
    readonly path: string,
    private readonly opts: AtomicStreamOptions = {},
  ) {
    const dir = dirname(path);
    mkdirSync(dir, { recursive: true, mode: opts.dirMode ?? 0o755 });
    const suffix = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0")).join("");
    this.tmp = join(dir, `${basename(path)}.tmp.${process.pid}.${suffix}`);
    this.fd = openSync(this.tmp, "wx", opts.fileMode ?? 0o644);
    trackTemp(this.tmp);
  }

  write(chunk: string | Uint8Array): void {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let off = 0;
    while (off < bytes.length) off += writeSync(this.fd!, bytes, off, bytes.length - off);
    this.bytes += bytes.length;
  }

  commit(): void {
    fsyncSync(this.fd!);
    closeSync(this.fd!);
    this.fd = null;
    try {
      publishTemp(this.tmp, this.path, this.opts.replace ?? true);
    } catch (err) {
      this.abort();
      throw err;
    }
    untrackTemp(this.tmp);
    fsyncDir(dirname(this.path));
  }

  abort(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        /* already closed */
      }
      this.fd = null;
    }
    try {
      unlinkSync(this.tmp);
    } catch {
      /* never created or already renamed */
    }
    untrackTemp(this.tmp);
  }
}
