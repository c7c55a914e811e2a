import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { walkReceipt } from "../../src/receipts/archive.ts";
import { runPythonBatch } from "./python.ts";

/**
 * The extraction oracle of issue 29: what `tar -xf` (GNU tar) and Python's
 * `tarfile.extractall(filter="data")` write for a receipt, against what
 * bernstein read when it verified it. Invariant: a receipt that verifies
 * (exit 0) extracts, with either tool, to exactly the files that were read
 * — the same names, the same bytes, nothing else but directories.
 * Development tooling (the e2e test and the `tar` fuzz target); the product
 * never runs tar or Python.
 */

/** What one extractor left in its directory. */
export interface Extracted {
  /** Regular files by path below the root ("/"-separated). */
  files: Map<string, Uint8Array>;
  /** Anything but a regular file or directory (symlink, FIFO, device), by path. */
  others: string[];
  /** The extractor's failure (exit status and message, or Python's exception), or null. */
  error: string | null;
}

function tree(root: string): Pick<Extracted, "files" | "others"> {
  const files = new Map<string, Uint8Array>();
  const others: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const r = rel === "" ? name : `${rel}/${name}`;
      const st = lstatSync(path);
      if (st.isDirectory()) walk(path, r);
      else if (st.isFile()) files.set(r, new Uint8Array(readFileSync(path)));
      else others.push(r);
    }
  };
  walk(root, "");
  return { files, others };
}

function fresh(dir: string): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** GNU tar's extraction into a fresh `dest`. */
export function extractGnu(tarPath: string, dest: string): Extracted {
  fresh(dest);
  const r = Bun.spawnSync(["tar", "-xf", tarPath, "-C", dest, "--no-same-owner", "--no-same-permissions"], { stdout: "pipe", stderr: "pipe" });
  const error = r.exitCode === 0 ? null : `tar exit ${r.exitCode}: ${r.stderr.toString().trim().split("\n")[0] ?? ""}`;
  return { ...tree(dest), error };
}

const PY_EXTRACT = `
import json, sys, tarfile
out = []
for job in json.load(sys.stdin):
    try:
        with tarfile.open(job["tar"]) as t:
            t.extractall(job["dest"], filter="data")
        out.append(None)
    except Exception as e:
        out.append(type(e).__name__ + ": " + str(e)[:300])
print(json.dumps(out))
`;

/** Python tarfile's extraction (filter="data") of each tar into its fresh `dest`, one python3 process for the lot. */
export async function extractPython(jobs: { tar: string; dest: string }[]): Promise<Extracted[]> {
  for (const j of jobs) fresh(j.dest);
  const errors = await runPythonBatch<(string | null)[]>(PY_EXTRACT, jobs);
  return jobs.map((j, i) => ({ ...tree(j.dest), error: errors[i] ?? null }));
}

/**
 * The members a receipt verification reads, by normalised name (the same
 * walk `replay verify` makes); null when the walk refuses the receipt.
 */
export async function readMembers(tarPath: string): Promise<Map<string, Uint8Array> | null> {
  const read = new Map<string, Uint8Array>();
  try {
    await walkReceipt(tarPath, (m) => {
      const parts: Uint8Array[] = [];
      return {
        data: (chunk) => void parts.push(chunk.slice()),
        end: () => void read.set(m.name, Buffer.concat(parts)),
      };
    });
  } catch {
    return null;
  }
  return read;
}

/** Why `ex` is not exactly the files `read` (null when it is). */
export function extractionDiffers(read: Map<string, Uint8Array>, ex: Extracted, who: string): string | null {
  if (ex.error !== null) return `${who} failed on a receipt that verified: ${ex.error}`;
  if (ex.others.length > 0) return `${who} wrote non-regular files: ${ex.others.join(", ")}`;
  for (const [name, bytes] of read) {
    const got = ex.files.get(name);
    if (got === undefined) return `${who} did not write ${JSON.stringify(name)}`;
    if (Buffer.compare(Buffer.from(got), Buffer.from(bytes)) !== 0) return `${who} wrote other bytes to ${JSON.stringify(name)} (${got.length} vs ${bytes.length} read)`;
  }
  for (const name of ex.files.keys()) if (!read.has(name)) return `${who} wrote ${JSON.stringify(name)}, which the verifier did not read`;
  return null;
}
