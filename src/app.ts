import { createRoute, z } from "@hono/zod-openapi";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { createDb } from "./db/client";
import { authenticate, userTeamScope } from "./http/auth";
import type { AppEnv } from "./http/context";
import { DOCS_HTML } from "./http/docs";
import { ApiError, STATUS_NAMES } from "./http/errors";
import { createRouter, jsonResponse } from "./http/openapi";
import { keyRoutes } from "./keys/routes";
import { invitationRoutes, teamRoutes } from "./teams/routes";

/**
 * Routers of team-scoped resources (chat, agent, file, workflow, mcp, webhook). Each is served
 * at the root for team keys and under /team/{teamId} for user keys; handlers get the team from
 * teamIdOf(c). A new resource adds its router here and nowhere else.
 */
const teamScopedRouters: OpenAPIHono<AppEnv>[] = [];

export function createApp() {
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
      allowHeaders: ["x-api-key", "content-type", "accept", "idempotency-key"],
      allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
      exposeHeaders: ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "X-Request-Id"],
      maxAge: 86400,
    }),
  );
  app.use("*", (c, next) =>
    bodyLimit({
      maxSize: Number(c.env.MAX_BODY_BYTES),
      onError: () => {
        throw new ApiError(413, `The request body is larger than the limit of ${c.env.MAX_BODY_BYTES} bytes.`);
      },
    })(c, next),
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
  app.get("/openapi.json", (c) =>
    c.json(
      app.getOpenAPI31Document({
        openapi: "3.1.0",
        info: {
          title: "Agent Platform API",
          version: "1.0.0",
          description: "Build, run and manage AI agents. Every request carries an x-api-key header.",
        },
      }),
    ),
  );
  app.get("/docs", (c) => c.html(DOCS_HTML));
  app.route("/", invitationRoutes);

  // ---- everything below needs a key ----
  app.use("*", authenticate);
  app.use("/team/:teamId/*", userTeamScope);

  for (const router of teamScopedRouters) {
    app.route("/", router);
    app.route("/team/:teamId", router);
  }
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
      return c.json({ error: STATUS_NAMES[status] ?? "Error", message: err.message }, status);
    }
    console.error(JSON.stringify({ requestId: c.var.requestId, error: String(err), stack: (err as Error)?.stack }));
    return c.json({ error: "Internal Server Error", message: `Something went wrong. Request id: ${c.var.requestId}.` }, 500);
  });
  return app;
}
