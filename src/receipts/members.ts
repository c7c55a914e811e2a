import type { TarHeader } from "./plaintar.ts";

/**
 * A receipt's members as `tar -x` and Python's `tarfile.extractall` would
 * write them. Both extractors resolve a member name through the file system
 * (`./journal//000000.jsonl` is `journal/000000.jsonl`), treat every type
 * flag they do not know (NUL, `7`, letters) as a regular file, take long
 * names from GNU `L` headers and PAX `path` records, and let a later member
 * overwrite an earlier one of the same name. A verifier that reads exact
 * names and skips the rest can therefore check one journal while the
 * extracted receipt holds another. So every member is admitted here, in
 * archive order, before anything reads it, and refused (`AmbiguousMemberError`,
 * `receipt_ambiguous`) when:
 *  - it is not one the receipt format defines: the files `manifest.json`,
 *    `manifest.sig`, `journal/<name>` and `blobs/<name>` (one plain
 *    segment each), and the directories `.`, `journal` and `blobs`;
 *  - its normalised name was seen before (compared without case: a second
 *    copy wins on extraction, and on a case-insensitive disk `Journal/A`
 *    and `journal/a` are one file);
 *  - it is a link, device, FIFO or any type but a regular file, or a
 *    directory with data, or a file whose name ends in `/` or `/.`;
 *  - headers GNU tar and tarfile read differently shaped it: two
 *    name-setting extended headers (or a `K`, an old-GNU `N`), a PAX key
 *    beyond path/size/times/owner/comment or a malformed PAX record, a
 *    global PAX header with anything but a comment, a GNU header with a
 *    prefix field, a member after an end-of-archive block, an end block
 *    with a checksum, or extended headers at the end that no member follows.
 *  - a file is spelled otherwise than its normalised name (`./manifest.json`):
 *    tar writes it as `manifest.json`, a reader of exact names (Python's
 *    verifier) does not see it, so the two verdicts could part ways.
 * Duplicates are found on the normalised names first, so the refusal of a
 * respelled second copy names the copy it collides with.
 */
export class AmbiguousMemberError extends Error {
  constructor(
    /** The member's name as the archive spells it. */
    readonly member: string,
    message: string,
  ) {
    super(message);
    this.name = "AmbiguousMemberError";
  }
}

/** PAX keys that rename, resize or only stamp a member: anything else (sparse maps, links, charsets, xattrs) is refused. */
const PAX_KEYS = new Set(["path", "size", "mtime", "atime", "ctime", "uid", "gid", "uname", "gname", "comment"]);

/** One plain segment: no case games, no trailing dot or space (both vanish on some file systems). */
const SEGMENT = /^[A-Za-z0-9_-](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?$/;

const FILES = new Set(["manifest.json", "manifest.sig"]);
const DIRS = new Set(["", "journal", "blobs"]);

/** A member name as the file system resolves it below the extraction root: empty and `.` segments dropped. */
export function normaliseMemberName(name: string): string {
  return name
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .join("/");
}

function definedFile(name: string): boolean {
  if (FILES.has(name)) return true;
  const slash = name.indexOf("/");
  if (slash === -1) return false;
  const dir = name.slice(0, slash);
  return (dir === "journal" || dir === "blobs") && SEGMENT.test(name.slice(slash + 1));
}

const REGULAR = new Set(["file", "contiguous-file"]);

/** Admits a receipt's members one by one (archive order). */
export class ReceiptMembers {
  private readonly seen = new Map<string, string>();

  /**
   * The end of the archive: extended headers no member followed are refused
   * (tarfile extracts an unknown type such as `N` as a file), and so is an
   * end block that is zero but for its checksum.
   */
  end(flags: string, names: string[], strayEnd: boolean): void {
    if (flags !== "") {
      const name = names[0] ?? "";
      throw new AmbiguousMemberError(name, `receipt member ${JSON.stringify(name)} is an extended header (${JSON.stringify(flags)}) that no member follows; tar and tarfile would not extract what is verified`);
    }
    if (strayEnd) {
      throw new AmbiguousMemberError("", "receipt ends with a block that is zero but for its checksum field (tarfile may read it as a nameless member); tar and tarfile would not extract what is verified");
    }
  }

  /** The member's normalised name, or `AmbiguousMemberError`. */
  admit(h: TarHeader): string {
    const q = h.quirks;
    // As the archive spells it: a long name before the reader stripped its slashes.
    let raw = q?.longName ?? h.name;
    const refuse = (why: string): never => {
      throw new AmbiguousMemberError(raw, `receipt member ${JSON.stringify(raw)} ${why}; tar and tarfile would not extract what is verified`);
    };
    if (q !== undefined) {
      if (q.afterEnd) refuse("comes after the end-of-archive marker (GNU tar and tarfile stop at the first zero block)");
      if (q.extended.length > 1 || (q.extended !== "" && q.extended !== "x" && q.extended !== "L")) {
        // An unusual header (tarfile extracts an N or an unknown long type as a file of that name) is named itself.
        const odd = [...q.extended].findIndex((f) => f !== "x" && f !== "L");
        if (odd !== -1) raw = q.extendedNames[odd] ?? raw;
        refuse(`is shaped by extended headers ${JSON.stringify(q.extended)} (one PAX 'x' or GNU 'L' header at most; tarfile and GNU tar resolve more, or a g, K or N, differently)`);
      }
      if (q.paxMalformed) refuse("has a malformed PAX record");
      const badKey = q.paxKeys.find((k) => !PAX_KEYS.has(k));
      if (badKey !== undefined) refuse(`has a PAX ${JSON.stringify(badKey)} record`);
      const badGlobal = q.globalKeys.find((k) => k !== "comment");
      if (badGlobal !== undefined) refuse(`follows a PAX global header with a ${JSON.stringify(badGlobal)} record`);
      if (q.gnuPrefix) refuse("has a GNU header with a prefix field (tarfile reads it as part of the name, GNU tar does not)");
    }
    const name = normaliseMemberName(h.name);
    if (h.type === "directory") {
      if (h.size !== 0) refuse(`is a directory with ${h.size} bytes of data`);
      if (!DIRS.has(name)) refuse("is a directory the receipt format does not define (only journal/ and blobs/)");
      return name;
    }
    if (h.type === null || !REGULAR.has(h.type)) refuse(`is a ${h.type ?? "member of an unknown type"}; a receipt holds regular files only`);
    if (raw.endsWith("/") || raw.endsWith("/.") || raw === ".") refuse("is a file named like a directory");
    if (!definedFile(name)) refuse("is not part of the receipt format (manifest.json, manifest.sig, journal/<name>, blobs/<name>)");
    const key = name.toLowerCase();
    const earlier = this.seen.get(key);
    if (earlier !== undefined) {
      const both = earlier === name && raw === name ? "" : ` (both are ${JSON.stringify(name)})`;
      refuse(`names the same file as the earlier member ${JSON.stringify(earlier)}${both}; on extraction the later one wins`);
    }
    // Spelled otherwise (./, //, /./), it is the same file to tar but not to a reader of exact names (Python's verifier).
    if (h.name !== name) refuse(`is spelled otherwise than the receipt format names it (${JSON.stringify(name)})`);
    this.seen.set(key, raw);
    return name;
  }
}
