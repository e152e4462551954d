import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createApp } from "../../src/app";
import { teamIdOf } from "../../src/http/auth";
import type { AppEnv } from "../../src/http/context";
import { notFound } from "../../src/http/errors";
import { commonErrors, createRouter, jsonBody, jsonResponse, notFoundError, security } from "../../src/http/openapi";

export type Fetcher = (request: Request) => Promise<Response>;

/**
 * The production app factory around routers of the test's own (no debug route in the real
 * Worker), with the real bindings of the test environment.
 */
export function testApp(teamScopedRouters: OpenAPIHono<AppEnv>[]): Fetcher {
  const app = createApp({ teamScopedRouters });
  return async (request) => {
    const ctx = createExecutionContext();
    const res = await app.fetch(request, env, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  };
}

/**
 * A stand-in team-scoped resource with the shapes real routers have: two of the publishable
 * chat endpoints and a secret-only route with a validated body.
 */
export function probeRouter() {
  return createRouter()
    .openapi(
      createRoute({
        method: "post",
        path: "/chat",
        security,
        request: { body: jsonBody(z.object({ agentId: z.string().min(1) })) },
        responses: { 200: jsonResponse(z.object({ teamId: z.string(), agentId: z.string() }), "ok"), ...commonErrors },
      }),
      (c) => c.json({ teamId: teamIdOf(c), agentId: c.req.valid("json").agentId }, 200),
    )
    .openapi(
      createRoute({
        method: "get",
        path: "/chat/{chatId}",
        security,
        request: { params: z.object({ chatId: z.string() }) },
        responses: { 200: jsonResponse(z.object({ teamId: z.string() }), "ok"), ...commonErrors, ...notFoundError },
      }),
      (c) => {
        if (c.req.valid("param").chatId !== "known") throw notFound("Chat");
        return c.json({ teamId: teamIdOf(c) }, 200);
      },
    )
    .openapi(
      createRoute({
        method: "post",
        path: "/probe",
        security,
        request: { body: jsonBody(z.object({ name: z.string(), count: z.number().int() }).strict()) },
        responses: { 200: jsonResponse(z.object({ teamId: z.string() }), "ok"), ...commonErrors },
      }),
      (c) => c.json({ teamId: teamIdOf(c) }, 200),
    );
}

/** A team-scoped route with a bug in it. */
export function boomRouter() {
  return createRouter().openapi(
    createRoute({
      method: "get",
      path: "/probe/boom",
      security,
      responses: { 200: jsonResponse(z.object({}), "never"), ...commonErrors },
    }),
    () => {
      throw new Error("secret internals: SELECT * FROM api_keys at /src/db/client.ts:12");
    },
  );
}
