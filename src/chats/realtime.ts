import { and, eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { createDb } from "../db/client";
import { socketEventSubscriptions } from "../db/schema";
import type { PlatformEvent } from "../events/emit";
import { nowIso } from "../lib/ids";
import { connectionHost } from "./objects";

/** A socket (secret or user key) asks for the team's platform events of these types ("*" = all). */
export async function subscribeSocketEvents(db: Database, teamId: string, connectionId: string, events: string[]) {
  await db
    .insert(socketEventSubscriptions)
    .values({ connectionId, teamId, events, createdAt: nowIso() })
    .onConflictDoUpdate({ target: socketEventSubscriptions.connectionId, set: { events } });
}

export async function forgetSocketEvents(db: Database, connectionId: string) {
  await db.delete(socketEventSubscriptions).where(eq(socketEventSubscriptions.connectionId, connectionId));
}

/**
 * The events consumer's socket hook (src/events/sockets.ts): a committed event goes to the team's
 * sockets that asked for its type. Chat frames (messages, deltas, routing) do not come this way:
 * the chat's ChatSession pushes them as they happen. Sockets found closed are forgotten.
 */
export async function pushEventToSockets(env: Env, event: PlatformEvent): Promise<void> {
  const db = createDb(env.DB);
  const rows = await db
    .select({ connectionId: socketEventSubscriptions.connectionId, events: socketEventSubscriptions.events })
    .from(socketEventSubscriptions)
    .where(eq(socketEventSubscriptions.teamId, event.teamId));
  const targets = rows.filter((r) => r.events.includes("*") || r.events.includes(event.type));
  const results = await Promise.allSettled(
    targets.map(async ({ connectionId }) => {
      const result = await connectionHost(env, connectionId).deliverEvent(event);
      if (result === "gone") {
        await db
          .delete(socketEventSubscriptions)
          .where(and(eq(socketEventSubscriptions.connectionId, connectionId), eq(socketEventSubscriptions.teamId, event.teamId)));
      }
    }),
  );
  const failed = results.filter((r) => r.status === "rejected").length;
  if (failed) console.error(JSON.stringify({ error: "socket event push failed", eventId: event.id, failed }));
}
