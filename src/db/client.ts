import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = ReturnType<typeof drizzle<typeof schema>>;

/** One Drizzle client per D1 binding object: building one per request is measurable CPU on the hot path. */
const clients = new WeakMap<D1Database, Database>();

export function createDb(d1: D1Database): Database {
  let db = clients.get(d1);
  if (!db) {
    db = drizzle(d1, { schema });
    clients.set(d1, db);
  }
  return db;
}
