/**
 * The task store's tables, written once for both engines: each column's
 * kind maps to the engine's type (SQLite's REAL is PostgreSQL's DOUBLE
 * PRECISION, a JSON column is TEXT in SQLite and JSONB in PostgreSQL).
 */
type Kind = "seq" | "text" | "int" | "real" | "json";
type Column = readonly [name: string, kind: Kind, constraint?: string];

const TYPES: Record<"sqlite" | "postgres", Record<Kind, string>> = {
  sqlite: { seq: "INTEGER PRIMARY KEY AUTOINCREMENT", text: "TEXT", int: "INTEGER", real: "REAL", json: "TEXT" },
  postgres: { seq: "BIGSERIAL PRIMARY KEY", text: "TEXT", int: "INTEGER", real: "DOUBLE PRECISION", json: "JSONB" },
};

const TASKS: readonly Column[] = [
  ["seq", "seq"],
  ["id", "text", "NOT NULL UNIQUE"],
  ["title", "text", "NOT NULL"],
  ["description", "text", "NOT NULL DEFAULT ''"],
  ["role", "text", "NOT NULL DEFAULT 'auto'"],
  ["tenant_id", "text", "NOT NULL DEFAULT 'default'"],
  ["priority", "int", "NOT NULL DEFAULT 2"],
  ["scope", "text", "NOT NULL DEFAULT 'medium'"],
  ["complexity", "text", "NOT NULL DEFAULT 'medium'"],
  ["status", "text", "NOT NULL DEFAULT 'open'"],
  ["depends_on", "json", "NOT NULL DEFAULT '[]'"],
  ["model", "text"],
  ["effort", "text"],
  ["assigned_agent", "text"],
  ["result_summary", "text"],
  ["fail_reason", "text"],
  ["cost_usd", "real", "NOT NULL DEFAULT 0"],
  ["attempts", "int", "NOT NULL DEFAULT 0"],
  ["created_at", "real", "NOT NULL"],
  ["updated_at", "real", "NOT NULL"],
  ["claimed_at", "real"],
  ["completed_at", "real"],
];

const CLAIMS: readonly Column[] = [
  ["claim_id", "text", "PRIMARY KEY"],
  ["task_id", "text", "NOT NULL"],
  ["agent_id", "text"],
  ["claimed_at", "real", "NOT NULL"],
  ["lease_s", "real"],
  ["expires_at", "real"],
  ["ended_at", "real"],
  ["end_reason", "text"],
];

function table(engine: "sqlite" | "postgres", name: string, columns: readonly Column[], ifNotExists: boolean): string {
  const cols = columns.map(([n, kind, constraint]) => `  ${n} ${TYPES[engine][kind]}${constraint ? ` ${constraint}` : ""}`);
  return `CREATE TABLE ${ifNotExists ? "IF NOT EXISTS " : ""}${name} (\n${cols.join(",\n")}\n);`;
}

/**
 * The tables and indexes. SQLite creates them at every open (IF NOT
 * EXISTS); PostgreSQL applies them once, as its first migration. Both keep
 * at most one open claim per task (a unique partial index in PostgreSQL,
 * where several servers claim at once).
 */
export function storeSchema(engine: "sqlite" | "postgres"): string {
  const ine = engine === "sqlite";
  const maybe = ine ? "IF NOT EXISTS " : "";
  return [
    table(engine, "tasks", TASKS, ine),
    `CREATE INDEX ${maybe}tasks_status ON tasks(status, priority, seq);`,
    `CREATE TABLE ${maybe}meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
    table(engine, "claims", CLAIMS, ine),
    `CREATE ${ine ? "" : "UNIQUE "}INDEX ${maybe}claims_active ON claims(task_id) WHERE ended_at IS NULL;`,
    `CREATE INDEX ${maybe}claims_expiry ON claims(expires_at) WHERE ended_at IS NULL;`,
  ].join("\n");
}
