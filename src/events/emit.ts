import { inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import { events } from "../db/schema";
import { newId, nowIso } from "../lib/ids";

/** The event catalogue. Webhook subscriptions name these (or "*"). */
export const EVENT_TYPES = [
  "chat.created",
  "message.created",
  "agent.updated",
  "agent.rolled_back",
  "file.ready",
  "file.failed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What a webhook receiver gets as the JSON body, and what the events queue carries. */
export type PlatformEvent = {
  id: string;
  type: EventType;
  createdAt: string;
  teamId: string;
  data: Record<string, unknown>;
};

export type EventInput = { type: EventType; teamId: string; data: Record<string, unknown> };

export type EventSink = {
  env: Env;
  db: Database;
  waitUntil: (promise: Promise<unknown>) => void;
};

type Batch = [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];

/**
 * The one way to change data that others must hear about: the statements and their events
 * commit in one D1 batch (all or nothing), then the events are dispatched off the request path.
 * Returns the batch results of `statements`, in order.
 */
export async function commitWithEvents(sink: EventSink, statements: Batch, inputs: EventInput[]) {
  const createdAt = nowIso();
  const toEmit: PlatformEvent[] = inputs.map((e) => ({ id: newId("evt"), createdAt, ...e }));
  const outbox = toEmit.map((e) => sink.db.insert(events).values({ ...e, dispatchedAt: null }));
  const results = await sink.db.batch([...statements, ...outbox] as Batch);
  if (toEmit.length) sink.waitUntil(dispatchEvents(sink, toEmit));
  return results.slice(0, statements.length);
}

/** Hands committed events to the events queue and marks them dispatched. */
export async function dispatchEvents(sink: Omit<EventSink, "waitUntil">, batch: PlatformEvent[]): Promise<void> {
  if (!batch.length) return;
  await sink.env.EVENTS.sendBatch(batch.map((body) => ({ body, contentType: "json" as const })));
  await sink.db
    .update(events)
    .set({ dispatchedAt: nowIso() })
    .where(inArray(events.id, batch.map((e) => e.id)));
}
