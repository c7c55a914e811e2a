import { openInput, type InputOptions } from "./input.ts";

/**
 * `readChunks` that hands out whole lines: each chunk of `buf` ends just
 * after a `\n` (but the last, and one holding only part of a line longer
 * than `buf`); the unfinished line's bytes are moved to the front of `buf`
 * and the next read goes after them. A line splitter's bulk probe (the
 * step kernel) then takes every row, where plain chunks leave the one
 * each chunk's end cuts to the splitter's carry and so to the exact path,
 * whose first rows cost more than the kernel's whole pass (it is compiled
 * for them). A chunk is a view of `buf`, valid until the next one.
 */
export function* readLineChunks(path: string, o: InputOptions, buf: Uint8Array): Generator<Uint8Array> {
  const input = openInput(path, o);
  if (input === null) return;
  let kept = 0;
  try {
    for (;;) {
      const n = input.read(buf, kept, buf.length - kept, input.bytesRead);
      if (n === 0) {
        if (kept > 0) yield buf.subarray(0, kept);
        return;
      }
      const end = kept + n;
      const nl = buf.lastIndexOf(0x0a, end - 1);
      if (nl === -1) {
        // A line longer than the buffer: the splitter carries it over.
        kept = 0;
        yield buf.subarray(0, end);
        continue;
      }
      yield buf.subarray(0, nl + 1);
      buf.copyWithin(0, nl + 1, end);
      kept = end - nl - 1;
    }
  } finally {
    input.close();
  }
}
