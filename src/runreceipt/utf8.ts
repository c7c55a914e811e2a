/**
 * The text of Python's `UnicodeDecodeError` for the first invalid UTF-8
 * sequence in `bytes` (`'utf-8' codec can't decode byte 0xff in position
 * 3: invalid start byte`), or null when the bytes are valid UTF-8.
 */
export function pythonUtf8Error(bytes: Uint8Array): string | null {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return message(bytes, i, i + 1, "invalid start byte");
    for (let k = 1; k <= need; k++) {
      if (i + k >= n) return message(bytes, i, n, "unexpected end of data");
      const c = bytes[i + k]!;
      const min = k === 1 ? lo : 0x80;
      const max = k === 1 ? hi : 0xbf;
      if (c < min || c > max) return message(bytes, i, i + k, "invalid continuation byte");
    }
    i += need + 1;
  }
  return null;
}

function message(bytes: Uint8Array, start: number, end: number, reason: string): string {
  if (end - start === 1) return `'utf-8' codec can't decode byte 0x${bytes[start]!.toString(16).padStart(2, "0")} in position ${start}: ${reason}`;
  return `'utf-8' codec can't decode bytes in position ${start}-${end - 1}: ${reason}`;
}
