import type { Context } from "hono";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";

const WINDOW_MS = 60_000;

/**
 * One hop to the RateLimiter Durable Object named after the caller; sets the
 * X-RateLimit-* headers on whatever response follows (errors included) and throws 429 when over.
 */
export async function enforceRateLimit(c: Context<AppEnv>, name: string, limit: number): Promise<void> {
  const stub = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(name));
  const decision = await stub.hit(limit, WINDOW_MS);
  c.header("X-RateLimit-Limit", String(decision.limit));
  c.header("X-RateLimit-Remaining", String(decision.remaining));
  c.header("X-RateLimit-Reset", String(decision.reset));
  if (!decision.allowed) {
    const wait = decision.retryAfter;
    throw new ApiError(
      429,
      `Rate limit exceeded: ${decision.limit} requests per minute. Retry in ${wait} second${wait === 1 ? "" : "s"}.`,
      { retryAfter: wait },
      { "Retry-After": String(wait) },
    );
  }
}
