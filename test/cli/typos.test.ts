/** "Did you mean" at every level, and `help` as a command (compiled binary). */
import { describe, expect, test } from "bun:test";
import { binPath } from "../helpers/cli.ts";

function run(...args: string[]) {
  const r = Bun.spawnSync([binPath(), ...args], { env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe("typos name the closest word", () => {
  test.each([
    [["--verison"], "unknown option '--verison' for 'bernstein' (did you mean '--version'?)"],
    [["journal", "--hepl"], "unknown option '--hepl' for 'bernstein journal' (did you mean '--help'?)"],
    [["jurnal", "verify"], "unknown command 'jurnal' for 'bernstein' (did you mean 'journal'?)"],
    [["journal", "verfy", "x"], "unknown command 'verfy' for 'bernstein journal' (did you mean 'verify'?)"],
    [["replay", "verfy", "x.tar"], "unknown command 'verfy' for 'bernstein replay' (did you mean 'verify'?)"],
    [["journal", "verify", "--as-jsn", "x"], "unknown option '--as-jsn' for 'bernstein journal verify' (did you mean '--as-json'?)"],
  ])("bernstein %p", (args, message) => {
    const r = run(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  test("under --as-json the refusal is one JSON document", () => {
    const r = run("replay", "verfy", "x.tar", "--as-json");
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "usage", suggestion: "verify" });
  });
});

describe("help is a command", () => {
  test("bernstein help is bernstein --help; bernstein help journal verify is that command's page", () => {
    expect(run("help")).toEqual(run("--help"));
    const page = run("help", "journal", "verify");
    expect(page.code).toBe(0);
    expect(page).toEqual(run("journal", "verify", "--help"));
    expect(page.stdout).toContain("USAGE bernstein journal verify");
  });

  test("help of an unknown command names the closest one", () => {
    const r = run("help", "replya");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("(did you mean 'replay'?)");
  });
});

test("--as-json is refused where a command has no JSON form (completion prints a script)", () => {
  const r = run("completion", "bash", "--as-json");
  expect(r.code).toBe(2);
  expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "flag_not_applicable" });
  expect(r.stdout).not.toContain("_bernstein_complete");
  expect(run("completion", "bash").stdout).toContain("_bernstein_complete");
});
