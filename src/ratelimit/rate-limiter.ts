import { DurableObject } from "cloudflare:workers";

export type RateLimitDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the oldest counted request leaves the window (a slot frees up). */
  reset: number;
  /** Seconds to wait before a retry can succeed; 0 when allowed. */
  retryAfter: number;
};

/**
 * One instance per API key (or per client address for requests without a valid key).
 * A sliding log: the timestamps of the requests accepted in the last window. It is exact
 * (no burst at a window boundary) and small: at most `limit` entries.
 * The log lives in the object's SQLite storage so that it survives eviction; the in-memory
 * copy is only a mirror, loaded once under blockConcurrencyWhile.
 */
/** Expired rows are deleted from storage in batches: a DELETE per request would scan the table each time. */
const PRUNE_BATCH = 64;

export class RateLimiter extends DurableObject<Env> {
  private log: number[] = [];
  /** Rows still in storage whose requests already left the window (the log no longer has them). */
  private expiredInStorage = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS hits (ts INTEGER NOT NULL)");
      this.log = ctx.storage.sql
        .exec<{ ts: number }>("SELECT ts FROM hits ORDER BY ts")
        .toArray()
        .map((row) => row.ts);
    });
  }

  /**
   * Counts one request if the window has room. Synchronous storage: no request interleaves.
   * `now` exists for tests (a controlled clock); callers in the Worker leave it out.
   */
  hit(limit: number, windowMs: number, now: number = Date.now()): RateLimitDecision {
    const cutoff = now - windowMs;
    let expired = 0;
    while (expired < this.log.length && (this.log[expired] as number) <= cutoff) expired++;
    if (expired > 0) {
      this.log.splice(0, expired);
      // Stale rows are harmless: after a reload the same in-memory pruning drops them again.
      this.expiredInStorage += expired;
      if (this.expiredInStorage >= PRUNE_BATCH) {
        this.ctx.storage.sql.exec("DELETE FROM hits WHERE ts <= ?", cutoff);
        this.expiredInStorage = 0;
      }
    }

    const allowed = this.log.length < limit;
    if (allowed) {
      this.log.push(now);
      this.ctx.storage.sql.exec("INSERT INTO hits (ts) VALUES (?)", now);
    }
    const oldest = this.log[0] ?? now;
    const freesAt = oldest + windowMs;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - this.log.length),
      reset: Math.ceil(freesAt / 1000),
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((freesAt - now) / 1000)),
    };
  }
}
