import { and, eq, inArray, isNotNull, lt, ne, notExists, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { events, webhookDeliveries } from "../db/schema";

/**
 * How long finished history is kept: dispatched events and webhook deliveries that are no longer
 * pending (their attempts go with them by foreign key). Within this window a failed delivery can be
 * sent again by hand; after it the rows are deleted by the cron sweep. Stated in the README.
 */
export const HISTORY_RETENTION_DAYS = 30;
/** Rows deleted per table per run: a large backlog drains over the next cron ticks. */
const PRUNE_LIMIT = 1000;

export async function pruneHistory(db: Database, now = Date.now()): Promise<{ deliveries: number; events: number }> {
  const cutoff = new Date(now - HISTORY_RETENTION_DAYS * 24 * 3600 * 1000).toISOString();
  const oldDeliveries = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(lt(webhookDeliveries.createdAt, cutoff), ne(webhookDeliveries.state, "pending")))
    .limit(PRUNE_LIMIT);
  // Then an event goes once it was handed to the queue and no delivery of it is left (pending
  // ones stay, and so does their event). The batch runs in order, so the delete above counts.
  const oldEvents = db
    .select({ id: events.id })
    .from(events)
    .where(
      and(
        lt(events.createdAt, cutoff),
        isNotNull(events.dispatchedAt),
        notExists(db.select({ one: sql`1` }).from(webhookDeliveries).where(eq(webhookDeliveries.eventId, events.id))),
      ),
    )
    .limit(PRUNE_LIMIT);
  const [deliveries, pruned] = await db.batch([
    db.delete(webhookDeliveries).where(inArray(webhookDeliveries.id, oldDeliveries)).returning({ id: webhookDeliveries.id }),
    db.delete(events).where(inArray(events.id, oldEvents)).returning({ id: events.id }),
  ]);
  return { deliveries: deliveries.length, events: pruned.length };
}
