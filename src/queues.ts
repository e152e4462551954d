/**
 * Queue consumers, by queue. Each handler acks or retries every message on its own, so one
 * failure never re-sends the others.
 */
export async function handleQueue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
  switch (batch.queue) {
    default:
      // A queue without a consumer here is a configuration error: retry so nothing is lost.
      console.error(JSON.stringify({ error: "no consumer for queue", queue: batch.queue }));
      batch.retryAll();
  }
  void env;
  void ctx;
}
