/**
 * docs/cli/ is generated from the citty command tree (scripts/gen-cli-docs.ts): it must be
 * exactly what the tree generates now, and list every flag the parser accepts.
 */
import { describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI_DOCS, cliTree, driftedFiles, renderCliDocs, type DocNode } from "../../scripts/gen-cli-docs.ts";
import { flagSpellings } from "../../src/cli/completion.ts";

function flatten(node: DocNode): DocNode[] {
  return [node, ...node.children.flatMap(flatten)];
}

describe("docs/cli/", () => {
  test("is what the command tree generates (run `bun scripts/gen-cli-docs.ts` when this fails)", async () => {
    expect(driftedFiles(await renderCliDocs())).toEqual([]);
  });

  test("has a page per top-level command, and every command, verb and flag is on its page", async () => {
    const tree = await cliTree();
    const files = await renderCliDocs();
    expect([...files.keys()].sort()).toEqual(["README.md", ...tree.children.map((c) => `${c.path[0]}.md`)].sort());
    for (const top of tree.children) {
      const page = readFileSync(join(CLI_DOCS, `${top.path[0]}.md`), "utf8");
      for (const node of flatten(top)) {
        expect(page).toContain(`## ${["bernstein", ...node.path].join(" ")}\n`);
        for (const flag of flagSpellings(node.args)) expect(page).toContain(`\`${flag}`);
      }
    }
    // The replay verbs (each a form, not a citty subcommand) and the target forms.
    const replay = readFileSync(join(CLI_DOCS, "replay.md"), "utf8");
    for (const verb of ["list", "latest", "diff", "repair", "export", "publish", "verify", "diff-journal", "debug", "<RUN_ID>", "<AGENT_ID>", "<TASK_ID>"]) {
      expect(replay).toContain(`## bernstein replay ${verb}\n`);
    }
    // replay verify's own flags, as its help page lists them.
    const verify = replay.slice(replay.indexOf("## bernstein replay verify\n"), replay.indexOf("## bernstein replay diff-journal\n"));
    for (const flag of ["--head=", "--public-key=", "--format=", "--junit=", "--allow-empty"]) expect(verify).toContain(`\`${flag}`);
  });

  test("a stale, missing or extra page is noticed", async () => {
    const files = await renderCliDocs();
    const dir = mkdtempSync(join(tmpdir(), "bernstein-cli-docs-"));
    try {
      cpSync(CLI_DOCS, dir, { recursive: true });
      expect(driftedFiles(files, dir)).toEqual([]);
      writeFileSync(join(dir, "run.md"), readFileSync(join(dir, "run.md"), "utf8").replace("--keep-alive", "--keep-going"));
      rmSync(join(dir, "stop.md"));
      writeFileSync(join(dir, "gone.md"), "# bernstein gone\n");
      expect(driftedFiles(files, dir)).toEqual(["gone.md", "run.md", "stop.md"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("examples come from the README's quick start, flag defaults from the definitions", async () => {
    const run = (await renderCliDocs()).get("run.md")!;
    expect(run).toContain("bernstein run plan.yaml --fresh");
    expect(run).toContain("| `--port=<port>` | `auto` |");
    const withoutQuickStart = (await renderCliDocs("# no quick start here\n")).get("run.md")!;
    expect(withoutQuickStart).not.toContain("from the [quick start]");
  });
});
