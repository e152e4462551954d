import { env, exports } from "cloudflare:workers";
import { generateKey } from "../../src/keys/key-format";
import { newId, nowIso } from "../../src/lib/ids";
import type { KeyType, Role } from "../../src/db/schema";

export const BASE = "http://api.test";

/** Calls the Worker through its real fetch handler. */
export async function call(
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers["x-api-key"] = opts.key;
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
  }
  return exports.default.fetch(new Request(BASE + path, { method, headers, body }));
}

export async function json<T = Record<string, any>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** A key row as the service would write it; returns its id and the plaintext. */
export async function insertKey(type: KeyType, owner: { teamId?: string; userId?: string }) {
  const key = await generateKey(type);
  const id = newId("key");
  await env.DB.prepare(
    "INSERT INTO api_keys (id, type, hash, prefix, team_id, user_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(id, type, key.hash, key.prefix, owner.teamId ?? null, owner.userId ?? null, nowIso())
    .run();
  return { id, key: key.plaintext };
}

/** Emails are stored lower-case, as the service and scripts/issue-user-key.mjs write them. */
export async function createUser(email = `${newId("u")}@example.com`.toLowerCase()) {
  const id = newId("user");
  await env.DB.prepare("INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)").bind(id, email, nowIso()).run();
  const userKey = await insertKey("user", { userId: id });
  return { id, email, userKey: userKey.key, userKeyId: userKey.id };
}

export async function createTeam(name = "Team") {
  const id = newId("team");
  const now = nowIso();
  await env.DB.prepare("INSERT INTO teams (id, name, metadata, created_at, updated_at) VALUES (?, ?, '{}', ?, ?)")
    .bind(id, name, now, now)
    .run();
  const pk = await insertKey("publishable", { teamId: id });
  const sk = await insertKey("secret", { teamId: id });
  return { id, pk: pk.key, sk: sk.key, pkId: pk.id, skId: sk.id };
}

export async function addMember(teamId: string, userId: string, role: Role) {
  await env.DB.prepare("INSERT INTO memberships (team_id, user_id, role, created_at) VALUES (?, ?, ?, ?)")
    .bind(teamId, userId, role, nowIso())
    .run();
}

/** Two teams and four users around team A: owner, admin, member, outsider. */
export async function createWorld() {
  const teamA = await createTeam("Team A");
  const teamB = await createTeam("Team B");
  const owner = await createUser();
  const admin = await createUser();
  const member = await createUser();
  const outsider = await createUser();
  await addMember(teamA.id, owner.id, "OWNER");
  await addMember(teamA.id, admin.id, "ADMIN");
  await addMember(teamA.id, member.id, "MEMBER");
  await addMember(teamB.id, outsider.id, "OWNER");
  const revoked = await insertKey("secret", { teamId: teamA.id });
  await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").bind(nowIso(), revoked.id).run();
  return { teamA, teamB, owner, admin, member, outsider, revokedKey: revoked.key };
}
