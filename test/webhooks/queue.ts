import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import type { EventType, EventsQueueMessage, PlatformEvent } from "../../src/events/emit";
import { newId, nowIso } from "../../src/lib/ids";

export const EVENTS_QUEUE = "agent-platform-events";
export const EVENTS_DLQ = "agent-platform-events-dlq";

/**
 * Runs the Worker's queue handler on one message, as the Queues runtime would on its `attempts`-th
 * delivery, and returns the ack/retry verdict for it.
 */
export async function runQueue(queue: string, body: EventsQueueMessage | unknown, attempts = 1, workerEnv: Env = env) {
  const id = newId("msg");
  const batch = createMessageBatch(queue, [{ id, timestamp: new Date(), attempts, body }]);
  // getQueueResult records that a message was retried, not its delay: note the options on the way.
  let retryOptions: QueueRetryOptions | undefined;
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    message.retry = (options?: QueueRetryOptions) => {
      retryOptions = options;
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await worker.queue(batch, workerEnv, ctx);
  const result = await getQueueResult(batch, ctx);
  return {
    acked: result.explicitAcks.includes(id),
    retried: result.retryMessages.some((m) => m.msgId === id),
    delaySeconds: retryOptions?.delaySeconds,
    result,
  };
}

/** A committed event as commitWithEvents leaves it in the outbox (already dispatched). */
export async function storeEvent(
  teamId: string,
  type: EventType = "message.created",
  data: Record<string, unknown> = { id: newId("msg"), content: "hello" },
  dispatchedAt: string | null = nowIso(),
  createdAt = nowIso(),
): Promise<PlatformEvent> {
  const event: PlatformEvent = { id: newId("evt"), type, createdAt, teamId, data };
  await env.DB.prepare("INSERT INTO events (id, team_id, type, data, created_at, dispatched_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(event.id, teamId, type, JSON.stringify(data), createdAt, dispatchedAt)
    .run();
  return event;
}

export type DeliveryRow = { id: string; webhook_id: string; state: string; attempts: number; last_status: number | null; last_error: string | null };

export async function deliveriesOf(eventId: string): Promise<DeliveryRow[]> {
  const { results } = await env.DB.prepare(
    "SELECT id, webhook_id, state, attempts, last_status, last_error FROM webhook_deliveries WHERE event_id = ? ORDER BY webhook_id",
  )
    .bind(eventId)
    .all<DeliveryRow>();
  return results;
}

export async function attemptsOf(deliveryId: string) {
  const { results } = await env.DB.prepare(
    "SELECT attempt, trigger, status_code, error FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY attempt",
  )
    .bind(deliveryId)
    .all<{ attempt: number; trigger: string; status_code: number | null; error: string | null }>();
  return results;
}
