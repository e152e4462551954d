/**
 * The access class of every route in GET /openapi.json. test/access-matrix.test.ts reads this
 * table, checks that its keys are exactly the routes of the document (a route without an entry
 * fails), and calls every route with every kind of caller.
 *
 * HOW TO ADD AN ENTRY (when you add a route):
 * - Keys are "METHOD /path" exactly as /openapi.json writes them: upper-case method, path
 *   parameters in braces ("GET /agent/{id}").
 * - A route of a router in `teamScopedRouters` (src/app.ts) is served twice, at the root and
 *   under /team/{teamId}: write it once with `scoped("GET /agent/{id}")`, which adds both keys.
 *   Use `scoped(route, "chat")` only for the four endpoints publishable keys may call.
 * - Anything else: write the key yourself with its class (e.g. the webhook routes, whose bare
 *   path already is /team/webhook: "GET /team/webhook": "team" and
 *   "GET /team/{teamId}/webhook": "teamPath").
 *
 * In the matrix, {teamId} is team A (of whom the caller is or is not OWNER/ADMIN), every other
 * path parameter is an id that does not exist (so a route that passes auth answers 404 or 400,
 * never touching real records), and POST/PUT/PATCH send `{}`.
 */
export type Access =
  /** No key needed: every caller passes, whatever key it sends. */
  | "public"
  /** Bare team-scoped route open to publishable keys (SPEC.md: the four chat endpoints). */
  | "chat"
  /** Bare team-scoped route: team secret key passes; pk 403 (SPEC body); usk 400 naming /team/{teamId}/. */
  | "team"
  /** User keys only, no team in the path (POST/GET /team): every usk passes; sk and pk 403. */
  | "user"
  /** Under /team/{teamId}: usk OWNER/ADMIN of that team pass; MEMBER, outsider, sk (any team), pk 403. */
  | "teamPath";

/** A team-scoped route: the bare route for team keys plus its /team/{teamId} copy for user keys. */
export function scoped(route: string, bare: "team" | "chat" = "team"): Record<string, Access> {
  const [method, path] = route.split(" ");
  return { [route]: bare, [`${method} /team/{teamId}${path}`]: "teamPath" };
}

/** A webhook route: /team{path} for team keys, /team/{teamId}{path} for user keys. */
function webhookRoute(route: string): Record<string, Access> {
  const [method, path] = route.split(" ");
  return { [`${method} /team${path}`]: "team", [`${method} /team/{teamId}${path}`]: "teamPath" };
}

export const ROUTES: Record<string, Access> = {
  // ---- service (no key) ----
  "GET /health": "public",
  // The invitation token is the credential.
  "POST /invitations/accept": "public",

  // ---- team management (user keys) ----
  "POST /team": "user",
  "GET /team": "user",
  "GET /team/{teamId}": "teamPath",
  "PUT /team/{teamId}": "teamPath",
  "GET /team/{teamId}/members": "teamPath",
  "PUT /team/{teamId}/members/{userId}": "teamPath",
  "DELETE /team/{teamId}/members/{userId}": "teamPath",
  "POST /team/{teamId}/invitations": "teamPath",
  "GET /team/{teamId}/invitations": "teamPath",
  "DELETE /team/{teamId}/invitations/{invitationId}": "teamPath",
  "POST /team/{teamId}/keys": "teamPath",
  "GET /team/{teamId}/keys": "teamPath",
  "DELETE /team/{teamId}/keys/{keyId}": "teamPath",

  // ---- team-scoped resources (add yours below with scoped(...)) ----
  // chat (src/chats/routes.ts): the four SPEC.md endpoints and the two sockets are open to pk.
  ...scoped("POST /chat", "chat"),
  ...scoped("GET /chat"),
  ...scoped("GET /chat/{chatId}", "chat"),
  ...scoped("PUT /chat/{chatId}"),
  ...scoped("DELETE /chat/{chatId}"),
  ...scoped("POST /chat/{chatId}/message", "chat"),
  ...scoped("GET /chat/{chatId}/message", "chat"),
  ...scoped("GET /chat/{chatId}/ws", "chat"),
  ...scoped("GET /ws", "chat"),

  // agents (src/agents/routes.ts): team secret keys, and user keys under /team/{teamId}.
  ...scoped("POST /agent"),
  ...scoped("GET /agent"),
  ...scoped("GET /agents"),
  ...scoped("GET /agent/{id}"),
  ...scoped("PUT /agent/{id}"),
  ...scoped("DELETE /agent/{id}"),
  ...scoped("PUT /agent/{id}/rollback"),
  ...scoped("GET /agent/{id}/versions"),
  ...scoped("GET /agent/{id}/versions/{n}"),

  // knowledge files (src/files/routes.ts): team secret keys, and user keys under /team/{teamId}.
  ...scoped("POST /upload-url"),
  ...scoped("POST /confirm-upload"),
  ...scoped("GET /file"),
  ...scoped("PUT /file"),
  ...scoped("DELETE /file"),
  ...scoped("GET /file/presigned-url"),
  ...scoped("POST /file/reindex"),
  ...scoped("GET /file/search"),

  // webhooks (src/webhooks/routes.ts): SPEC.md puts them at /team/webhook for team keys and
  // /team/{teamId}/webhook for user keys, so scoped() (which prefixes the bare path) does not fit.
  ...webhookRoute("GET /webhook"),
  ...webhookRoute("POST /webhook"),
  ...webhookRoute("GET /webhook/events"),
  ...webhookRoute("GET /webhook/{webhookId}"),
  ...webhookRoute("POST /webhook/{webhookId}"),
  ...webhookRoute("DELETE /webhook/{webhookId}"),
  ...webhookRoute("GET /webhook/{webhookId}/deliveries"),
  ...webhookRoute("POST /webhook/{webhookId}/deliveries/{deliveryId}/redeliver"),
};
