/**
 * An exit path's document (a signal handler's report, written when nothing
 * was written to stdout before) never holds the process on a stdout pipe
 * someone else filled: it gets half a second, then it is given up. A
 * blocking write(2) there kept the process alive past the 2 s a signal allows.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const WRITER = `
import { writeStdoutBeforeExit } from ${JSON.stringify(join(import.meta.dir, "../../src/cli/output.ts"))};
const t0 = performance.now();
writeStdoutBeforeExit("x".repeat(Number(process.argv[2])));
process.stderr.write(String(Math.round(performance.now() - t0)));
`;

// stdout: a pipe filled to its last byte and never read; the writer's own time on stderr
const FULL_PIPE = join(import.meta.dir, "../helpers/full_pipe.py");

describe.skipIf(process.platform !== "linux")("writeStdoutBeforeExit", () => {
  test("a full stdout pipe nobody reads: given up after half a second, the process not held", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bernstein-exit-writer-"));
    const script = join(dir, "writer.ts");
    await Bun.write(script, WRITER);
    try {
      const p = Bun.spawn(["python3", FULL_PIPE, process.execPath, script, "1000"], { stdout: "pipe", stderr: "inherit" });
      const out = (await new Response(p.stdout).text()).trim();
      await p.exited;
      const [code, ms] = out.split(" ");
      expect(code).toBe("0");
      expect(Number(ms)).toBeGreaterThanOrEqual(400);
      expect(Number(ms)).toBeLessThan(1500);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
