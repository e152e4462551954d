import { eq } from "drizzle-orm";
import { createDb, type Database } from "../db/client";
import { events } from "../db/schema";
import { attemptDelivery, backoffSeconds, fanOut, markDeadLettered, type WebhookCache } from "../webhooks/deliveries";
import { EVENT_TYPES, type EventsQueueMessage, type PlatformEvent } from "./emit";
import { deliverToSockets } from "./sockets";

/**
 * Consumer of the events queue. Two kinds of message travel on it:
 * - `event`: a committed event. Pushed to sockets, then fanned out to one delivery per matching
 *   webhook, each attempted once right away; failures go back on the queue as `delivery` messages.
 * - `delivery`: one (event, webhook) delivery to try again. Retried with exponential backoff and
 *   jitter through message.retry; after the queue's max_retries it lands on the dead-letter queue.
 * Every message is acked or retried on its own, so one failing endpoint never re-sends the others.
 */

/** HTTP sends in flight per invocation: Workers keep at most 6 connections open at once, and a
 *  send waiting for a connection would otherwise spend its timeout waiting. */
const MAX_CONCURRENT_SENDS = 6;

type Limit = <T>(task: () => Promise<T>) => Promise<T>;

function createLimiter(max: number): Limit {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    while (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

function isPlatformEvent(value: unknown): value is PlatformEvent {
  if (!value || typeof value !== "object") return false;
  const e = value as Record<string, unknown>;
  return (
    typeof e.id === "string" &&
    typeof e.teamId === "string" &&
    typeof e.createdAt === "string" &&
    (EVENT_TYPES as readonly unknown[]).includes(e.type) &&
    !!e.data &&
    typeof e.data === "object"
  );
}

export function parseEventsMessage(body: unknown): EventsQueueMessage | null {
  if (!body || typeof body !== "object") return null;
  const m = body as Record<string, unknown>;
  if (m.kind === "event" && isPlatformEvent(m.event)) return { kind: "event", event: m.event };
  if (m.kind === "delivery" && typeof m.deliveryId === "string") return { kind: "delivery", deliveryId: m.deliveryId };
  return null;
}

async function handleMessage(
  message: Message<unknown>,
  env: Env,
  db: Database,
  limit: Limit,
  webhookCache: WebhookCache,
): Promise<void> {
  const body = parseEventsMessage(message.body);
  if (!body) {
    // Nothing can ever process it: retrying would only delay the dead-letter queue.
    console.error(JSON.stringify({ error: "unreadable events message dropped", id: message.id }));
    message.ack();
    return;
  }
  try {
    if (body.kind === "event") {
      await deliverToSockets(env, body.event).catch((err: unknown) =>
        console.error(JSON.stringify({ error: "socket push failed", eventId: body.event.id, cause: String(err) })),
      );
      const retries = await fanOut(env, db, body.event, limit, webhookCache);
      if (retries.length) {
        await env.EVENTS.sendBatch(
          retries.map((r) => ({
            body: { kind: "delivery", deliveryId: r.deliveryId } satisfies EventsQueueMessage,
            contentType: "json" as const,
            delaySeconds: r.delaySeconds,
          })),
        );
      }
      message.ack();
      return;
    }
    const result = await limit(() => attemptDelivery(env, db, body.deliveryId, "queue"));
    if (result.kind === "busy") message.retry({ delaySeconds: result.retryInSeconds });
    else if (result.kind === "sent" && result.retryInSeconds !== null) message.retry({ delaySeconds: result.retryInSeconds });
    else message.ack();
  } catch (err) {
    // Our own failure (D1, queue): try the whole message again later; deliveries already
    // succeeded are not sent again (their state says so).
    console.error(JSON.stringify({ error: "events message failed", id: message.id, cause: String(err) }));
    message.retry({ delaySeconds: backoffSeconds(message.attempts) });
  }
}

export async function handleEventsBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  const limit = createLimiter(MAX_CONCURRENT_SENDS);
  // A batch often holds many events of one team: its webhooks are read once.
  const webhookCache: WebhookCache = new Map();
  await Promise.all(batch.messages.map((m) => handleMessage(m, env, db, limit, webhookCache)));
}

/**
 * The dead-letter queue: a delivery that used up its retries is marked failed (it can be sent
 * again by hand). An event whose fan-out kept failing goes back to the outbox as undispatched, so
 * the scheduled sweep sends it again: a committed event is never dropped.
 */
export async function handleEventsDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  for (const message of batch.messages) {
    const body = parseEventsMessage(message.body);
    try {
      if (body?.kind === "delivery") await markDeadLettered(db, body.deliveryId);
      if (body?.kind === "event") {
        console.error(JSON.stringify({ error: "event fan-out dead-lettered; back to the outbox", eventId: body.event.id }));
        await db.update(events).set({ dispatchedAt: null }).where(eq(events.id, body.event.id));
      }
      message.ack();
    } catch (err) {
      console.error(JSON.stringify({ error: "dead letter not recorded", id: message.id, cause: String(err) }));
      message.retry();
    }
  }
}
