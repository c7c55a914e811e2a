import { defineCommand } from "citty";

/** `bernstein seal publish|verify`: an external RFC 3161 witness of a run's journal head. */
export default defineCommand({
  meta: { name: "seal", description: "RFC 3161 anchors of a run's journal head: publish (time-stamp it), verify (offline)" },
  subCommands: {
    publish: () => import("./publish.ts").then((m) => m.default),
    verify: () => import("./verify.ts").then((m) => m.default),
  },
});
