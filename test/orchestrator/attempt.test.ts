import { describe, expect, test } from "bun:test";
import { BACKOFF_MAX_S, RETRY_AFTER_MAX_S, retryDelayS } from "../../src/orchestrator/attempt.ts";

describe("retryDelayS: back-off of a transient provider failure", () => {
  test("doubles per retry, jittered to 50-100 %, capped", () => {
    expect(retryDelayS(1, null, () => 0)).toBe(1);
    expect(retryDelayS(1, null, () => 1)).toBe(2);
    expect(retryDelayS(2, null, () => 1)).toBe(4);
    expect(retryDelayS(3, null, () => 0.5)).toBe(6);
    expect(retryDelayS(20, null, () => 1)).toBe(BACKOFF_MAX_S);
    for (let i = 0; i < 50; i++) {
      const d = retryDelayS(2, null);
      expect(d).toBeGreaterThanOrEqual(2);
      expect(d).toBeLessThanOrEqual(4);
    }
  });

  test("never less than the provider's Retry-After, which is bounded", () => {
    expect(retryDelayS(1, 3, () => 1)).toBe(3);
    expect(retryDelayS(3, 3, () => 1)).toBe(8);
    expect(retryDelayS(1, 86_400, () => 1)).toBe(RETRY_AFTER_MAX_S);
  });
});
