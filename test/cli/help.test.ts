import { describe, expect, test } from "bun:test";
import { bernstein } from "../helpers/cli.ts";

/** Every command of the tree, as a user types it. */
const COMMANDS = [
  [],
  ["replay"],
  ["replay", "list"],
  ["replay", "agents"],
  ["replay", "latest"],
  ["replay", "diff"],
  ["replay", "repair"],
  ["replay", "export"],
  ["replay", "publish"],
  ["replay", "verify"],
  ["replay", "diff-journal"],
  ["replay", "debug"],
  ["journal"],
  ["journal", "verify"],
  ["journal", "record"],
  ["journal", "seal"],
  ["run"],
  ["stop"],
  ["status"],
  ["server"],
  ["session"],
  ["session", "show"],
  ["keys"],
  ["keys", "generate"],
  ["verify"],
  ["verify", "receipt"],
  ["verify", "run"],
  ["seal"],
  ["seal", "publish"],
  ["seal", "verify"],
  ["checkpoint"],
  ["wrap-up"],
  ["completion"],
];

describe("--help of every command (compiled binary, NO_COLOR)", () => {
  for (const words of COMMANDS) {
    test(`bernstein ${words.join(" ")} --help`.replace(/\s+/g, " "), async () => {
      const r = await bernstein([...words, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(r.stdout).not.toContain("\x1b[");
      expect(r.stdout).toContain(`USAGE bernstein${words.length ? " " + words.join(" ") : ""}`);
      expect(r.stdout).toMatchSnapshot();
    });
  }

  test("no arguments prints the root help", async () => {
    const r = await bernstein([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("USAGE bernstein");
  });
});

describe("help fits the width", () => {
  const width = (text: string) => Math.max(...text.split("\n").map((l) => [...l].length));
  test("80 columns when stdout is no terminal (every page), COLUMNS when it says", async () => {
    for (const words of COMMANDS) {
      const r = await bernstein([...words, "--help"], { env: { ...process.env, COLUMNS: "" } });
      expect({ words, width: width(r.stdout) <= 80 }).toEqual({ words, width: true });
    }
    const wide = await bernstein(["replay", "--help"], { env: { ...process.env, COLUMNS: "200" } });
    expect(width(wide.stdout)).toBeGreaterThan(80);
    const narrow = await bernstein(["replay", "--help"], { env: { ...process.env, COLUMNS: "60" } });
    expect(width(narrow.stdout)).toBeLessThanOrEqual(60);
    // Wrapping cuts no word: the page says the same in fewer columns.
    expect(narrow.stdout.replace(/\s+/g, "")).toBe(wide.stdout.replace(/\s+/g, ""));
  }, 60_000);
});
