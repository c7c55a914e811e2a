import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "server", description: "Run the task server" },
  subCommands: {
    start: () => import("./start.ts").then((m) => m.default),
  },
});
