import { createRoute, z } from "@hono/zod-openapi";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { createDb } from "./db/client";
import { authenticate, requireScopedTeam, requireTeamKey, userTeamScope } from "./http/auth";
import type { AppEnv } from "./http/context";
import { DOCS_HTML } from "./http/docs";
import { ApiError, STATUS_NAMES } from "./http/errors";
import { createRouter, jsonResponse } from "./http/openapi";
import { configuredLimit, enforceAnonymousRateLimit } from "./http/rate-limit";
import { agentRoutes } from "./agents/routes";
import { chatRoutes } from "./chats/routes";
import { fileRoutes } from "./files/routes";
import { keyRoutes } from "./keys/routes";
import { webhookRoutes } from "./webhooks/routes";
import { invitationRoutes, teamRoutes } from "./teams/routes";

/** Path prefixes of the routes served without a key that accept a body (see the body limit). */
const PUBLIC_BODY_PATHS = ["/invitations/"];

/**
 * Routers of team-scoped resources (chat, agent, file, workflow, mcp, webhook). Each is served
 * at the root for team keys and under /team/{teamId} for user keys; handlers get the team from
 * teamIdOf(c). A new resource adds its router here and nowhere else.
 */
const teamScopedRouters: OpenAPIHono<AppEnv>[] = [agentRoutes, chatRoutes, fileRoutes];

export type AppOptions = {
  /** Replaces the team-scoped routers: tests build an app around a router of their own. */
  teamScopedRouters?: OpenAPIHono<AppEnv>[];
};

export function createApp(options: AppOptions = {}) {
  const scopedRouters = options.teamScopedRouters ?? teamScopedRouters;
  const app = createRouter();

  app.use("*", async (c, next) => {
    const requestId = c.req.header("cf-ray") ?? crypto.randomUUID();
    c.set("requestId", requestId);
    c.set("db", createDb(c.env.DB));
    c.header("X-Request-Id", requestId);
    await next();
  });
  // Keys travel in a header, never in cookies, so any origin may call the API; secret and user
  // keys must still stay on servers (README).
  app.use(
    "*",
    cors({
      origin: "*",
      allowHeaders: ["x-api-key", "content-type", "accept", "idempotency-key", "x-user-id"],
      allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
      exposeHeaders: ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "X-Request-Id"],
      maxAge: 86400,
    }),
  );
  // A request with a key has its body limited after the key check (a bad key's body is never
  // read, and the 413 carries the rate-limit headers). Here, before the public routes: requests
  // without a key, and any request to a public route that takes a body (a key header must not
  // skip the limit there). A new public route with a body adds its prefix to PUBLIC_BODY_PATHS.
  const limitBody: MiddlewareHandler<AppEnv> = (c, next) => {
    const maxSize = configuredLimit(c.env.MAX_BODY_BYTES, 1_048_576);
    return bodyLimit({
      maxSize,
      onError: () => {
        throw new ApiError(413, `The request body is larger than the limit of ${maxSize} bytes.`);
      },
    })(c, next);
  };
  app.use("*", (c, next) =>
    !c.req.header("x-api-key") || PUBLIC_BODY_PATHS.some((p) => c.req.path.startsWith(p)) ? limitBody(c, next) : next(),
  );

  // ---- public: no key ----
  app.openapi(
    createRoute({
      method: "get",
      path: "/health",
      tags: ["Service"],
      summary: "Liveness probe (no key)",
      responses: { 200: jsonResponse(z.object({ status: z.literal("ok") }), "The Worker is up") },
    }),
    (c) => c.json({ status: "ok" as const }, 200),
  );
  // Built once per isolate: the routes do not change at run time.
  let openApiDocument: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.get("/openapi.json", (c) => {
    openApiDocument ??= withTeamIdParameter(
      app.getOpenAPI31Document({
        openapi: "3.1.0",
        info: {
          title: "Agent Platform API",
          version: "1.0.0",
          description: "Build, run and manage AI agents. Every request carries an x-api-key header.",
        },
      }),
    );
    return c.json(openApiDocument);
  });
  app.get("/docs", (c) => c.html(DOCS_HTML));
  // The invitation token is the credential here: limited per address like requests without a key.
  app.use("/invitations/*", async (c, next) => {
    await enforceAnonymousRateLimit(c);
    await next();
  });
  app.route("/", invitationRoutes);

  // ---- everything below needs a key ----
  app.use("*", authenticate);
  app.use("*", (c, next) => (c.req.header("x-api-key") ? limitBody(c, next) : next()));
  app.use("/team/:teamId/*", userTeamScope);

  for (const router of scopedRouters) {
    // At the root only team keys act (a user key gets the 400 naming /team/{teamId}/), checked
    // before the route's own validation so that a user key never sees a misleading 400.
    for (const { method, path } of router.routes) {
      if (method === "ALL") continue;
      app.on(method, path, requireTeamKey);
      app.on(method, `/team/:teamId${path}`, requireScopedTeam);
    }
    app.route("/", router);
    app.route("/team/:teamId", router);
  }
  // SPEC.md: /team/webhook for team keys, /team/{teamId}/webhook for user keys. Before teamRoutes,
  // whose GET /team/{teamId} would otherwise take GET /team/webhook.
  app.route("/team", webhookRoutes);
  app.route("/team/:teamId", webhookRoutes);
  app.route("/", teamRoutes);
  app.route("/", keyRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "pk_live_ (publishable), sk_live_ (team secret) or usk_live_ (user secret)",
  });

  app.notFound((c) => c.json({ error: "Not Found", message: `No route for ${c.req.method} ${c.req.path}.` }, 404));
  app.onError((err, c) => {
    if (err instanceof ApiError) {
      for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
      return c.json(err.body(), err.status);
    }
    if (err instanceof HTTPException) {
      // Raised by Hono's validators: malformed JSON (400), wrong content type (415).
      const status = err.status;
      const message =
        status === 415 ? "Send the request body as JSON with the header Content-Type: application/json." : err.message;
      return c.json({ error: STATUS_NAMES[status] ?? "Error", message }, status);
    }
    console.error(JSON.stringify({ requestId: c.var.requestId, error: String(err), stack: (err as Error)?.stack }));
    return c.json({ error: "Internal Server Error", message: `Something went wrong. Request id: ${c.var.requestId}.` }, 500);
  });
  return app;
}

type OpenApiDocument = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;

/**
 * Routers mounted under /team/:teamId declare only their own parameters; the prefix's teamId
 * is added here so that every /team/{teamId}/... operation documents it.
 */
function withTeamIdParameter(doc: OpenApiDocument): OpenApiDocument {
  const teamId = { name: "teamId", in: "path" as const, required: true, schema: { type: "string" as const } };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith("/team/{teamId}") || !item) continue;
    for (const method of ["get", "put", "post", "delete", "patch"] as const) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = operation.parameters ?? [];
      const declared = parameters.some((p) => "name" in p && p.name === "teamId" && p.in === "path");
      if (!declared) operation.parameters = [teamId, ...parameters];
    }
  }
  return doc;
}
