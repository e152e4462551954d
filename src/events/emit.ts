import { and, asc, inArray, isNull, lt } from "drizzle-orm";
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

/** One line per event kind, served by GET /team/webhook/events and shown in the README. */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  "chat.created": "A chat session was created. data: the chat.",
  "message.created": "A message was stored in a chat (the user's or the agent's answer). data: the message.",
  "agent.updated": "An agent was created or its configuration changed (a new version). data: the agent.",
  "agent.rolled_back": "An agent was rolled back to its previous configuration version. data: the agent.",
  "file.ready": "A knowledge file was extracted and indexed and can be searched. data: the file.",
  "file.failed": "A knowledge file could not be processed. data: the file with the reason.",
};

/** What a webhook receiver gets as the JSON body. */
export type PlatformEvent = {
  id: string;
  type: EventType;
  createdAt: string;
  teamId: string;
  data: Record<string, unknown>;
};

export type EventInput = { type: EventType; teamId: string; data: Record<string, unknown> };

/**
 * Bodies on the events queue: a committed event to fan out, or one (event, webhook) delivery
 * to attempt again. Deliveries travel as their own messages so that each is retried and acked
 * on its own (src/events/consumer.ts).
 */
export type EventsQueueMessage = { kind: "event"; event: PlatformEvent } | { kind: "delivery"; deliveryId: string };

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
  if (toEmit.length) {
    // A failed dispatch is not the request's failure: the data is stored, the sweep re-sends.
    sink.waitUntil(
      dispatchEvents(sink, toEmit).catch((err: unknown) =>
        console.error(JSON.stringify({ error: "event dispatch failed; the outbox sweep will retry", cause: String(err) })),
      ),
    );
  }
  return results.slice(0, statements.length);
}

/** Cloudflare Queues: at most 100 messages and 256 KB per sendBatch; 128 KB per message. */
const SEND_BATCH_MAX_MESSAGES = 100;
const SEND_BATCH_MAX_BYTES = 200_000;

function* chunksForQueue(batch: PlatformEvent[]): Generator<PlatformEvent[]> {
  let chunk: PlatformEvent[] = [];
  let bytes = 0;
  for (const event of batch) {
    const size = JSON.stringify(event).length + 100;
    if (chunk.length && (chunk.length === SEND_BATCH_MAX_MESSAGES || bytes + size > SEND_BATCH_MAX_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(event);
    bytes += size;
  }
  if (chunk.length) yield chunk;
}

/**
 * Hands committed events to the events queue and marks them dispatched. A failure leaves them
 * undispatched; the scheduled sweep (sweepOutbox) sends them again, and consumers are idempotent
 * per (event, webhook), so a second dispatch never produces a second successful delivery.
 */
export async function dispatchEvents(sink: Omit<EventSink, "waitUntil">, batch: PlatformEvent[]): Promise<void> {
  for (const chunk of chunksForQueue(batch)) {
    await sink.env.EVENTS.sendBatch(
      chunk.map((event) => ({ body: { kind: "event", event } satisfies EventsQueueMessage, contentType: "json" as const })),
    );
    await sink.db
      .update(events)
      .set({ dispatchedAt: nowIso() })
      .where(inArray(events.id, chunk.map((e) => e.id)));
  }
}

/** How long an event may wait undispatched before the sweep assumes its request died. */
export const OUTBOX_GRACE_MS = 30_000;

/**
 * Scheduled (cron) safety net for a crash between commit and dispatch: re-dispatches outbox rows
 * older than OUTBOX_GRACE_MS that were never handed to the queue. Returns how many it sent.
 */
export async function sweepOutbox(env: Env, db: Database, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - OUTBOX_GRACE_MS).toISOString();
  let sent = 0;
  // Bounded per run: a backlog larger than this drains over the next cron ticks.
  for (let round = 0; round < 10; round++) {
    const rows = await db
      .select()
      .from(events)
      .where(and(isNull(events.dispatchedAt), lt(events.createdAt, cutoff)))
      .orderBy(asc(events.createdAt))
      .limit(100)
      .all();
    if (!rows.length) break;
    await dispatchEvents(
      { env, db },
      rows.map((r) => ({ id: r.id, type: r.type as EventType, createdAt: r.createdAt, teamId: r.teamId, data: r.data })),
    );
    sent += rows.length;
    if (rows.length < 100) break;
  }
  return sent;
}
