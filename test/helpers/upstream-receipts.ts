import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./cli.ts";
import { runPython } from "./python.ts";

/** The upstream golden vectors (see test/fixtures/upstream/SOURCE.md). */
export const UPSTREAM = join(ROOT, "test", "fixtures", "upstream");
export const ORACLE = join(ROOT, "test", "helpers", "run_receipt_oracle.py");

export const EXPECT: Record<string, any> = JSON.parse(readFileSync(join(UPSTREAM, "expect-summary.json"), "utf8")).vectors;

/** The receipt vectors by their expect-summary name (`valid-10000.json`, `session/session-valid.json`). */
export const RECEIPT_VECTORS = Object.keys(EXPECT).filter((k) => "mcp_verdict" in EXPECT[k]);

/**
 * Write each vector's receipt into `dir` (same relative name): `CJ(input) +
 * "\n"` as Python's json writes it, or a session vector's exact text.
 * Returns name -> receipt path, and name -> wrapper SHA-256 (to check the copies).
 */
export function materialiseReceipts(dir: string): { paths: Record<string, string>; wrapperSha: Record<string, string> } {
  mkdirSync(join(dir, "session"), { recursive: true });
  const jobs: { src: string; out: string }[] = [];
  const wrapperSha: Record<string, string> = {};
  for (const name of RECEIPT_VECTORS) {
    let src = join(UPSTREAM, name);
    if (name === "valid-10000.json") {
      const raw = Bun.gunzipSync(readFileSync(src + ".gz"));
      src = join(dir, "wrapper-valid-10000.json");
      writeFileSync(src, raw);
    }
    wrapperSha[name] = Bun.SHA256.hash(readFileSync(src), "hex") as string;
    jobs.push({ src, out: join(dir, name) });
  }
  runPython(
    `import json,sys
for j in json.load(sys.stdin):
    d = json.load(open(j["src"], encoding="utf-8"))
    if "receipt_text" in d["input"]:
        open(j["out"], "w", encoding="utf-8", newline="").write(d["input"]["receipt_text"])
    else:
        open(j["out"], "wb").write((json.dumps(d["input"], sort_keys=True, separators=(",", ":")) + "\\n").encode())
print("[]")`,
    jobs,
  );
  return { paths: Object.fromEntries(jobs.map((j, i) => [RECEIPT_VECTORS[i]!, j.out])), wrapperSha };
}

/** The independent Python verifier over many files in one process. */
export function oracle(files: string[]): { file: string; status: string; errors: string[]; divergent_step: number | null; receipt_sha256: string | null }[] {
  const r = Bun.spawnSync(["python3", ORACLE, ...files], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`oracle failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}
