import { defineCommand } from "citty";

/** `bernstein verify run|receipt`: signed run receipts in upstream's format (run-receipt.json). */
export default defineCommand({
  meta: { name: "verify", description: "Signed run receipts (run-receipt.json): write one (run), check one offline (receipt)" },
  subCommands: {
    receipt: () => import("./receipt.ts").then((m) => m.default),
    run: () => import("./run.ts").then((m) => m.default),
  },
});
