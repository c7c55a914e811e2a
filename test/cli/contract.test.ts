import { describe, expect, test } from "bun:test";
import { bernstein, bernsteinJson } from "../helpers/cli.ts";
import pkg from "../../package.json" with { type: "json" };

describe("exit-code and output contract (compiled binary)", () => {
  test("--version prints the injected version", async () => {
    const r = await bernstein(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(pkg.version + "\n");
  });

  test("unknown command exits 2 naming the closest command", async () => {
    const r = await bernstein(["jurnal"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("did you mean 'journal'");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("unknown flag is a usage error with a JSON document under --as-json", async () => {
    const r = await bernsteinJson(["journal", "verify", "x", "--bogus"]);
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ ok: false, error: "usage" });
    expect(r.json.detail).toContain("--bogus");
  });

  test("unknown subcommand of a group exits 2", async () => {
    const r = await bernstein(["journal", "verfy"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("did you mean 'verify'");
  });
});
