import { defineCommand, type CommandDef } from "citty";
import { VERSION } from "../version.ts";

const lazy = (load: () => Promise<{ default: CommandDef<any> }>) => () => load().then((m) => m.default);

/**
 * The command tree. Every command lives in its own file under `commands/`
 * and is loaded only when it is run (or when help lists it).
 */
export const rootCommand = defineCommand({
  meta: {
    name: "bernstein",
    version: VERSION,
    description: "Record, replay, verify, diff, repair and export Merkle-chained run journals; run, stop and resume agent orchestration runs.",
  },
  subCommands: {
    replay: lazy(() => import("./commands/replay/index.ts")),
    journal: lazy(() => import("./commands/journal/index.ts")),
    run: lazy(() => import("./commands/run.ts")),
    stop: lazy(() => import("./commands/stop.ts")),
    status: lazy(() => import("./commands/status.ts")),
    server: lazy(() => import("./commands/server/index.ts")),
    session: lazy(() => import("./commands/session/index.ts")),
    keys: lazy(() => import("./commands/keys/index.ts")),
    verify: lazy(() => import("./commands/verify/index.ts")),
    seal: lazy(() => import("./commands/seal/index.ts")),
    checkpoint: lazy(() => import("./commands/checkpoint.ts")),
    "wrap-up": lazy(() => import("./commands/wrap-up.ts")),
    completion: lazy(() => import("./commands/completion.ts")),
  },
});
