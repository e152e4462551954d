import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../db/client";
import { apiKeys, type KeyType } from "../db/schema";
import { sha256Hex } from "../lib/crypto";
import { nowIso } from "../lib/ids";
import { keyTypeOf } from "./key-format";

/** Who is calling: resolved from the x-api-key header. */
export type Principal = {
  keyId: string;
  keyType: KeyType;
  /** The key's team for team keys; null for user keys (they name the team in the path). */
  teamId: string | null;
  /** The key's user for user keys; null for team keys. */
  userId: string | null;
};

type CacheEntry = { principal: Principal; expiresAtMs: number; keyExpiresAt: string | null };

/**
 * Valid keys are cached in the isolate for KEY_CACHE_TTL_MS so that authenticated requests
 * do not pay a D1 round trip each. A revoked key therefore stops working within this bound
 * everywhere (immediately in the isolate that revoked it). Stated in the README.
 */
export const KEY_CACHE_TTL_MS = 5_000;
const cache = new Map<string, CacheEntry>();
const MAX_CACHE_ENTRIES = 10_000;
/** lastUsedAt is written at most this often per key, off the request path. */
const LAST_USED_RESOLUTION_MS = 60_000;
const lastUsedWrites = new Map<string, number>();

export async function resolveKey(
  db: Database,
  plaintext: string,
  waitUntil: (p: Promise<unknown>) => void,
): Promise<Principal | null> {
  if (!keyTypeOf(plaintext)) return null;
  const hash = await sha256Hex(plaintext);
  const now = Date.now();
  const cached = cache.get(hash);
  if (cached && cached.expiresAtMs > now) {
    if (cached.keyExpiresAt && cached.keyExpiresAt <= nowIso()) return null;
    return cached.principal;
  }

  const row = await db
    .select({
      id: apiKeys.id,
      type: apiKeys.type,
      teamId: apiKeys.teamId,
      userId: apiKeys.userId,
      expiresAt: apiKeys.expiresAt,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt)))
    .get();
  if (!row || (row.expiresAt && row.expiresAt <= nowIso())) {
    cache.delete(hash);
    return null;
  }

  const principal: Principal = { keyId: row.id, keyType: row.type, teamId: row.teamId, userId: row.userId };
  if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
  cache.set(hash, { principal, expiresAtMs: now + KEY_CACHE_TTL_MS, keyExpiresAt: row.expiresAt });

  const lastWrite = lastUsedWrites.get(row.id) ?? 0;
  if (now - lastWrite > LAST_USED_RESOLUTION_MS) {
    // Bounded like the cache: forgetting only costs an extra lastUsedAt write.
    if (lastUsedWrites.size >= MAX_CACHE_ENTRIES) lastUsedWrites.clear();
    lastUsedWrites.set(row.id, now);
    waitUntil(db.update(apiKeys).set({ lastUsedAt: nowIso() }).where(eq(apiKeys.id, row.id)).run());
  }
  return principal;
}

/** Called on revocation so that this isolate forgets the key at once. */
export function forgetKey(keyId: string): void {
  for (const [hash, entry] of cache) if (entry.principal.keyId === keyId) cache.delete(hash);
}

/**
 * Whether the key with this id is still live (not revoked, not expired), read from D1. For what
 * outlives a request: a WebSocket checks its key again with this (src/chats/chat-session.ts).
 */
export async function keyIsLive(db: Database, keyId: string): Promise<boolean> {
  const row = await db
    .select({ expiresAt: apiKeys.expiresAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .get();
  return !!row && (!row.expiresAt || row.expiresAt > nowIso());
}
