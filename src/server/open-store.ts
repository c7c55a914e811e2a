import { InputError, UsageError } from "../errors/index.ts";
import type { OrchestratorStore } from "./store-api.ts";
import { TaskStore } from "./store.ts";
import { redactPassword } from "./store-url.ts";

/** `--store URL` / BERNSTEIN_STORE, else `<sdd>/runtime/tasks.db`. */
export async function openTaskStore(sddDir: string, url: string | undefined): Promise<OrchestratorStore> {
  return url ? openStoreUrl(url) : TaskStore.open(sddDir);
}

/** A store URL the server can open: `postgres://` / `postgresql://` (loaded only when asked for). */
export async function openStoreUrl(url: string): Promise<OrchestratorStore> {
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new UsageError(`unsupported store ${JSON.stringify(redactPassword(url))}: use postgres://user:password@host:port/db (or leave --store out for ${"<sdd>"}/runtime/tasks.db)`, "invalid_store");
  }
  const { PgTaskStore } = await import("./pg-store.ts");
  try {
    return await PgTaskStore.open(url);
  } catch (err) {
    const why = String((err as Error).message ?? err).split("\n")[0];
    throw new InputError("store_unreachable", `cannot open the task store ${redactPassword(url)}: ${why}`, { store: redactPassword(url) });
  }
}
