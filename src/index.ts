import { createApp } from "./app";
import { createDb } from "./db/client";
import { sweepOutbox } from "./events/emit";
import { pruneHistory } from "./events/retention";
import { sweepStuckIngestions } from "./knowledge/ingest";
import { handleQueue } from "./queues";

export { RateLimiter } from "./ratelimit/rate-limiter";
export { ChatSession } from "./chats/chat-session";

const app = createApp();

/**
 * Periodic sweeps, run by the cron trigger of wrangler.toml ("* * * * *"). Each is independent:
 * one failing does not stop the others. Add a sweep by adding a line.
 */
const sweeps: Record<string, (env: Env) => Promise<unknown>> = {
  // Events committed but never handed to the queue (a crash between commit and dispatch).
  outbox: (env) => sweepOutbox(env, createDb(env.DB)),
  // Knowledge files still "processing" long after their ingestion started become "failed".
  ingest: (env) => sweepStuckIngestions(env),
  // Finished events and webhook deliveries older than HISTORY_RETENTION_DAYS.
  history: (env) => pruneHistory(createDb(env.DB)),
};

export default {
  fetch: app.fetch,
  queue: handleQueue,
  async scheduled(_controller, env) {
    const names = Object.keys(sweeps);
    const results = await Promise.allSettled(names.map((name) => sweeps[name]!(env)));
    const failed = names.filter((_, i) => results[i]?.status === "rejected");
    results.forEach((r, i) => {
      if (r.status === "rejected") console.error(JSON.stringify({ error: "sweep failed", sweep: names[i], cause: String(r.reason) }));
    });
    // Fail the invocation too, so the cron run shows as an error in the dashboard.
    if (failed.length) throw new Error(`sweeps failed: ${failed.join(", ")}`);
  },
} satisfies ExportedHandler<Env>;
