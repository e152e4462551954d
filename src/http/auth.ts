import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { KeyType, Role } from "../db/schema";
import type { Database } from "../db/client";
import { keyIsLive, resolveKey } from "../keys/lookup";
import { roleIn } from "../teams/roles";
import { isPublishableEndpoint, publishableForbiddenBody } from "./access";
import type { AppEnv } from "./context";
import { ApiError, InvalidKeyError, badRequest, forbidden } from "./errors";
import { configuredLimit, enforceAnonymousRateLimit, enforceRateLimit } from "./rate-limit";

/** Browsers cannot set headers on a WebSocket: /ws also accepts the key as ?apiKey=. */
function presentedKey(c: Context<AppEnv>): string | undefined {
  const header = c.req.header("x-api-key");
  if (header) return header.trim();
  if (c.req.header("upgrade")?.toLowerCase() === "websocket") return c.req.query("apiKey") ?? undefined;
  return undefined;
}

/**
 * The one auth path: x-api-key -> principal -> rate limit -> publishable gate.
 * Requests without a valid key are rate limited per client address before the 401,
 * so that keys cannot be guessed at speed.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const key = presentedKey(c);
  const principal = key ? await resolveKey(c.var.db, key, (p) => c.executionCtx.waitUntil(p)) : null;
  if (!principal) {
    await enforceAnonymousRateLimit(c);
    throw new InvalidKeyError();
  }
  c.set("principal", principal);

  const limit = {
    publishable: configuredLimit(c.env.RATE_LIMIT_PUBLISHABLE, 100),
    secret: configuredLimit(c.env.RATE_LIMIT_SECRET, 1000),
    user: configuredLimit(c.env.RATE_LIMIT_USER, 1000),
  }[principal.keyType];
  await enforceRateLimit(c, `key:${principal.keyId}`, limit);

  if (principal.keyType === "publishable" && !isPublishableEndpoint(c.req.method, c.req.path)) {
    throw new ApiError(403, publishableForbiddenBody().message, publishableForbiddenBody());
  }
  await next();
});

/** Team-management routes (POST/GET /team, /team/{teamId}/keys, /members...): user secret keys only. */
export const requireUserKey = createMiddleware<AppEnv>(async (c, next) => {
  if (c.var.principal.keyType !== "user") {
    throw forbidden("Team management requires a user secret key (usk_live_).");
  }
  await next();
});

const MANAGING_ROLES: readonly Role[] = ["OWNER", "ADMIN"];

/** SPEC.md puts the team-key webhook routes at /team/webhook: that segment is not a team id. */
function isReservedTeamSegment(segment: string | undefined): boolean {
  return segment === "webhook";
}

/**
 * /team/:teamId/...: a user key acting on one of its teams. The user must be OWNER or ADMIN
 * there; anyone else gets 403 (the same answer for a team that does not exist, so team ids
 * cannot be probed).
 */
export const userTeamScope = createMiddleware<AppEnv>(async (c, next) => {
  const teamId = c.req.param("teamId");
  if (!teamId || isReservedTeamSegment(teamId)) return next();
  const { principal } = c.var;
  if (principal.keyType !== "user" || !principal.userId) {
    throw forbidden("Routes under /team/{teamId}/ require a user secret key (usk_live_).");
  }
  const role = await roleIn(c.var.db, teamId, principal.userId);
  if (!role || !MANAGING_ROLES.includes(role)) {
    throw forbidden("Your user key has no OWNER or ADMIN role in this team.");
  }
  c.set("scopedTeam", { teamId, role });
  await next();
});

/**
 * Team-scoped routes under /team/:teamId (app.ts puts this in front of each of them): userTeamScope
 * lets the reserved segment through (/team/webhook belongs to the webhook routes), so a request that
 * got here without a scoped team is /team/webhook/<route>: no route, not a second door to the key's
 * own team. Before validation, so that its answer does not depend on the body.
 */
export const requireScopedTeam = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.var.scopedTeam) throw new ApiError(404, `No route for ${c.req.method} ${c.req.path}.`);
  await next();
});

function userKeyNeedsTeamPath(c: Context<AppEnv>): ApiError {
  return badRequest(`User secret keys name the team in the path: use /team/{teamId}${c.req.path}.`);
}

/**
 * Bare team-scoped routes (app.ts puts this in front of each of them): a user key has no team of
 * its own, so it gets the 400 that points at /team/{teamId}/... before validation or a handler runs.
 */
export const requireTeamKey = createMiddleware<AppEnv>(async (c, next) => {
  if (c.var.principal.keyType === "user") throw userKeyNeedsTeamPath(c);
  await next();
});

/**
 * The team a team-scoped handler acts on: the path's team for user keys (/team/{teamId}/...),
 * the key's own team for team keys. Every query of a team-scoped route filters by this id.
 */
export function teamIdOf(c: Context<AppEnv>): string {
  const scoped = c.var.scopedTeam;
  if (scoped) return scoped.teamId;
  const { principal } = c.var;
  if (principal.keyType === "user" || !principal.teamId) throw userKeyNeedsTeamPath(c);
  return principal.teamId;
}

/** The key behind a connection that outlives its request (a WebSocket), as stored with it. */
export type KeyHolder = { keyId: string; keyType: KeyType; keyUserId: string | null };

/**
 * Whether a key that opened a long-lived connection may still act on `teamId`: the key is neither
 * revoked nor expired and, for a user key, its user is still OWNER or ADMIN of the team. The request
 * path checks this on every request; a WebSocket has only its opening request, so its host asks
 * again (README: a revoked key stops working within 5 seconds everywhere).
 */
export async function keyStillAuthorized(db: Database, holder: KeyHolder, teamId: string): Promise<boolean> {
  if (!(await keyIsLive(db, holder.keyId))) return false;
  if (holder.keyType !== "user") return true;
  if (!holder.keyUserId) return false;
  const role = await roleIn(db, teamId, holder.keyUserId);
  return !!role && MANAGING_ROLES.includes(role);
}

/** The team, role and user of a /team/{teamId}/... request that passed userTeamScope. */
export function userScope(c: Context<AppEnv>): { teamId: string; role: Role; userId: string } {
  const scope = c.var.scopedTeam;
  const userId = c.var.principal.userId;
  // /team/webhook/... is not a team (see userTeamScope): a team route matching it is no route.
  if (!scope && isReservedTeamSegment(c.req.param("teamId"))) {
    throw new ApiError(404, `No route for ${c.req.method} ${c.req.path}.`);
  }
  // Unreachable when the route is mounted under /team/:teamId (app.ts); a bug otherwise.
  if (!scope || !userId) throw new Error("userScope used on a route outside /team/:teamId");
  return { teamId: scope.teamId, role: scope.role, userId };
}

/** The user behind a user key (team-management routes run behind requireUserKey). */
export function userIdOf(c: Context<AppEnv>): string {
  const userId = c.var.principal.userId;
  if (!userId) throw forbidden("Team management requires a user secret key (usk_live_).");
  return userId;
}
