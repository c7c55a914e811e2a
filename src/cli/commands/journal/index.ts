import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "journal", description: "Record, verify and seal run journals" },
  subCommands: {
    verify: () => import("./verify.ts").then((m) => m.default),
    record: () => import("./record.ts").then((m) => m.default),
    seal: () => import("./seal.ts").then((m) => m.default),
  },
});
