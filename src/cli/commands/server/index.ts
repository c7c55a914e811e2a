import { jsonDoc } from "../../../json-fields.ts";
import { resolve } from "node:path";
import { UsageError } from "../../../errors/index.ts";
import { DEFAULT_HOST, DEFAULT_LEASE_S, startTaskServer } from "../../../server/server.ts";
import { tasksDbPath } from "../../../server/paths.ts";
import { defineCliCommand } from "../../command.ts";
import { log } from "../../log.ts";
import { printJson, printLines } from "../../output.ts";
import { parsePort } from "../../../server/ports.ts";
import { sddDirArgs } from "../../args.ts";

/**
 * `bernstein server [start]`: run the task server in the foreground until
 * SIGINT/SIGTERM or `POST /shutdown` (or `POST /stop`, which a server without
 * an orchestrator treats as shutdown). `start` is accepted for symmetry with
 * older docs; it is the only action.
 */
export default defineCliCommand({
  docs: {
    exits: { 0: "stopped by SIGINT, SIGTERM or a shutdown request", 2: "usage, or a server already running for the state directory (server_running)" },
    json: [
      jsonDoc({ when: "once it listens (it then serves until stopped)", example: "bernstein server", server: "starts" }, [
        ["ok", "true", "The server listens"],
        ["url", "string", "Its URL"],
        ["host", "string", "The address bound"],
        ["port", "number", "The port"],
        ["pid", "number", "Its process id"],
        ["store", "\"sqlite\" | \"postgres\"", "The task store"],
        ["db", "string", "The SQLite file, or the PostgreSQL location"],
      ]),
    ],
  },
  meta: { name: "server", description: "Run the task server (SQLite store at <sdd>/runtime/tasks.db, or --store postgres://…) in the foreground" },
  args: {
    action: { type: "positional", required: false, description: "Only 'start' (the default)" },
    host: { type: "string", default: DEFAULT_HOST, description: "Address to bind (loopback unless you say otherwise)" },
    port: { type: "string", default: "auto", description: "Port: auto (per state dir, free fallback), 0 (any) or N; in server.json" },
    ...sddDirArgs,
    "lease-s": { type: "string", default: String(DEFAULT_LEASE_S), description: "Seconds a claim lives without a heartbeat" },
    store: { type: "string", description: "Task store: postgres://user:pass@host:port/db, shared by several servers (default: BERNSTEIN_STORE, else <sdd>/runtime/tasks.db)" },
  },
  async run({ args, json }) {
    if (args.action !== undefined && args.action !== "start") {
      throw new UsageError(`unknown action '${args.action}' for 'bernstein server' (only 'start')`);
    }
    const sddDir = args["sdd-dir"];
    const port = parsePort(args.port);
    const leaseS = Number(args["lease-s"]);
    if (args["lease-s"].trim() === "" || !Number.isFinite(leaseS) || leaseS <= 0) throw new UsageError(`--lease-s must be a positive number of seconds, got '${args["lease-s"]}'`);
    // Handlers first: a client may read server.json and send SIGTERM at once.
    const signalled = new Promise<string>((res) => {
      process.once("SIGINT", () => res("SIGINT"));
      process.once("SIGTERM", () => res("SIGTERM"));
    });
    const storeUrl = args.store ?? (process.env.BERNSTEIN_STORE || undefined);
    const server = await startTaskServer({ sddDir, host: args.host, port, leaseS, storeUrl, warn: (m) => log.warn(m) });
    const where = server.store.kind === "sqlite" ? resolve(tasksDbPath(sddDir)) : server.store.location;
    if (json) {
      await printJson({ ok: true, url: server.url, host: server.host, port: server.port, pid: process.pid, store: server.store.kind, db: where });
    } else {
      await printLines(`Task server listening on ${server.url} (store ${server.store.kind === "sqlite" ? tasksDbPath(sddDir) : where}, pid ${process.pid})`);
    }
    const why = await Promise.race([signalled, server.shutdownRequested.then(() => "shutdown request")]);
    await server.close();
    if (!json) log.info(`task server stopped (${why})`);
    return 0;
  },
});
