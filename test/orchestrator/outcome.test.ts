import { describe, expect, test } from "bun:test";
import { changeEvidence, defaultVerifyMode, refusalOf, taskVerifyMode } from "../../src/orchestrator/outcome.ts";
import { gatesOf, validateConfig, verifyModeOf } from "../../src/orchestrator/config.ts";
import { planFromDocument } from "../../src/orchestrator/plan.ts";
import type { ToolCall } from "../../src/orchestrator/result.ts";

const call = (name: string, status: string | null, refused?: ToolCall["refused"]): ToolCall => ({ name, input: "{}", status, output: null, ...(refused ? { refused } : {}) });

describe("outcome evidence: refused tool calls", () => {
  test("no denied call: no refusal (errors are the agent's business)", () => {
    expect(refusalOf([])).toBeNull();
    expect(refusalOf([call("Write", "ok"), call("Bash", "error"), call("shell", "error (exit 1)"), call("Read", null)])).toBeNull();
  });

  test("a call the permission mode or sandbox refused is permission_denied, naming the tools once each", () => {
    const e = refusalOf([call("Write", "denied", "permission_denied"), call("Read", "ok"), call("Write", "denied", "permission_denied"), call("shell", "denied", "permission_denied")]);
    expect(e!.signal).toBe("permission_denied");
    expect(e!.detail).toContain("refused 3 tool call(s) (Write, shell)");
    expect(e!.detail).toContain("agent.permission_mode");
  });

  test("only unoffered write tools is no_write_tool; mixed with a permission refusal it is permission_denied", () => {
    const only = refusalOf([call("write_file", "denied", "no_write_tool")]);
    expect(only!.signal).toBe("no_write_tool");
    expect(only!.detail).toContain("offered no tool able to write: it called write_file");
    expect(refusalOf([call("write_file", "denied", "no_write_tool"), call("run_shell_command", "denied", "permission_denied")])!.signal).toBe("permission_denied");
  });
});

describe("outcome evidence: the work tree", () => {
  test("no changed file is no_change, and the detail quotes nothing the agent said", () => {
    const e = changeEvidence([]);
    expect(e!.signal).toBe("no_change");
    expect(e!.detail).toContain("work tree is unchanged");
    expect(e!.detail).not.toMatch(/done:/i);
    expect(changeEvidence(["a.txt"])).toBeNull();
  });

  test("the run's default: configured wins; read_only agents are exempt; else changed only in a git work tree", () => {
    expect(defaultVerifyMode(null, "edits", true)).toBe("changed");
    expect(defaultVerifyMode(null, "edits", false)).toBe("none");
    expect(defaultVerifyMode(null, "full", true)).toBe("changed");
    expect(defaultVerifyMode(null, "read_only", true)).toBe("none");
    expect(defaultVerifyMode("changed", "read_only", false)).toBe("changed");
    expect(defaultVerifyMode("none", "edits", true)).toBe("none");
    expect(taskVerifyMode(null, "changed")).toBe("changed");
    expect(taskVerifyMode("none", "changed")).toBe("none");
    expect(taskVerifyMode("changed", "none")).toBe("changed");
  });

  test("config verify: absent is not configured; changed/none scalars; `changed` among gates; a wrong word is refused", () => {
    const cfg = (doc: unknown) => validateConfig(doc, "b.yaml").config;
    expect(verifyModeOf(cfg({}))).toBeNull();
    expect(gatesOf(cfg({}))).toEqual([]);
    expect(verifyModeOf(cfg({ verify: "changed" }))).toBe("changed");
    expect(gatesOf(cfg({ verify: "changed" }))).toEqual([]);
    expect(verifyModeOf(cfg({ verify: "none" }))).toBe("none");
    expect(verifyModeOf(cfg({ verify: [] }))).toBe("none");
    const both = cfg({ verify: ["changed", "npm test"] });
    expect(verifyModeOf(both)).toBe("changed");
    expect(gatesOf(both)).toEqual([{ name: "gate-1", run: "npm test", timeout_s: 600 }]);
    expect(verifyModeOf(cfg({ verify: ["npm test"] }))).toBe("none");
    expect(() => validateConfig({ verify: "sometimes" }, "b.yaml")).toThrow("verify: expected a list of gate commands, or one of changed, none");
  });

  test("plan tasks declare read_only: true (none) or verify:; read_only with verify: changed is refused", () => {
    const plan = planFromDocument(
      [
        { id: "R", title: "review", read_only: true },
        { id: "C", title: "change", verify: "changed" },
        { id: "N", title: "no check", verify: "none" },
        { id: "D", title: "default" },
        { id: "W", title: "writes", read_only: false },
      ],
      "plan.yaml",
    );
    expect(plan.verify).toEqual({ R: "none", C: "changed", N: "none" });
    expect(plan.tasks.map((t) => Object.keys(t).includes("read_only"))).toEqual([false, false, false, false, false]);
    expect(() => planFromDocument([{ title: "x", read_only: true, verify: "changed" }], "plan.yaml")).toThrow("read_only: true and verify: changed contradict each other");
    expect(() => planFromDocument([{ title: "x", verify: "maybe" }], "plan.yaml")).toThrow("verify: expected one of changed, none");
    expect(() => planFromDocument([{ title: "x", read_only: "yes" }], "plan.yaml")).toThrow("read_only: expected true or false");
  });
});
