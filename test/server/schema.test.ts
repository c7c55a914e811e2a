import { expect, test } from "bun:test";
import { MIGRATIONS } from "../../src/server/pg-store.ts";
import { storeSchema } from "../../src/server/schema.ts";

test("PostgreSQL migration 1 is frozen: a change to the shared tables needs a new migration", () => {
  // Databases already at version 1 never run it again: its text must not change.
  expect(Bun.SHA256.hash(MIGRATIONS[0]!, "hex")).toBe("ee4dca3b0ee5d092072e2175c7d95b3a3ad3e19088bfc9ecf4405a4a1249ee50");
});

test("both engines get the same tables and columns", () => {
  const columns = (sql: string) => [...sql.matchAll(/^ {2}(\w+) /gm)].map((m) => m[1]);
  expect(columns(storeSchema("sqlite"))).toEqual(columns(storeSchema("postgres")));
  expect(storeSchema("sqlite")).toContain("CREATE TABLE IF NOT EXISTS claims");
});
