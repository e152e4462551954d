import { and, desc, eq, isNull } from "drizzle-orm";
import type { Database } from "../db/client";
import { apiKeys } from "../db/schema";
import { badRequest, notFound } from "../http/errors";
import { newId, nowIso } from "../lib/ids";
import { generateKey } from "./key-format";
import { forgetKey } from "./lookup";

const summaryColumns = {
  id: apiKeys.id,
  type: apiKeys.type,
  name: apiKeys.name,
  prefix: apiKeys.prefix,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  expiresAt: apiKeys.expiresAt,
};

type TeamKeyType = "publishable" | "secret";

export async function createTeamKey(
  db: Database,
  teamId: string,
  createdBy: string,
  input: { type: TeamKeyType; name?: string; expiresAt?: string },
) {
  if (input.expiresAt && new Date(input.expiresAt).getTime() <= Date.now()) {
    throw badRequest("Invalid body: expiresAt: must be in the future", {
      fields: [{ field: "expiresAt", message: "must be in the future" }],
    });
  }
  const key = await generateKey(input.type);
  const row = {
    id: newId("key"),
    type: input.type,
    name: input.name ?? null,
    hash: key.hash,
    prefix: key.prefix,
    teamId,
    createdBy,
    createdAt: nowIso(),
    expiresAt: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
  };
  await db.insert(apiKeys).values(row);
  return {
    id: row.id,
    type: input.type,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.createdAt,
    lastUsedAt: null,
    expiresAt: row.expiresAt,
    key: key.plaintext,
  };
}

/** Live team keys (revoked ones are gone from the listing), newest first. */
export async function listTeamKeys(db: Database, teamId: string) {
  const rows = await db
    .select(summaryColumns)
    .from(apiKeys)
    .where(and(eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt));
  return rows.map((r) => ({ ...r, type: r.type as TeamKeyType }));
}

export async function revokeTeamKey(db: Database, teamId: string, keyId: string) {
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: nowIso() })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (!revoked.length) throw notFound("API key");
  forgetKey(keyId);
}
