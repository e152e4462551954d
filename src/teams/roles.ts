import { and, eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { memberships, type Role } from "../db/schema";
import { KEY_CACHE_TTL_MS } from "../keys/lookup";

type Entry = { role: Role | null; expiresAtMs: number };

/**
 * A user's role in a team, cached in the isolate like API keys (same bound, KEY_CACHE_TTL_MS):
 * requests under /team/{teamId}/ then cost no extra D1 round trip. A role change or removal is
 * seen at once in the isolate that made it and within the bound everywhere else.
 */
const cache = new Map<string, Entry>();
const MAX_ENTRIES = 10_000;
const cacheKey = (teamId: string, userId: string) => `${teamId}\u0000${userId}`;

export async function roleIn(db: Database, teamId: string, userId: string): Promise<Role | null> {
  const key = cacheKey(teamId, userId);
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.expiresAtMs > now) return hit.role;
  const row = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.teamId, teamId), eq(memberships.userId, userId)))
    .get();
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(key, { role: row?.role ?? null, expiresAtMs: now + KEY_CACHE_TTL_MS });
  return row?.role ?? null;
}

/** Called after a membership changes so that this isolate stops using the old role at once. */
export function forgetRole(teamId: string, userId: string): void {
  cache.delete(cacheKey(teamId, userId));
}
