import { copyTo } from "../codec/bytes.ts";

/**
 * Bytes gathered to about a MiB and handed on in chunks, hashed as they
 * go (SHA-256): a receipt's canonical text as `verify receipt` digests it,
 * and the receipt file as `verify run` writes it. Pieces (a row, a
 * separator) are copied into the buffer, never through a view; a piece
 * longer than the buffer goes on as it is.
 */
export class HashedChunks {
  private readonly hasher = new Bun.CryptoHasher("sha256");
  private readonly buf = new Uint8Array(CHUNK + (CHUNK >> 2));
  private len = 0;
  private readonly encoder = new TextEncoder();

  /** `onChunk`: where each chunk goes besides the hash (valid during the call). */
  constructor(private readonly onChunk: (bytes: Uint8Array) => void = () => {}) {}

  text(s: string): void {
    // a separator between rows: its byte, without an encoder's view
    if (s.length === 1 && s.charCodeAt(0) < 0x80 && this.len < this.buf.length) {
      this.buf[this.len++] = s.charCodeAt(0);
      if (this.len >= CHUNK) this.flush();
      return;
    }
    // UTF-8 is at most three bytes a code unit
    if (this.len + 3 * s.length > this.buf.length) {
      this.flush();
      if (3 * s.length > this.buf.length) return this.put(Buffer.from(s, "utf8"));
    }
    this.len += this.encoder.encodeInto(s, this.buf.subarray(this.len)).written;
    if (this.len >= CHUNK) this.flush();
  }

  /** The bytes b[s, e). */
  bytes(b: Uint8Array, s: number, e: number): void {
    const n = e - s;
    if (this.len + n > this.buf.length) {
      this.flush();
      if (n > this.buf.length) return this.put(b.subarray(s, e));
    }
    this.len = copyTo(b, s, e, this.buf, this.len);
    if (this.len >= CHUNK) this.flush();
  }

  /** Text, or bytes (a chunk of a value encoded from its bytes, valid during the call). */
  piece(p: string | Uint8Array): void {
    if (typeof p === "string") this.text(p);
    else this.bytes(p, 0, p.length);
  }

  /** Hand on what is gathered; the hasher of everything so far. */
  flushed(): Bun.CryptoHasher {
    this.flush();
    return this.hasher;
  }

  private flush(): void {
    if (this.len > 0) this.put(this.buf.subarray(0, this.len));
    this.len = 0;
  }

  private put(bytes: Uint8Array): void {
    this.hasher.update(bytes);
    this.onChunk(bytes);
  }
}

/** About this many bytes per chunk. */
const CHUNK = 1 << 20;
