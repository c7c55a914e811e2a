import { homedir } from "node:os";
import { materialize } from "../pyjson/parse.ts";
import { PyRaw, type PyValue } from "../pyjson/types.ts";
import { REDACTABLE } from "./rows.ts";
import { hex4 } from "../hex.ts";

/**
 * Publish's leak check: after redaction, string values left in the
 * redactable fields that still name the producing machine's file system
 * (an absolute POSIX path of two or more components, a Windows drive or
 * UNC path, `~/…`, or this user's home directory). Each field path
 * (`tool_call.cwd`, `tool_call.argv`) is reported once with a count and
 * its first step, and the `--redact` that covers it.
 */
const ABSOLUTE = /(?:^|[\s"'=:,;(\[])(?:\/[^\s/"'<>|]+\/[^\s"'<>|]*|\/(?:root|home|Users)\b|[A-Za-z]:[\\/]|\\\\[^\s\\]+\\|~\/)/;

/** The characters ABSOLUTE lets stand before a pattern's slash: its prefix class, `~` and a drive's `:`. */
const BEFORE_SLASH = new Uint8Array(256);
for (const c of ` \t\n\v\f\r"'=:,;([~`) BEFORE_SLASH[c.charCodeAt(0)] = 1;
/** The letters of the short escapes of those characters (`\t`, `\n`, `\f`, `\r`, `\"`). */
const ESCAPED_BEFORE_SLASH = new Uint8Array(256);
for (const c of `tnfr"`) ESCAPED_BEFORE_SLASH[c.charCodeAt(0)] = 1;

/** The UTF-16 unit u is white space to ABSOLUTE's `\s` (the only characters of its prefix class Python's writer spells as `\uXXXX`). */
export function isSpace(u: number): boolean {
  return (u >= 9 && u <= 13) || u === 0x20 || u === 0xa0 || u === 0x1680 || (u >= 0x2000 && u <= 0x200a) || u === 0x2028 || u === 0x2029 || u === 0x202f || u === 0x205f || u === 0x3000 || u === 0xfeff;
}

export interface PathLeak {
  field: string;
  /** The top-level field `--redact` takes. */
  redact: string;
  steps: number;
  first_seq: number;
  sample: string;
}

export class PathLeakScanner {
  private readonly leaks = new Map<string, PathLeak>();
  private readonly fields: string[];
  private readonly home: string | null;
  /** The home directory as canonical JSON spells it inside a string (an ASCII absolute path), or null. */
  private readonly homeBytes: Uint8Array | null;

  /** `home`: the user's home directory (tests pass others). */
  constructor(policy: ReadonlySet<string>, home: string = homedir()) {
    this.fields = REDACTABLE.filter((f) => !policy.has(f));
    this.home = home && home !== "/" ? home : null;
    this.homeBytes = this.home !== null && /^\/[\x20-\x7e]*$/.test(this.home) && !/["\\]/.test(this.home) ? new TextEncoder().encode(this.home) : null;
  }

  /**
   * For the step kernel's pre-scan (its copy of `mayHold`): the home bytes
   * it looks for at each slash, or `always` when the home is no such path
   * (then every row may hold it).
   */
  get kernelHome(): { bytes: Uint8Array | null; always: boolean } {
    return { bytes: this.homeBytes, always: this.home !== null && this.homeBytes === null };
  }

  /** The redactable fields left as they are, which `row` scans. */
  get scanned(): readonly string[] {
    return this.fields;
  }

  /**
   * False when no string inside the canonical JSON text `bytes[s, e)` can
   * be a leak, so its row need not be parsed for `row`. Without a
   * backslash the text holds every string verbatim (its opening quote
   * standing in for the start of the string), and each pattern then needs
   * a slash right after one of the characters that may precede it (or
   * after `~`, or the `:` of a drive); a home directory is a path and is
   * looked for at every slash. The text is in Python's spelling (the
   * kernel takes no other), so a slash or backslash in a string is a raw
   * `/` or a `\\`: a backslash may be a Windows path's (after a drive's
   * colon, or two of them: UNC), and any other escape matters only before
   * a slash, where it may stand for a space or a quote (a non-ASCII letter
   * in a path, `\u65e5`, does not).
   */
  mayHold(bytes: Uint8Array, s: number, e: number): boolean {
    const home = this.homeBytes;
    for (let i = s; i < e; i++) {
      const c = bytes[i]!;
      if (c === 0x5c) {
        const d = bytes[i + 1]!;
        // a backslash after a drive's colon, or two (a UNC path); an escaped slash
        if (d === 0x5c && ((i > s && bytes[i - 1] === 0x3a) || (bytes[i + 2] === 0x5c && bytes[i + 3] === 0x5c))) return true;
        if (d === 0x2f) return true;
        const end = d === 0x75 ? i + 6 : i + 2;
        if (bytes[end] === 0x2f && (d === 0x75 ? isSpace(hex4(bytes, i + 2)) : ESCAPED_BEFORE_SLASH[d] === 1)) return true;
        i = end - 1;
        continue;
      }
      if (c !== 0x2f) continue;
      if (i > s && BEFORE_SLASH[bytes[i - 1]!] === 1) return true;
      if (home !== null && e - i >= home.length) {
        let j = 0;
        while (j < home.length && bytes[i + j] === home[j]) j++;
        if (j === home.length) return true;
      }
    }
    // A home that is not an absolute path: not looked for byte by byte.
    return this.home !== null && home === null;
  }

  /** Scan one (already redacted) row. */
  row(d: Map<string, PyValue>, seq: number): void {
    for (const f of this.fields) {
      const seen = new Set<string>();
      this.walk(d.get(f), f, f, seq, seen);
    }
  }

  private walk(v: PyValue | undefined, path: string, top: string, seq: number, seen: Set<string>): void {
    if (typeof v === "string") {
      if (seen.has(path) || !(ABSOLUTE.test(v) || (this.home !== null && v.includes(this.home)))) return;
      seen.add(path);
      const leak = this.leaks.get(path);
      if (leak) leak.steps++;
      else this.leaks.set(path, { field: path, redact: top, steps: 1, first_seq: seq, sample: v.length > 60 ? `${v.slice(0, 57)}...` : v });
    } else if (Array.isArray(v)) {
      for (const x of v) this.walk(x, path, top, seq, seen);
    } else if (v instanceof Map) {
      for (const [k, x] of v) this.walk(x, `${path}.${k}`, top, seq, seen);
    } else if (v instanceof PyRaw) {
      // a huge row's large value (src/pyjson/row.ts): searched as a tree, the one place that pays for it
      this.walk(materialize(v), path, top, seq, seen);
    }
  }

  result(): PathLeak[] {
    return [...this.leaks.values()];
  }
}

export function describeLeak(l: PathLeak): string {
  return `field ${l.field} still holds an absolute path or home directory in ${l.steps} step(s) (first at seq ${l.first_seq}: ${JSON.stringify(l.sample)}); pass --redact ${l.redact} to redact it`;
}
