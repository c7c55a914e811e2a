/**
 * Publish's leak pre-scan (PathLeakScanner.mayHold, and the step kernel's
 * copy of it: test/steps/kernel-publish.test.ts) against the leak check it
 * stands in for: whenever a string value, spelled as Python's writer
 * spells it, holds a path the scan reports (an absolute path, a Windows or
 * UNC path, `~/`, the home directory), mayHold of its text is true. It may
 * say true of more; it must let escaped non-ASCII text that holds no path
 * through (a path of CJK or accented names).
 */
import { describe, expect, test } from "bun:test";
import { canonical } from "../../src/pyjson/encode.ts";
import { PathLeakScanner } from "../../src/receipts/path-leaks.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

const enc = new TextEncoder();
/** Pieces of strings: path punctuation, the prefix class's characters, spaces Python escapes, letters it escapes and not. */
const PIECES = [
  "/", "/", "\\", "~", ":", "C", "a", "home", "root", "Users", "src", ".", "x",
  " ", "\t", "\n", "\r", "\f", "\v", "\b", "\u00a0", "\u2028", "\u3000", "\ufeff", "\u0001", "\u007f",
  '"', "'", "=", ",", ";", "(", "[", "é", "日志", "🚀", "\u00e9/", "\udc80",
];

describe("the leak pre-scan never misses a leak", () => {
  test("80,000 random strings, four homes: a leak the scan reports is a text mayHold says may hold one", () => {
    const r = mulberry32(8861);
    let leaks = 0;
    let escapedPassed = 0;
    for (const home of ["/home/alice", "/root", "relhome", "/home/qu\"ote"]) {
      for (let i = 0; i < 20_000; i++) {
        let s = "";
        const n = 1 + Math.floor(r() * 10);
        for (let k = 0; k < n; k++) s += PIECES[Math.floor(r() * PIECES.length)];
        if (r() < 0.05) s += home;
        const scanner = new PathLeakScanner(new Set(["model", "prompt", "tool_result"]), home);
        scanner.row(new Map([["tool_call", s]]), 0);
        const text = enc.encode(canonical(s));
        const may = scanner.mayHold(text, 0, text.length);
        if (scanner.result().length > 0) {
          leaks++;
          expect([s, may]).toEqual([s, true]);
        } else if (!may && text.includes(0x5c)) escapedPassed++;
      }
    }
    expect(leaks).toBeGreaterThan(5000);
    expect(escapedPassed).toBeGreaterThan(5000);
  });

  test("escaped text with no path before a slash is let through; a space, quote or backslash escaped before one is not", () => {
    const scanner = new PathLeakScanner(new Set(["prompt"]), "/home/alice");
    const may = (s: string) => {
      const text = enc.encode(canonical(s));
      return scanner.mayHold(text, 0, text.length);
    };
    expect(may("src/日志/handler.py")).toBe(false);
    expect(may("docs/Résumé.md")).toBe(false);
    expect(may("a\tb")).toBe(false);
    expect(may("x\t/etc/passwd")).toBe(true);
    expect(may("x\u00a0/etc/passwd")).toBe(true);
    expect(may('say "/etc/passwd"')).toBe(true);
    expect(may("C:\\Users")).toBe(true);
    expect(may("\\\\server\\share\\x")).toBe(true);
    expect(may("retry\\(")).toBe(false);
    expect(may("a\\b")).toBe(false);
    expect(may("~/notes")).toBe(true);
  });
});
