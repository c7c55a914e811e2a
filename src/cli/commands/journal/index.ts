import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "journal", description: "Record, verify, seal and checkpoint run journals; prove and check consistency and inclusion" },
  subCommands: {
    verify: () => import("./verify.ts").then((m) => m.default),
    record: () => import("./record.ts").then((m) => m.default),
    seal: () => import("./seal.ts").then((m) => m.default),
    checkpoint: () => import("./checkpoint.ts").then((m) => m.default),
    prove: () => import("./prove.ts").then((m) => m.default),
    "prove-consistency": () => import("./prove-consistency.ts").then((m) => m.default),
    "verify-consistency": () => import("./verify-consistency.ts").then((m) => m.default),
    "verify-inclusion": () => import("./verify-inclusion.ts").then((m) => m.default),
  },
});
