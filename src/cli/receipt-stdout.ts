import { closeSync, mkdtempSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../errors/index.ts";
import { isTerminal } from "../render/terminal.ts";
import { stdoutClosed, writeStdoutBytes } from "./output.ts";

/**
 * `-` as the OUT of `replay export` / `replay publish`: the receipt goes to
 * standard output. It is made as usual (verified, then written whole) in a
 * private temp directory (0700), then its bytes are copied to fd 1 through
 * our own write loop (output.ts / fd-write.ts): what arrives is exactly
 * the file OUT would have held. Refused (exit 2) under --as-json (its
 * document would share stdout with the archive) and when stdout is a
 * terminal (a tar archive is not for the screen).
 */
export class ReceiptToStdout {
  private dir: string | null;
  /** Where the receipt is made before it is sent. */
  readonly path: string;

  constructor(json: boolean, command: string) {
    if (json) {
      throw new UsageError(`${command} - writes the receipt to standard output, where --as-json would put its document; give an OUT file with --as-json`);
    }
    if (isTerminal(1)) {
      throw new UsageError(`${command} -: refusing to write a receipt (a tar archive) to a terminal; redirect standard output to a file or a pipe, or give an OUT file`);
    }
    this.dir = mkdtempSync(join(tmpdir(), "bernstein-receipt-"));
    this.path = join(this.dir, "receipt.tar");
  }

  /** Copy the finished receipt to stdout (stops quietly when the reader has gone); the temp directory is removed first. */
  async send(): Promise<void> {
    const fd = openSync(this.path, "r");
    this.remove();
    try {
      const buf = new Uint8Array(1 << 20);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n === 0 || stdoutClosed()) return;
        await writeStdoutBytes(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Remove the temp directory (idempotent; also the interrupt guard's cleanup). */
  remove(): void {
    if (this.dir === null) return;
    rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}
