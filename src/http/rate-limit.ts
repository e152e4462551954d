import type { Context } from "hono";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";

const WINDOW_MS = 60_000;

/** A limit from a wrangler.toml var; a missing or mistyped var falls back instead of blocking everyone. */
export function configuredLimit(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** Requests without a valid key are limited per client address so that keys cannot be guessed at speed. */
export async function enforceAnonymousRateLimit(c: Context<AppEnv>): Promise<void> {
  const address = c.req.header("cf-connecting-ip") ?? "local";
  await enforceRateLimit(c, `ip:${address}`, configuredLimit(c.env.RATE_LIMIT_ANONYMOUS, 30));
}

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
