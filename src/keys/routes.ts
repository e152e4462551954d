import { createRoute, z } from "@hono/zod-openapi";
import { userScope } from "../http/auth";
import { createRouter, commonErrors, jsonBody, jsonResponse, notFoundError, security } from "../http/openapi";
import { TeamIdParam } from "../teams/schemas";
import * as schemas from "./schemas";
import * as service from "./service";

const tags = ["API keys"];

/** Team keys are managed with a user key under /team/{teamId}/keys (userTeamScope checks the role). */
export const keyRoutes = createRouter()
  .openapi(
    createRoute({
      method: "post",
      path: "/team/{teamId}/keys",
      tags,
      security,
      summary: "Create a publishable or secret key for the team (the key is shown once)",
      request: { params: TeamIdParam, body: jsonBody(schemas.KeyInput) },
      responses: { 201: jsonResponse(schemas.CreatedKey, "The new key"), ...commonErrors },
    }),
    async (c) => {
      const key = await service.createTeamKey(
        c.var.db,
        userScope(c).teamId,
        userScope(c).userId,
        c.req.valid("json"),
      );
      return c.json(key, 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/team/{teamId}/keys",
      tags,
      security,
      summary: "List the team's live keys (never the keys themselves)",
      request: { params: TeamIdParam },
      responses: { 200: jsonResponse(z.object({ keys: z.array(schemas.KeySummary) }), "Keys"), ...commonErrors },
    }),
    async (c) => c.json({ keys: await service.listTeamKeys(c.var.db, userScope(c).teamId) }, 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/team/{teamId}/keys/{keyId}",
      tags,
      security,
      summary: "Revoke a key",
      request: { params: schemas.KeyParams },
      responses: { 204: { description: "Revoked" }, ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      await service.revokeTeamKey(c.var.db, userScope(c).teamId, c.req.valid("param").keyId);
      return c.body(null, 204);
    },
  );
