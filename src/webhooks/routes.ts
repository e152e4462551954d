import { createRoute } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/context";
import { teamIdOf } from "../http/auth";
import { ApiError, badRequest } from "../http/errors";
import { commonErrors, conflictError, createRouter, jsonBody, jsonResponse, notFoundError, security } from "../http/openapi";
import * as schemas from "./schemas";
import * as service from "./service";

const tags = ["Webhooks"];
const unavailable = { 503: { description: "The webhook host's address could not be checked right now" } };

/**
 * This router is mounted at /team (team keys: /team/webhook) and at /team/:teamId (user keys:
 * /team/{teamId}/webhook), see src/app.ts. Handlers take the team from teamIdOf(c).
 */
export const webhookRoutes = createRouter();

// Runs before validation, so a user key on /team/webhook gets the pointer, not a body error.
// Only on /webhook paths: a use("*") here would be mounted as /team/* and /team/:teamId/* and
// run in front of the team-management routes too (it broke GET/POST /team for user keys).
const webhookGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  // Under the /team/:teamId mount, "/team/webhook/webhook..." would read "webhook" as a team id.
  if (c.req.param("teamId" as never) === "webhook") {
    throw new ApiError(404, `No route for ${c.req.method} ${c.req.path}.`);
  }
  if (c.var.principal.keyType === "user" && !c.var.scopedTeam) {
    throw badRequest(`User secret keys name the team in the path: use ${c.req.path.replace(/^\/team/, "/team/{teamId}")}.`);
  }
  await next();
};
// "/webhook/*" also matches "/webhook" itself.
webhookRoutes.use("/webhook/*", webhookGuard);

webhookRoutes
  // Before /webhook/{webhookId}, which would otherwise take "events" for an id.
  .openapi(
    createRoute({
      method: "get",
      path: "/webhook/events",
      tags,
      security,
      summary: "The event catalogue: every kind a webhook can subscribe to",
      responses: { 200: jsonResponse(schemas.EventCatalogue, "Event kinds with descriptions"), ...commonErrors },
    }),
    (c) => c.json(service.eventCatalogue(), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/webhook",
      tags,
      security,
      summary: "List the team's webhooks (secrets are never returned)",
      responses: { 200: jsonResponse(schemas.WebhookList, "Webhooks, oldest first"), ...commonErrors },
    }),
    async (c) => c.json(await service.listWebhooks(c.var.db, teamIdOf(c)), 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/webhook",
      tags,
      security,
      summary: "Create a webhook; without a secret, a generated one is returned once",
      request: { body: jsonBody(schemas.WebhookInput) },
      responses: {
        201: jsonResponse(schemas.CreatedWebhook, "The webhook; `secret` only when it was generated"),
        ...commonErrors,
        ...conflictError,
        ...unavailable,
      },
    }),
    async (c) => c.json(await service.createWebhook(c.env, c.var.db, teamIdOf(c), c.req.valid("json")), 201),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/webhook/{webhookId}",
      tags,
      security,
      summary: "Get a webhook",
      request: { params: schemas.WebhookIdParam },
      responses: { 200: jsonResponse(schemas.Webhook, "The webhook"), ...commonErrors, ...notFoundError },
    }),
    async (c) => c.json(await service.getWebhook(c.var.db, teamIdOf(c), c.req.valid("param").webhookId), 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/webhook/{webhookId}",
      tags,
      security,
      summary: "Delete a webhook and its delivery log",
      request: { params: schemas.WebhookIdParam },
      responses: {
        200: jsonResponse(schemas.DeleteResult, "Deleted"),
        ...commonErrors,
        ...notFoundError,
      },
    }),
    async (c) => c.json(await service.deleteWebhook(c.var.db, teamIdOf(c), c.req.valid("param").webhookId), 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/webhook/{webhookId}",
      tags,
      security,
      summary: "Trigger a webhook by hand: sends the payload now and returns the receiver's answer",
      request: { params: schemas.WebhookIdParam, body: jsonBody(schemas.TriggerInput) },
      responses: {
        200: jsonResponse(schemas.TriggerResult, "What the receiver answered (success is false unless 2xx)"),
        ...commonErrors,
        ...notFoundError,
        ...unavailable,
      },
    }),
    async (c) => {
      const { webhookId } = c.req.valid("param");
      const { payload } = c.req.valid("json");
      return c.json(await service.triggerWebhook(c.env, c.var.db, teamIdOf(c), webhookId, payload), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/webhook/{webhookId}/deliveries",
      tags,
      security,
      summary: "The webhook's deliveries, newest first, each with every attempt",
      request: { params: schemas.WebhookIdParam, query: schemas.DeliveryQuery },
      responses: { 200: jsonResponse(schemas.DeliveryList, "Deliveries"), ...commonErrors, ...notFoundError },
    }),
    async (c) =>
      c.json(
        await service.listDeliveries(c.var.db, teamIdOf(c), c.req.valid("param").webhookId, c.req.valid("query")),
        200,
      ),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/webhook/{webhookId}/deliveries/{deliveryId}/redeliver",
      tags,
      security,
      summary: "Send a failed delivery again, now (same body and webhook-id)",
      request: { params: schemas.DeliveryParams },
      responses: {
        200: jsonResponse(schemas.RedeliveryResult, "What the receiver answered"),
        ...commonErrors,
        ...notFoundError,
        ...conflictError,
        ...unavailable,
      },
    }),
    async (c) => {
      const { webhookId, deliveryId } = c.req.valid("param");
      return c.json(await service.redeliver(c.env, c.var.db, teamIdOf(c), webhookId, deliveryId), 200);
    },
  );
