/**
 * Where a streaming replay display writes its bytes (the command passes
 * stdout; tests collect them). `write` waits until the reader took them;
 * `writeSync` is for the pieces of a huge row, written as they are made.
 */
export interface ByteOutput {
  write(bytes: Uint8Array): Promise<void>;
  writeSync(bytes: Uint8Array): void;
  /** True once the reader went away: the display stops reading the journal. */
  closed(): boolean;
}

const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** A ByteOutput that keeps everything (tests, small documents). */
export class CollectingOutput implements ByteOutput {
  private readonly parts: Uint8Array[] = [];
  async write(bytes: Uint8Array): Promise<void> {
    this.writeSync(bytes);
  }
  writeSync(bytes: Uint8Array): void {
    if (bytes.length > 0) this.parts.push(bytes.slice());
  }
  closed(): boolean {
    return false;
  }
  bytes(): Uint8Array {
    return Buffer.concat(this.parts);
  }
  text(): string {
    return Buffer.concat(this.parts).toString("utf8");
  }
}
