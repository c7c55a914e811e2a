import { defineCommand } from "citty";

/** `bernstein seal publish|verify`: an external RFC 3161 witness of a run's journal head. */
export default defineCommand({
  meta: { name: "seal", description: "Anchor a run's journal head with an RFC 3161 time stamp (publish) and check the anchor offline (verify)" },
  subCommands: {
    publish: () => import("./publish.ts").then((m) => m.default),
    verify: () => import("./verify.ts").then((m) => m.default),
  },
});
