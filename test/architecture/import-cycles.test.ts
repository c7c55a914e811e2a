/**
 * No import cycles in src/, static or dynamic: every `import … from`,
 * `export … from` and `import("…")` of a relative module is an edge, and
 * the graph must be acyclic (a cycle makes load order, and so what a
 * module sees of another at start-up, depend on who was imported first).
 * Type-only imports are erased by the compiler and are not edges.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { sources } from "../helpers/sources.ts";

const ROOT = resolve(import.meta.dir, "../../src");


/** The relative modules `file` loads at run time. */
export function runtimeImports(file: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
  const specs: string[] = [];
  const fromRe = /\b(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["']([^"']+)["']/g;
  for (const m of code.matchAll(fromRe)) {
    if (m[2]) continue;
    // `import { type A, type B } from` is erased too.
    const names = /^\{([^}]*)\}$/.exec(m[3]!.trim());
    if (names && names[1]!.split(",").map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith("type "))) continue;
    specs.push(m[4]!);
  }
  for (const m of code.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) specs.push(m[1]!);
  for (const m of code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) specs.push(m[1]!);
  return specs.filter((s) => s.startsWith(".")).map((s) => resolve(dirname(file), s));
}

/** Strongly connected components with a cycle (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.map((f) => relative(ROOT, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("src/ import graph", () => {
  const files = sources(ROOT);
  const graph = new Map(files.map((f) => [f, runtimeImports(f, readFileSync(f, "utf8"))]));

  test("every relative import names a file that exists", () => {
    const missing = [...graph].flatMap(([f, deps]) => deps.filter((d) => !graph.has(d) && !existsSync(d)).map((d) => `${relative(ROOT, f)} -> ${relative(ROOT, d)}`));
    expect(missing).toEqual([]);
  });

  test("has no cycle, static or dynamic", () => {
    expect(cycles(graph)).toEqual([]);
  });

  test("the check sees static, re-export and dynamic edges, and skips type-only ones", () => {
    const f = join(ROOT, "x/a.ts");
    const text = `import { b } from "./b.ts";\nexport * from "../c.ts";\nconst d = () => import("./d.ts");\nimport type { E } from "./e.ts";\nimport { type F } from "./f.ts";\n// import { g } from "./g.ts";\nimport "./h.ts";`;
    expect(runtimeImports(f, text).map((p) => relative(ROOT, p)).sort()).toEqual(["c.ts", "x/b.ts", "x/d.ts", "x/h.ts"]);
    const g = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["d"]], ["e", []]]);
    expect(cycles(g).length).toBe(2);
  });
});
