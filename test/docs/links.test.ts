/**
 * The README stays short, and every relative link in README.md and docs/ (the generated
 * command reference included) points at a file that exists.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { ROOT } from "../helpers/cli.ts";

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith(".md") ? [path] : [];
  });
}

/** Link targets outside code blocks and code spans: `[text](target)`. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  const out: string[] = [];
  for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target) || target.startsWith("#")) continue;
    out.push(target);
  }
  return out;
}

describe("documentation", () => {
  test("README.md is at most 12 KB", () => {
    expect(statSync(join(ROOT, "README.md")).size).toBeLessThanOrEqual(12 * 1024);
  });

  test("every relative link in README.md and docs/ resolves to a file", () => {
    const files = [join(ROOT, "README.md"), ...markdownFiles(join(ROOT, "docs"))];
    const broken: string[] = [];
    let links = 0;
    for (const file of files) {
      for (const target of relativeLinks(readFileSync(file, "utf8"))) {
        links++;
        const path = join(dirname(file), decodeURIComponent(target.split("#")[0]!));
        if (!existsSync(path)) broken.push(`${relative(ROOT, file)} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
    expect(links).toBeGreaterThan(30);
  });

  test("the link check sees a broken link", () => {
    expect(relativeLinks("see [x](docs/nowhere.md) and `[y](z.md)` and [w](https://e.org)")).toEqual(["docs/nowhere.md"]);
  });
});
