import { describe, expect, test } from "bun:test";
import { ID_MIN_WIDTH, Table, cellWidth, fitColumns, foldColumns, idColumn, joinFitting, sanitizeCell, truncateCells, wrapCells } from "../../src/render/table.ts";

describe("terminal table fitting", () => {
  test("fixed columns keep their width and the flexible column takes the rest", () => {
    const w = fitColumns(
      [
        { header: "A", width: 6 },
        { header: "B", width: 10 },
        { header: "C", width: 10, minWidth: 10, flex: true },
      ],
      60,
    );
    expect(w).toEqual([6, 10, 60 - 6 - 10 - 4]);
  });

  test("a too-narrow terminal shrinks the highest shrinkPriority column first, never below minimums", () => {
    const cols = [
      { header: "TIME", width: 6, minWidth: 4 },
      { header: "EVENT", width: 24, minWidth: 12, shrinkPriority: 1 },
      { header: "TASK", width: 32, minWidth: 8, shrinkPriority: 3 },
      { header: "DETAIL", width: 32, minWidth: 32, flex: true },
    ];
    const w = fitColumns(cols, 100);
    expect(w.reduce((a, b) => a + b, 0) + 6).toBe(100);
    expect(w[0]).toBe(6);
    expect(w[1]).toBe(24); // EVENT is kept while TASK can still give way
    expect(w[3]).toBe(32);
    const narrow = fitColumns(cols, 40);
    expect(narrow).toEqual([4, 12, 8, 32]); // all at their minimums: the table overflows rather than lose a column
  });

  test("cells are sanitized so journal text cannot drive the terminal", () => {
    expect(sanitizeCell("a\x1b[31mred\x07")).toBe("a\\x1b[31mred\\x07");
    expect(sanitizeCell("line\u2028sep\u202eRTL")).toBe("line\\u2028sep\\u202eRTL");
    expect(sanitizeCell("lone \udc80")).toBe("lone \\udc80");
    expect(sanitizeCell("задача 🚀")).toBe("задача 🚀");
  });

  test("wide characters count two cells, combining marks none", () => {
    expect(cellWidth("日本語")).toBe(6);
    expect(cellWidth("🚀x")).toBe(3);
    expect(cellWidth("e\u0301")).toBe(1);
    expect(truncateCells("日本語のテキスト", 7)).toBe("日本語…");
    expect(wrapCells("abcdefg", 3)).toEqual(["abc", "def", "g"]);
  });

  test("rows are padded to the column widths, long cells cut with … or wrapped", () => {
    const t = new Table(
      [
        { header: "K", width: 4 },
        { header: "V", width: 5, minWidth: 5, flex: true, overflow: "wrap" },
      ],
      { width: 11 },
    );
    expect(t.widths).toEqual([4, 5]);
    expect(t.format(["abcdefgh", "0123456789xy"])).toEqual(["abc…  01234", "      56789", "      xy"]);
    expect(t.header()).toBe("K     V");
  });

  test("wrapping breaks after a space when the piece has one, inside a word otherwise", () => {
    expect(wrapCells("failed: lint, tests, types", 14)).toEqual(["failed: lint,", "tests, types"]);
    expect(wrapCells("aaaa bbbbbbbbbbbb", 6)).toEqual(["aaaa", "bbbbbb", "bbbbbb"]);
    expect(joinFitting(["Run: r1", "Events: 4", "Fingerprint: abc..."], 20)).toEqual(["Run: r1  Events: 4", "Fingerprint: abc..."]);
  });

  test("id columns keep their full width and never go below ID_MIN_WIDTH", () => {
    expect(idColumn("AGENT", 30)).toMatchObject({ width: 30, minWidth: ID_MIN_WIDTH });
    expect(idColumn("AGENT", 12)).toMatchObject({ width: 12, minWidth: 12 });
    const t = new Table([idColumn("ID", 30), { header: "X", width: 40, minWidth: 10 }], { width: 30 });
    expect(t.widths[0]).toBe(ID_MIN_WIDTH);
    expect(t.format(["a".repeat(30), "x"])[0]!.startsWith("a".repeat(19) + "…")).toBe(true);
  });

  test("columns that do not fit at their minimum fold below the row, highest foldPriority first", () => {
    const cols = [
      { header: "TIME", width: 6, minWidth: 4 },
      idColumn("AGENT", 22),
      idColumn("TASK", 20, { fold: "task: ", foldPriority: 1 }),
      { header: "DETAIL", width: 32, minWidth: 20, flex: true, overflow: "wrap" as const, fold: "", foldPriority: 2 },
    ];
    expect([...foldColumns(cols, 100)]).toEqual([]);
    expect([...foldColumns(cols, 60)]).toEqual([3]);
    expect([...foldColumns(cols, 40)]).toEqual([3, 2]);
    const t = new Table(cols, { width: 40 });
    expect(t.header()).toBe("TIME    AGENT");
    const lines = t.format(["0:01", "architect-1fa9af3c2d7e", "T-1", "claude  $0.1250  failed: lint, tests, types"]);
    expect(lines[0]).toBe("0:01    architect-1fa9af3c2d7e");
    for (const l of lines) expect(cellWidth(l)).toBeLessThanOrEqual(40);
    // Folded cells follow in column order, indented under the second column.
    expect(lines.slice(1).join(" ").replace(/\s+/g, " ").trim()).toBe("task: T-1 claude $0.1250 failed: lint, tests, types");
    // A placeholder cell prints nothing once folded.
    const p = new Table([{ header: "ID", width: 30, minWidth: 30 }, { header: "SHA", width: 8, minWidth: 8, fold: "sha: ", placeholder: "-" }], { width: 32 });
    expect(p.format(["x", "-"])).toEqual(["x"]);
  });
});
