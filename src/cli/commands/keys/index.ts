import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "keys", description: "Manage receipt signing keys" },
  subCommands: {
    generate: () => import("./generate.ts").then((m) => m.default),
    vkey: () => import("./vkey.ts").then((m) => m.default),
  },
});
