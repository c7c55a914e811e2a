import { defineCommand } from "citty";

/** `bernstein verify run|receipt`: signed run receipts in upstream's format (run-receipt.json). */
export default defineCommand({
  meta: { name: "verify", description: "Write (verify run) and check offline (verify receipt) signed run receipts, run-receipt.json" },
  subCommands: {
    receipt: () => import("./receipt.ts").then((m) => m.default),
    run: () => import("./run.ts").then((m) => m.default),
  },
});
