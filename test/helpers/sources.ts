import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every `.ts` file under `dir`, recursively. */
export function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith(".ts")) out.push(p);
  }
  return out;
}
