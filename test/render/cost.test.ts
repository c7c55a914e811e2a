import { describe, expect, test } from "bun:test";
import { costLabel } from "../../src/render/cost.ts";

describe("costLabel", () => {
  test("a known cost is dollars; an unknown one is never $0", () => {
    expect(costLabel(0.0375, true)).toBe("$0.0375");
    expect(costLabel(0, true)).toBe("$0.0000");
    expect(costLabel(0.25, true, 2)).toBe("$0.25");
    expect(costLabel(0, false)).toBe("unknown");
    expect(costLabel(0.03, false)).toBe("$0.0300 + unknown");
    expect(costLabel(0, false, 2)).toBe("unknown");
  });
});
