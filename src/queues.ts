import { handleEventsBatch, handleEventsDeadLetters } from "./events/consumer";
import { handleIngestBatch, handleIngestDeadLetters } from "./knowledge/ingest";

/**
 * Queue consumers, by queue. Each handler acks or retries every message on its own, so one
 * failure never re-sends the others.
 */
export async function handleQueue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
  switch (batch.queue) {
    case "agent-platform-events":
      return handleEventsBatch(batch, env);
    case "agent-platform-events-dlq":
      return handleEventsDeadLetters(batch, env);
    case "agent-platform-ingest":
      return handleIngestBatch(batch, env, ctx);
    case "agent-platform-ingest-dlq":
      return handleIngestDeadLetters(batch, env, ctx);
    default:
      // A queue without a consumer here is a configuration error: retry so nothing is lost.
      console.error(JSON.stringify({ error: "no consumer for queue", queue: batch.queue }));
      batch.retryAll();
  }
  void env;
  void ctx;
}
