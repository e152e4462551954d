import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./teams";

/**
 * The event outbox. An event row is written in the same D1 batch as the data it describes,
 * so an event exists exactly when its write committed. dispatchedAt is set once the event
 * is on the events queue; a periodic sweep re-sends rows left undispatched by a crash.
 */
export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    type: text("type").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
    dispatchedAt: text("dispatched_at"),
  },
  (t) => [index("events_undispatched_idx").on(t.dispatchedAt, t.createdAt), index("events_team_idx").on(t.teamId)],
);
