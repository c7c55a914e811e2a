import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "session", description: "Inspect saved session state" },
  subCommands: {
    show: () => import("./show.ts").then((m) => m.default),
  },
});
